//go:build unix

package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/standings/standings/ranking/redistest"
)

// childEnv, set to "1", makes the test binary run the real program instead
// of the tests, with the arguments it was given: the durability test needs
// the server in a process of its own, so that SIGKILL takes it away as a
// crash would, and re-running this binary needs no separate build.
const childEnv = "STANDINGS_TEST_RUN_SERVER"

// init rather than TestMain: the switch must happen before the testing
// package parses the command line, which holds the program's flags.
func init() {
	if os.Getenv(childEnv) == "1" {
		main()
		os.Exit(0)
	}
}

// appStartTimeout bounds one start of the server process, from exec to an
// answer on /healthz.
const appStartTimeout = 30 * time.Second

// appProcess is the real program running as a child process on a fixed
// address, so that it can be killed and started again where clients expect
// it.
type appProcess struct {
	URL     string
	addr    string
	args    []string
	env     []string
	logPath string

	cmd    *exec.Cmd
	exited chan struct{} // closed once cmd has been reaped
	starts int
}

// mustAppProcess starts the program with args (--addr is added) and the
// extra environment env, and kills it when the test ends. Its log goes to a
// file that is shown if the test fails.
func mustAppProcess(t *testing.T, args, env []string) *appProcess {
	t.Helper()
	addr := mustFreeAddr(t)
	a := &appProcess{
		URL:     "http://" + addr,
		addr:    addr,
		args:    append([]string{"--addr", addr}, args...),
		env:     append(append(os.Environ(), childEnv+"=1"), env...),
		logPath: filepath.Join(t.TempDir(), "standings.log"),
	}
	t.Cleanup(func() {
		if err := a.Kill(); err != nil {
			t.Error(err)
		}
		if t.Failed() {
			t.Logf("server log (last lines):\n%s", tailFile(a.logPath, 40))
		}
	})
	ctx, cancel := context.WithTimeout(t.Context(), appStartTimeout)
	defer cancel()
	if err := a.Start(ctx); err != nil {
		t.Fatal(err)
	}
	return a
}

// Start runs the program and returns once it answers /healthz. A start that
// fails (the program exits at once) is tried again until ctx ends.
func (a *appProcess) Start(ctx context.Context) error {
	var lastErr error
	for ctx.Err() == nil {
		if lastErr = a.startOnce(ctx); lastErr == nil {
			return nil
		}
		if err := a.Kill(); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
		case <-time.After(200 * time.Millisecond):
		}
	}
	return fmt.Errorf("server on %s did not start: %w (last error: %v)", a.addr, ctx.Err(), lastErr)
}

func (a *appProcess) startOnce(ctx context.Context) error {
	log, err := os.OpenFile(a.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer log.Close() // the child has its own copy
	a.starts++
	fmt.Fprintf(log, "--- start %d ---\n", a.starts)
	cmd := exec.Command(os.Args[0], a.args...)
	cmd.Env = a.env
	cmd.Stdout, cmd.Stderr = log, log
	if err := redistest.StartChild(cmd); err != nil {
		return err
	}
	exited := make(chan struct{})
	a.cmd, a.exited = cmd, exited
	go func() {
		cmd.Wait()
		close(exited)
	}()
	client := &http.Client{Timeout: time.Second}
	for {
		res, err := client.Get(a.URL + "/healthz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-exited:
			return fmt.Errorf("server exited: %v", cmd.ProcessState)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Kill ends the program with SIGKILL, as a crash would, and waits for it.
// It does nothing when the program is not running.
func (a *appProcess) Kill() error {
	if a.cmd == nil {
		return nil
	}
	pid := a.cmd.Process.Pid
	if err := a.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("kill server pid %d: %w", pid, err)
	}
	select {
	case <-a.exited:
	case <-time.After(10 * time.Second):
		return fmt.Errorf("server pid %d still running 10s after SIGKILL", pid)
	}
	a.cmd = nil
	return nil
}

// mustFreeAddr returns a 127.0.0.1 address that nothing listens on now.
func mustFreeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// tailFile returns the last n lines of a file, or why it cannot.
func tailFile(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
