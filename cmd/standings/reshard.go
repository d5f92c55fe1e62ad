package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/standings/standings/ranking"
)

// reshardUsage is the subcommand's synopsis.
const reshardUsage = "usage: standings reshard --config FILE --board ID --shards N (--redis URL | --redis-cluster NODES)"

// reshardMain runs `standings reshard`: it moves one board's data to
// another shard count (ranking.Store.Reshard) while no instance serves the
// board, printing its progress to stdout; run again after a crash, it
// continues. It returns the exit code: 0 done, 1 failed or refused, 2 bad
// arguments.
func reshardMain(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("standings reshard", flag.ContinueOnError)
	fs.SetOutput(stderr)
	configPath := fs.String("config", envOr("STANDINGS_CONFIG", ""), "boards file (YAML) naming the board")
	board := fs.String("board", "", "id of the board to move")
	shards := fs.Int("shards", 0, fmt.Sprintf("the new shard count (1..%d)", ranking.MaxShards))
	redisURL := fs.String("redis", envOr("STANDINGS_REDIS_URL", ""), "redis:// or rediss:// URL of a standalone Redis")
	cluster := fs.String("redis-cluster", envOr("STANDINGS_REDIS_CLUSTER", ""), "comma-separated seed nodes of a Redis Cluster")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	usage := func(format string, a ...any) int {
		fmt.Fprintf(stderr, format+"\n%s\n", append(a, reshardUsage)...)
		return 2
	}
	switch {
	case fs.NArg() > 0:
		return usage("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	case *configPath == "":
		return usage("--config is required: the boards file naming the board")
	case *board == "":
		return usage("--board is required")
	case *shards < 1 || *shards > ranking.MaxShards:
		return usage("--shards must be from 1 to %d, got %d", ranking.MaxShards, *shards)
	case (*redisURL == "") == (*cluster == ""):
		return usage("give one of --redis and --redis-cluster: the Redis the board's data is in")
	}
	cfg, err := ranking.LoadConfigFile(*configPath)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	openCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	store, err := ranking.Open(openCtx, cfg, ranking.Options{RedisURL: *redisURL, RedisCluster: *cluster})
	var urlErr *ranking.RedisURLError
	if errors.As(err, &urlErr) {
		fmt.Fprintf(stderr, "--redis: %v\n", err)
		return 2
	}
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	defer store.Close()
	if err := store.SyncClock(openCtx); err != nil {
		fmt.Fprintf(stderr, "redis: %v\n", err)
		return 1
	}
	rep, err := store.Reshard(ctx, *board, *shards, ranking.ReshardOptions{
		Log: func(msg string) { fmt.Fprintln(stdout, msg) },
	})
	if err != nil {
		fmt.Fprintf(stderr, "reshard: %v\n", err)
		if ctx.Err() != nil {
			fmt.Fprintln(stderr, "stopped: run the same command again to continue")
		}
		return 1
	}
	if rep.From == rep.To && !rep.Resumed {
		return 0 // a board without data: its record said so above
	}
	fmt.Fprintf(stdout, "board %s: moved from %d to %d shards\n", *board, rep.From, rep.To)
	return 0
}
