module github.com/distlock/lock

go 1.26
