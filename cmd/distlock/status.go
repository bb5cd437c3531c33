package main

import (
	"context"
	"fmt"
	"io"
)

// statusCmd runs 'distlock status'.
func statusCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "distlock status: not built yet")
	return exitUsage
}
