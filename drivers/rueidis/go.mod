module github.com/distlock/lock/drivers/rueidis

go 1.26.0

require (
	github.com/distlock/lock v0.0.0
	github.com/redis/rueidis v1.0.80
)

require (
	go.uber.org/goleak v1.3.0 // indirect
	golang.org/x/sys v0.50.0 // indirect
)

replace github.com/distlock/lock => ../..
