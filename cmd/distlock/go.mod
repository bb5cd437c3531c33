module github.com/distlock/lock/cmd/distlock

go 1.26.0

require (
	github.com/distlock/lock v0.0.0
	github.com/distlock/lock/drivers/goredis v0.0.0
	github.com/distlock/lock/drivers/mongodb v0.0.0
	github.com/distlock/lock/drivers/mysql v0.0.0
	github.com/distlock/lock/drivers/nats v0.0.0
	github.com/distlock/lock/drivers/postgres v0.0.0
	github.com/distlock/lock/drivers/redigo v0.0.0
	github.com/distlock/lock/drivers/rueidis v0.0.0
	github.com/distlock/lock/drivers/valkey v0.0.0
	github.com/jackc/pgx/v5 v5.12.0
	github.com/redis/go-redis/v9 v9.23.0
	go.mongodb.org/mongo-driver/v2 v2.10.0
)

require (
	filippo.io/edwards25519 v1.2.0 // indirect
	github.com/coreos/go-semver v0.3.1 // indirect
	github.com/coreos/go-systemd/v22 v22.5.0 // indirect
	github.com/go-sql-driver/mysql v1.10.2 // indirect
	github.com/go-zookeeper/zk v1.0.4 // indirect
	github.com/gogo/protobuf v1.3.2 // indirect
	github.com/golang/protobuf v1.5.4 // indirect
	github.com/grpc-ecosystem/grpc-gateway/v2 v2.29.0 // indirect
	github.com/nats-io/nats.go v1.56.0 // indirect
	github.com/nats-io/nkeys v0.4.16 // indirect
	github.com/nats-io/nuid v1.0.1 // indirect
	github.com/redis/rueidis v1.0.80 // indirect
	github.com/valkey-io/valkey-go v1.0.80 // indirect
	go.etcd.io/etcd/api/v3 v3.6.17 // indirect
	go.etcd.io/etcd/client/pkg/v3 v3.6.17 // indirect
	go.etcd.io/etcd/client/v3 v3.6.17 // indirect
	go.uber.org/goleak v1.3.0 // indirect
	go.uber.org/multierr v1.11.0 // indirect
	go.uber.org/zap v1.27.0 // indirect
	golang.org/x/net v0.62.0 // indirect
	google.golang.org/genproto/googleapis/api v0.0.0-20260803160001-6ac0973c030d // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20260803160001-6ac0973c030d // indirect
	google.golang.org/grpc v1.83.2 // indirect
	google.golang.org/protobuf v1.36.11 // indirect
)

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/distlock/lock/drivers/etcd v0.0.0
	github.com/distlock/lock/drivers/zookeeper v0.0.0
	github.com/distlock/lock/internal/pgtable v0.0.0 // indirect
	github.com/gomodule/redigo v1.9.3 // indirect
	github.com/jackc/pgpassfile v1.0.0 // indirect
	github.com/jackc/pgservicefile v0.0.0-20240606120523-5a60cdf6a761 // indirect
	github.com/jackc/puddle/v2 v2.2.3 // indirect
	github.com/klauspost/compress v1.20.3 // indirect
	github.com/xdg-go/scram v1.4.0 // indirect
	github.com/xdg-go/stringprep v1.0.4 // indirect
	github.com/youmark/pkcs8 v0.0.0-20240726163527-a2c0da244d78 // indirect
	go.uber.org/atomic v1.12.0 // indirect
	golang.org/x/crypto v0.58.0 // indirect
	golang.org/x/sync v0.25.0 // indirect
	golang.org/x/sys v0.50.0 // indirect
	golang.org/x/text v0.44.0 // indirect
)

replace (
	github.com/distlock/lock => ../..
	github.com/distlock/lock/drivers/etcd => ../../drivers/etcd
	github.com/distlock/lock/drivers/goredis => ../../drivers/goredis
	github.com/distlock/lock/drivers/mongodb => ../../drivers/mongodb
	github.com/distlock/lock/drivers/mysql => ../../drivers/mysql
	github.com/distlock/lock/drivers/nats => ../../drivers/nats
	github.com/distlock/lock/drivers/postgres => ../../drivers/postgres
	github.com/distlock/lock/drivers/redigo => ../../drivers/redigo
	github.com/distlock/lock/drivers/rueidis => ../../drivers/rueidis
	github.com/distlock/lock/drivers/valkey => ../../drivers/valkey
	github.com/distlock/lock/drivers/zookeeper => ../../drivers/zookeeper
	github.com/distlock/lock/internal/pgtable => ../../internal/pgtable
)
