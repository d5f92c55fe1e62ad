//go:build !linux

package redistest

import "syscall"

// sysProcAttr has no parent-death signal outside Linux; Close and Main still
// stop every server they started.
func sysProcAttr() *syscall.SysProcAttr { return nil }
