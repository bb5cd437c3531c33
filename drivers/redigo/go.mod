module github.com/distlock/lock/drivers/redigo

go 1.26.0

require (
	github.com/distlock/lock v0.0.0
	github.com/gomodule/redigo v1.9.3
)

require (
	go.uber.org/goleak v1.3.0 // indirect
	go.yaml.in/yaml/v3 v3.0.6 // indirect
	golang.org/x/sys v0.48.0 // indirect
)

replace github.com/distlock/lock => ../..
