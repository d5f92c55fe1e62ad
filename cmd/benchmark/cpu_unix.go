//go:build unix

package main

import (
	"syscall"
	"time"
)

// processCPU is this process's user+system CPU time so far (the Redis child
// is not included).
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
