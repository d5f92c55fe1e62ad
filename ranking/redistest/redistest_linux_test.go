package redistest_test

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestServerDiesWithParent checks that a server, and a program started with
// StartChild, do not outlive a test binary that is killed without a chance to
// clean up.
func TestServerDiesWithParent(t *testing.T) {
	needRedis(t)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()

	// Become the subreaper of orphaned descendants, so that a server orphaned
	// by its parent's death is reparented here and reaped rather than left as
	// a zombie.
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, 36 /* PR_SET_CHILD_SUBREAPER */, 1, 0); errno != 0 {
		t.Fatalf("prctl(PR_SET_CHILD_SUBREAPER): %v", errno)
	}

	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=1")
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("reading child's output: %v", err)
	}
	// "pid <redis-server> <StartChild's program>"
	var pids []int
	for _, f := range strings.Fields(strings.TrimPrefix(strings.TrimSpace(line), "pid ")) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			break
		}
		pids = append(pids, pid)
	}
	if len(pids) != 2 {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("child said %q", line)
	}
	for _, pid := range pids {
		if !alive(pid) {
			t.Fatalf("pid %d not running while its parent is", pid)
		}
	}
	cmd.Process.Kill()
	cmd.Wait()

	for _, pid := range pids {
		assertKilledWithParent(t, pid)
	}
}

// assertKilledWithParent waits for pid, orphaned by its parent's death, to
// end by SIGKILL.
func assertKilledWithParent(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		var status syscall.WaitStatus
		got, err := syscall.Wait4(pid, &status, syscall.WNOHANG, nil)
		if errors.Is(err, syscall.ECHILD) {
			// Not ours to reap: the dying parent's own Wait reaped it after
			// the signal, before its last thread exited.
			break
		}
		if err != nil {
			t.Fatalf("wait4(%d): %v", pid, err)
		}
		if got == pid {
			if !status.Signaled() || status.Signal() != syscall.SIGKILL {
				t.Errorf("pid %d exited with %v, want killed by SIGKILL", pid, status)
			}
			break
		}
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("pid %d still running 5s after its parent was killed", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
	assertGone(t, pid)
}
