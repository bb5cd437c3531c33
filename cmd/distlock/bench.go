package main

import (
	"context"
	"fmt"
	"io"
)

// benchCmd runs 'distlock bench'.
func benchCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "distlock bench: not built yet")
	return exitUsage
}
