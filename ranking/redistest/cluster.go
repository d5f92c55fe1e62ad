package redistest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// clusterReadyTimeout bounds the wait for a new cluster to become usable.
const clusterReadyTimeout = 30 * time.Second

// Cluster is a Redis Cluster of masters without replicas on 127.0.0.1.
type Cluster struct {
	// Addrs holds the "127.0.0.1:port" address of every master.
	Addrs []string
	// Nodes holds the master processes, in the order of Addrs.
	Nodes []*Server
}

// StartCluster starts masters cluster-enabled redis-servers (at least 3),
// joins them with redis-cli --cluster create, and returns once every node
// reports cluster_state:ok with all 16384 slots assigned and all nodes agree
// on the slot map.
func StartCluster(ctx context.Context, masters int) (_ *Cluster, err error) {
	if masters < 3 {
		return nil, fmt.Errorf("redistest: a Redis Cluster needs at least 3 masters, got %d", masters)
	}
	if _, err := exec.LookPath("redis-cli"); err != nil {
		return nil, fmt.Errorf("redistest: redis-cli not found on PATH: %w", err)
	}

	c := &Cluster{Nodes: make([]*Server, masters)}
	defer func() {
		if err != nil {
			c.Close()
		}
	}()

	errs := make([]error, masters)
	var wg sync.WaitGroup
	for i := range masters {
		wg.Go(func() { c.Nodes[i], errs[i] = startServer(ctx, true, nil) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	for _, n := range c.Nodes {
		c.Addrs = append(c.Addrs, n.Addr)
	}

	ctx, cancel := context.WithTimeout(ctx, clusterReadyTimeout)
	defer cancel()

	args := append([]string{"--cluster", "create"}, c.Addrs...)
	args = append(args, "--cluster-replicas", "0", "--cluster-yes")
	cmd := exec.CommandContext(ctx, "redis-cli", args...)
	cmd.SysProcAttr = sysProcAttr()
	cmd.WaitDelay = time.Second
	out, err := runProcess(cmd)
	if err != nil {
		return nil, fmt.Errorf("redistest: redis-cli --cluster create %s: %w\n--- output ---\n%s",
			strings.Join(c.Addrs, " "), err, lastLines(out, 30))
	}

	if err := c.waitConsistent(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

// Close stops every node of the cluster.
func (c *Cluster) Close() error {
	errs := make([]error, len(c.Nodes))
	var wg sync.WaitGroup
	for i, n := range c.Nodes {
		if n != nil {
			wg.Go(func() { errs[i] = n.Close() })
		}
	}
	wg.Wait()
	return errors.Join(errs...)
}

// waitConsistent polls every node until all report a healthy cluster that
// covers every slot and all return the same slot map.
func (c *Cluster) waitConsistent(ctx context.Context) error {
	clients := make([]*redis.Client, len(c.Addrs))
	for i, addr := range c.Addrs {
		clients[i] = redis.NewClient(probeOptions(addr))
	}
	defer func() {
		for _, cl := range clients {
			cl.Close()
		}
	}()

	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		problem := c.checkOnce(ctx, clients)
		if problem == "" {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("redistest: cluster %s not ready: %w; last problem: %s",
				strings.Join(c.Addrs, " "), ctx.Err(), problem)
		case <-tick.C:
		}
	}
}

// checkOnce returns "" when the cluster is ready, or what is still wrong.
func (c *Cluster) checkOnce(ctx context.Context, clients []*redis.Client) string {
	var want string
	for i, cl := range clients {
		addr := c.Addrs[i]
		info, err := cl.ClusterInfo(ctx).Result()
		if err != nil {
			return fmt.Sprintf("%s: CLUSTER INFO: %v", addr, err)
		}
		fields := parseInfo(info)
		if v := fields["cluster_state"]; v != "ok" {
			return fmt.Sprintf("%s: cluster_state:%s", addr, v)
		}
		if v := fields["cluster_slots_assigned"]; v != "16384" {
			return fmt.Sprintf("%s: cluster_slots_assigned:%s", addr, v)
		}
		if v := fields["cluster_known_nodes"]; v != strconv.Itoa(len(c.Addrs)) {
			return fmt.Sprintf("%s: cluster_known_nodes:%s, want %d", addr, v, len(c.Addrs))
		}
		slots, err := cl.ClusterSlots(ctx).Result()
		if err != nil {
			return fmt.Sprintf("%s: CLUSTER SLOTS: %v", addr, err)
		}
		got, covered := slotMap(slots)
		if covered != 16384 {
			return fmt.Sprintf("%s: CLUSTER SLOTS covers %d slots", addr, covered)
		}
		if i == 0 {
			want = got
		} else if got != want {
			return fmt.Sprintf("%s: slot map differs from %s's:\n%s\nvs\n%s", addr, c.Addrs[0], got, want)
		}
	}
	return ""
}

// slotMap renders CLUSTER SLOTS in a canonical form and counts the slots it covers.
func slotMap(slots []redis.ClusterSlot) (string, int) {
	lines := make([]string, 0, len(slots))
	covered := 0
	for _, s := range slots {
		covered += s.End - s.Start + 1
		nodes := make([]string, 0, len(s.Nodes))
		for _, n := range s.Nodes {
			nodes = append(nodes, n.ID+"@"+n.Addr)
		}
		lines = append(lines, fmt.Sprintf("%05d-%05d %s", s.Start, s.End, strings.Join(nodes, ",")))
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n"), covered
}

func parseInfo(info string) map[string]string {
	fields := make(map[string]string)
	for _, line := range strings.Split(info, "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), ":"); ok {
			fields[k] = v
		}
	}
	return fields
}

// probeOptions configures a plain, quiet client for health checks.
func probeOptions(addr string) *redis.Options {
	return &redis.Options{
		Addr:            addr,
		Protocol:        2,
		DisableIdentity: true,
		MaxRetries:      -1,
		DialTimeout:     time.Second,
		ReadTimeout:     time.Second,
		WriteTimeout:    time.Second,
		PoolSize:        1,
		MaintNotificationsConfig: &maintnotifications.Config{
			Mode: maintnotifications.ModeDisabled,
		},
	}
}

// runProcess starts cmd through startProcess, waits for it and returns its
// combined output.
func runProcess(cmd *exec.Cmd) (string, error) {
	var buf bytes.Buffer
	cmd.Stdout = &buf
	cmd.Stderr = &buf
	if err := startProcess(cmd); err != nil {
		return "", err
	}
	err := cmd.Wait()
	return buf.String(), err
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
