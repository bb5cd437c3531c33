package fencing_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/distlock/lock/fencing"
)

func ExampleMemoryGuard() {
	g := fencing.NewMemoryGuard()
	ctx := context.Background()
	var report string
	write := func(text string) func(context.Context) error {
		return func(context.Context) error { report = text; return nil }
	}
	// Holder 2 writes first; holder 1, whose lock ran out, comes back late.
	fmt.Println(g.Do(ctx, "report", 2, write("by holder 2")))
	err := g.Do(ctx, "report", 1, write("by holder 1"))
	fmt.Println(errors.Is(err, fencing.ErrStale), err)
	fmt.Println(report)
	// Output:
	// <nil>
	// true fencing: token 1 for "report" is older than 2, the newest admitted
	// by holder 2
}
