//go:build linux

package redistest

import "syscall"

// sysProcAttr makes the kernel kill the child when the test process dies.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
