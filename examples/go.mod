module github.com/distlock/lock/examples

go 1.26.0

require (
	github.com/distlock/lock v0.0.0
	github.com/distlock/lock/drivers/goredis v0.0.0
	github.com/distlock/lock/drivers/mongodb v0.0.0
	github.com/distlock/lock/drivers/postgres v0.0.0
	github.com/distlock/lock/drivers/redigo v0.0.0
)

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/distlock/lock/internal/pgtable v0.0.0 // indirect
	github.com/gomodule/redigo v1.9.3 // indirect
	github.com/jackc/pgpassfile v1.0.0 // indirect
	github.com/jackc/pgservicefile v0.0.0-20240606120523-5a60cdf6a761 // indirect
	github.com/jackc/pgx/v5 v5.12.0 // indirect
	github.com/jackc/puddle/v2 v2.2.3 // indirect
	github.com/klauspost/compress v1.20.3 // indirect
	github.com/redis/go-redis/v9 v9.23.0 // indirect
	github.com/xdg-go/scram v1.4.0 // indirect
	github.com/xdg-go/stringprep v1.0.4 // indirect
	github.com/youmark/pkcs8 v0.0.0-20240726163527-a2c0da244d78 // indirect
	go.mongodb.org/mongo-driver/v2 v2.10.0 // indirect
	go.uber.org/atomic v1.12.0 // indirect
	go.uber.org/goleak v1.3.0 // indirect
	golang.org/x/crypto v0.54.0 // indirect
	golang.org/x/sync v0.22.0 // indirect
	golang.org/x/sys v0.48.0 // indirect
	golang.org/x/text v0.41.0 // indirect
)

replace (
	github.com/distlock/lock => ..
	github.com/distlock/lock/drivers/goredis => ../drivers/goredis
	github.com/distlock/lock/drivers/mongodb => ../drivers/mongodb
	github.com/distlock/lock/drivers/postgres => ../drivers/postgres
	github.com/distlock/lock/drivers/redigo => ../drivers/redigo
	github.com/distlock/lock/internal/pgtable => ../internal/pgtable
)
