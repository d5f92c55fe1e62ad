// Package redistest starts throwaway redis-server processes on 127.0.0.1 for
// tests and benchmarks.
//
// A test package that needs Redis wires it up once in TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(redistest.Main(m)) }
//
// and its tests then ask for the shared servers:
//
//	rdb := redistest.Client(t)            // standalone server
//	cc := redistest.ClusterClient(t)      // 3-master Redis Cluster
//	key := redistest.Namespace(t) + ":lb" // keys no other test uses
//
// The shared servers are started on first use, so a package that never asks
// for the cluster does not pay for it. When redis-server is not on PATH those
// helpers skip the test, unless STANDINGS_REQUIRE_REDIS=1, in which case Main
// fails the run. Programs that are not tests use StartServer and StartCluster
// directly.
//
// Every server runs under the locale Locale when it is installed (Lua in
// Redis then compares strings by that locale, not by bytes); with
// STANDINGS_REQUIRE_REDIS=1 a missing locale fails the run too.
//
// Every server listens on 127.0.0.1 only, keeps nothing on disk beyond its own
// temporary directory, and is killed when it is closed or when the process that
// started it dies.
package redistest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
)

const (
	// Server ports are drawn from [portMin, portMax). The cluster bus listens
	// on port+busPortOffset, so the range is chosen to keep both ports below
	// Linux's default ephemeral range (32768-60999) and away from 6379/16379.
	portMin       = 12000
	portMax       = 22000
	busPortOffset = 10000

	// startAttempts bounds how often a start is retried after losing a port
	// to another process between the check and the bind.
	startAttempts = 8

	// readyTimeout bounds how long one attempt waits for PING to answer.
	readyTimeout = 15 * time.Second

	logFileName = "redis.log"
	outFileName = "stdout.log"
)

// Server is one redis-server process listening on 127.0.0.1.
type Server struct {
	// Addr is the server's "127.0.0.1:port" address.
	Addr string

	port    int
	dir     string
	args    []string // the command line, kept for Start
	cmd     *exec.Cmd
	exited  chan struct{} // closed once the process has been reaped
	waitErr error         // cmd.Wait's result, valid after exited is closed

	closeOnce sync.Once
	closeErr  error
	closed    bool
}

// StartServer starts a standalone redis-server on a free 127.0.0.1 port, with
// persistence off, and returns once it answers PING. extraArgs are appended to
// the command line (for example "--maxmemory", "10mb").
func StartServer(ctx context.Context, extraArgs ...string) (*Server, error) {
	return startServer(ctx, false, extraArgs)
}

// StartDurableServer starts a standalone redis-server like StartServer, but
// with the append-only file on and fsynced before every reply
// ("appendonly yes", "appendfsync always"): whatever it acknowledged survives
// Stop, and Start loads it back. extraArgs are appended as for StartServer.
func StartDurableServer(ctx context.Context, extraArgs ...string) (*Server, error) {
	return startServer(ctx, false, append([]string{"--appendonly", "yes", "--appendfsync", "always"}, extraArgs...))
}

// PID returns the operating-system process id of the server.
func (s *Server) PID() int { return s.cmd.Process.Pid }

// Port returns the TCP port the server listens on.
func (s *Server) Port() int { return s.port }

// Dir returns the server's working directory, which also holds its log file.
func (s *Server) Dir() string { return s.dir }

// Close kills the server, waits for it to exit and removes its directory.
// It is safe to call more than once.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		s.closed = true
		// SIGKILL: nothing is persisted, so there is nothing to shut down cleanly.
		if err := s.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
			s.closeErr = fmt.Errorf("redistest: kill redis-server %s (pid %d): %w", s.Addr, s.PID(), err)
		}
		<-s.exited
		releasePort(s.port)
		if err := os.RemoveAll(s.dir); err != nil {
			s.closeErr = errors.Join(s.closeErr, fmt.Errorf("redistest: remove %s: %w", s.dir, err))
		}
	})
	return s.closeErr
}

