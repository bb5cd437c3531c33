package main

import (
	"context"
	"fmt"
	"io"
)

// runCmd runs 'distlock run'.
func runCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "distlock run: not built yet")
	return exitUsage
}
