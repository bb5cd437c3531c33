package telemetry_test

import (
	"log"

	"github.com/distlock/lock"
	"github.com/distlock/lock/telemetry"
)

func ExampleNew() {
	c, err := lock.Open("memory", "example-telemetry")
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	// The global providers, set up by the program's OpenTelemetry SDK.
	obs, err := telemetry.New(telemetry.Config{Driver: "memory"})
	if err != nil {
		log.Fatal(err)
	}
	c.SetObserver(obs)
}