// Stop kills the server process, as a crash or an outage would, and waits
// for it to exit. Unlike Close it keeps the port reserved and the
// directory, so that Start can bring the server back on the same address.
// Stop, Start and Close must not run concurrently.
func (s *Server) Stop() error {
	if err := s.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("redistest: kill redis-server %s (pid %d): %w", s.Addr, s.PID(), err)
	}
	<-s.exited
	return nil
}

// Start starts a stopped server again on the same port with the same
// arguments and directory, and returns once it answers PING. A server from
// StartServer persists nothing and comes back empty; one from
// StartDurableServer comes back with every write it acknowledged, loaded
// from its append-only file. It is an error while the server runs or after
// Close.
func (s *Server) Start(ctx context.Context) error {
	if s.closed {
		return fmt.Errorf("redistest: start redis-server %s: closed", s.Addr)
	}
	select {
	case <-s.exited:
	default:
		return fmt.Errorf("redistest: start redis-server %s: still running (pid %d)", s.Addr, s.PID())
	}
	return s.spawn(ctx)
}

// startServer starts one redis-server, retrying with a fresh port when the
// chosen one turned out to be taken.
func startServer(ctx context.Context, cluster bool, extraArgs []string) (*Server, error) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		return nil, fmt.Errorf("redistest: redis-server not found on PATH: %w", err)
	}
	var lastErr error
	for attempt := 0; attempt < startAttempts; attempt++ {
		if err := ctx.Err(); err != nil {
			return nil, errors.Join(fmt.Errorf("redistest: start redis-server: %w", err), lastErr)
		}
		port, err := choosePort()
		if err != nil {
			return nil, err
		}
		s, err := startOnce(ctx, port, cluster, extraArgs)
		if err == nil {
			return s, nil
		}
		releasePort(port)
		lastErr = err
		if !errors.Is(err, errPortInUse) {
			return nil, err
		}
	}
	return nil, fmt.Errorf("redistest: start redis-server: gave up after %d attempts: %w", startAttempts, lastErr)
}

var errPortInUse = errors.New("port already in use")

// choosePort is pickPort, replaceable by tests.
var choosePort = pickPort

