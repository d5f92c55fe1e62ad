package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/alicebob/miniredis/v2"

	"github.com/standings/standings/ranking"
)

// TestReshardCommand runs `standings reshard` against a Redis an instance
// serves (refused), after it stopped (moved), and starts instances whose
// boards file says the old count (refused, naming the board) and the new.
func TestReshardCommand(t *testing.T) {
	ctx := context.Background()
	mr := miniredis.RunT(t)
	url := "redis://" + mr.Addr()
	dir := t.TempDir()
	boards := func(n string) string {
		path := filepath.Join(dir, "boards-"+n+".yaml")
		if err := os.WriteFile(path, []byte("boards: [{id: scores, views: [day, all], shards: "+n+"}]\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	start := func(config string) (*Main, error) {
		m := NewMain()
		m.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
		if err := m.ParseFlags([]string{"--addr", "127.0.0.1:0", "--config", config, "--redis", url}); err != nil {
			t.Fatal(err)
		}
		m.WriteKeys = []string{"test-key"}
		err := m.Run(ctx)
		return m, err
	}
	reshard := func(args ...string) (code int, stdout, stderr string) {
		var out, errs bytes.Buffer
		code = reshardMain(ctx, args, &out, &errs)
		return code, out.String(), errs.String()
	}

	one := boards("1")
	m, err := start(one)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Store.Apply(ctx, "scores", []ranking.Event{{Member: "ada", Value: 7}, {Member: "bob", Value: 3}}, ranking.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := reshard("--config", one, "--board", "scores", "--shards", "3", "--redis", url)
	if code != 1 || !strings.Contains(stderr, "being served") || !strings.Contains(stderr, m.instance) {
		t.Fatalf("reshard while served: exit %d, %s", code, stderr)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := reshard("--config", one, "--board", "scores", "--shards", "3", "--redis", url)
	if code != 0 || !strings.Contains(stdout, "moved from 1 to 3 shards") {
		t.Fatalf("reshard: exit %d, %s%s", code, stdout, stderr)
	}

	m, err = start(one)
	m.Close()
	if err == nil || !strings.Contains(err.Error(), `board "scores"`) || !strings.Contains(err.Error(), "standings reshard") {
		t.Fatalf("start-up with shards: 1 over data of 3 shards: %v", err)
	}
	m, err = start(boards("3"))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	c, err := m.Store.Member(ctx, "scores", "all", "bob", ranking.MemberQuery{})
	if err != nil || c.Rank != 2 || c.Total != 2 {
		t.Fatalf("bob after the move: %+v, %v", c, err)
	}

	for _, args := range [][]string{
		{"--board", "scores", "--shards", "2", "--redis", url},
		{"--config", one, "--shards", "2", "--redis", url},
		{"--config", one, "--board", "scores", "--shards", "65", "--redis", url},
		{"--config", one, "--board", "scores", "--shards", "2"},
		{"--config", one, "--board", "scores", "--shards", "2", "--redis", url, "extra"},
	} {
		if code, _, stderr := reshard(args...); code != 2 || !strings.Contains(stderr, "usage:") {
			t.Errorf("reshard %v: exit %d, %s", args, code, stderr)
		}
	}
}
