//go:build !linux

package benchmark

import "os"

// isTerminal reports whether f is a character device: a terminal, most
// likely, where no ioctl says better.
func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