func startOnce(ctx context.Context, port int, cluster bool, extraArgs []string) (_ *Server, err error) {
	dir, err := os.MkdirTemp("", "redistest-")
	if err != nil {
		return nil, fmt.Errorf("redistest: %w", err)
	}
	defer func() {
		if err != nil {
			os.RemoveAll(dir)
		}
	}()

	args := []string{
		"--port", strconv.Itoa(port),
		"--bind", "127.0.0.1",
		"--protected-mode", "no",
		"--daemonize", "no",
		"--save", "",
		"--appendonly", "no",
		"--dir", dir,
		"--logfile", filepath.Join(dir, logFileName),
	}
	if cluster {
		args = append(args,
			"--cluster-enabled", "yes",
			"--cluster-config-file", filepath.Join(dir, "nodes.conf"),
			"--cluster-node-timeout", "5000",
			"--cluster-announce-ip", "127.0.0.1",
		)
	}
	args = append(args, extraArgs...)

	s := &Server{
		Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
		port: port,
		dir:  dir,
		args: args,
	}
	if err := s.spawn(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// spawn starts the redis-server process of s and waits until it answers.
func (s *Server) spawn(ctx context.Context) error {
	// Anything redis-server prints before its log file is open (bad flags,
	// for instance) goes here.
	out, err := os.OpenFile(filepath.Join(s.dir, outFileName), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("redistest: %w", err)
	}
	defer out.Close() // the child has its own copy of the descriptor

	cmd := exec.Command("redis-server", s.args...)
	cmd.Dir = s.dir
	cmd.Env = serverEnv()
	cmd.Stdout = out
	cmd.Stderr = out
	cmd.SysProcAttr = sysProcAttr()
	if err := startProcess(cmd); err != nil {
		return fmt.Errorf("redistest: start redis-server: %w", err)
	}
	exited := make(chan struct{})
	s.cmd, s.exited = cmd, exited
	go func() {
		s.waitErr = cmd.Wait()
		close(exited)
	}()

	if err := s.waitReady(ctx); err != nil {
		_ = cmd.Process.Kill()
		<-exited
		tail := s.logTail()
		if strings.Contains(tail, "Address already in use") {
			err = fmt.Errorf("%w: %w", errPortInUse, err)
		}
		return fmt.Errorf("redistest: redis-server on %s did not start: %w\n--- log tail ---\n%s", s.Addr, err, tail)
	}
	return nil
}

// waitReady polls PING until it answers, the process exits, or the attempt
// times out.
func (s *Server) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	var lastErr error
	for {
		select {
		case <-s.exited:
			return fmt.Errorf("process exited: %v", s.waitErr)
		default:
		}
		if lastErr = ping(ctx, s.Addr); lastErr == nil {
			return nil
		}
		select {
		case <-s.exited:
			return fmt.Errorf("process exited: %v", s.waitErr)
		case <-ctx.Done():
			return fmt.Errorf("no answer to PING: %w (last error: %v)", ctx.Err(), lastErr)
		case <-tick.C:
		}
	}
}

// ping sends one RESP PING over a fresh connection and expects +PONG.
func ping(ctx context.Context, addr string) error {
	ctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	if _, err := conn.Write([]byte("*1\r\n$4\r\nPING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		return err
	}
	if line = strings.TrimSpace(line); line != "+PONG" {
		return fmt.Errorf("PING answered %q", line)
	}
	return nil
}

// logTail returns the last lines of the server's log and captured output.
func (s *Server) logTail() string {
	var b strings.Builder
	for _, name := range []string{outFileName, logFileName} {
		data, err := os.ReadFile(filepath.Join(s.dir, name))
		if err != nil || len(strings.TrimSpace(string(data))) == 0 {
			continue
		}
		lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
		if len(lines) > 20 {
			lines = lines[len(lines)-20:]
		}
		fmt.Fprintf(&b, "[%s]\n%s\n", name, strings.Join(lines, "\n"))
	}
	if b.Len() == 0 {
		return "(empty)"
	}
	return b.String()
}

var ports struct {
	sync.Mutex
	reserved map[int]bool // ports handed out to servers of this process
}

// pickPort returns a port in [portMin, portMax) that is bindable on 127.0.0.1
// right now, as is its cluster bus port port+busPortOffset. Ports are
// reserved in-process until releasePort; other processes can still race for
// them, which startServer handles by retrying.
func pickPort() (int, error) {
	ports.Lock()
	defer ports.Unlock()
	if ports.reserved == nil {
		ports.reserved = make(map[int]bool)
	}
	for i := 0; i < 200; i++ {
		p := portMin + rand.IntN(portMax-portMin)
		// The range is busPortOffset wide, so server ports and bus ports
		// never overlap and reserving p covers p+busPortOffset too.
		if ports.reserved[p] || !bindable(p) || !bindable(p+busPortOffset) {
			continue
		}
		ports.reserved[p] = true
		return p, nil
	}
	return 0, fmt.Errorf("redistest: no free port pair in [%d, %d) on 127.0.0.1", portMin, portMax)
}

func releasePort(p int) {
	ports.Lock()
	defer ports.Unlock()
	delete(ports.reserved, p)
}

func bindable(port int) bool {
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return false
	}
	l.Close()
	return true
}

// spawnRequests is served by one goroutine locked to its OS thread for the
// life of the process. Pdeathsig fires when the thread that forked the child
// exits, not the process, so forking from a thread that never exits ties the
// children's lifetime to the process.
var (
	spawnOnce     sync.Once
	spawnRequests chan func()
)

// StartChild starts cmd so that, on Linux, the kernel kills it when this
// process dies, however it dies (a failed test, a panic, SIGKILL): tests
// that run programs of their own leave no orphans. Elsewhere the caller's
// own cleanup is all there is. It sets cmd.SysProcAttr.
func StartChild(cmd *exec.Cmd) error {
	cmd.SysProcAttr = sysProcAttr()
	return startProcess(cmd)
}

func startProcess(cmd *exec.Cmd) error {
	spawnOnce.Do(func() {
		spawnRequests = make(chan func())
		go func() {
			runtime.LockOSThread() // never unlocked: the thread lives as long as the process
			for f := range spawnRequests {
				f()
			}
		}()
	})
	errc := make(chan error, 1)
	spawnRequests <- func() { errc <- cmd.Start() }
	return <-errc
}
