module github.com/distlock/lock/drivers/mysql

go 1.26.0

require (
	github.com/distlock/lock v0.0.0
	github.com/go-sql-driver/mysql v1.10.2
)

require (
	filippo.io/edwards25519 v1.2.0 // indirect
	go.uber.org/goleak v1.3.0 // indirect
	go.yaml.in/yaml/v3 v3.0.6 // indirect
	golang.org/x/sys v0.48.0 // indirect
)

replace github.com/distlock/lock => ../..
