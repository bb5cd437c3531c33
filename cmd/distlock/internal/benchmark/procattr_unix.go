//go:build unix && !linux

package benchmark

import "syscall"

// nodeProcAttr puts a node in a process group of its own, so that a
// terminal's Ctrl-C reaches bench (which stops it) and not the node.
func nodeProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
