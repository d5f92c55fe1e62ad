package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/standings/standings/ranking"
)

const (
	streamBenchEvents = 50_000
	streamBenchConfig = "boards: [{id: points, stream: true, views: [hour, day, week, month, all]}]\n"
)

// runStream measures events/s through a board's ingest stream (a producer
// pipelining XADD, one consumer applying until all are acknowledged) beside
// Store.Apply of the same events with ids, in the same run.
func runStream(ctx context.Context, e *env) error {
	cfg, err := ranking.ParseConfig([]byte(streamBenchConfig))
	if err != nil {
		return fmt.Errorf("stream benchmark board: %w", err)
	}
	members := memberIDs(ingestIDs)
	r := rand.New(rand.NewPCG(7, 11))
	type ev struct {
		member string
		value  int64
	}
	evs := make([]ev, streamBenchEvents)
	for i := range evs {
		evs[i] = ev{members[r.IntN(len(members))], int64(r.IntN(maxEventVal) + 1)}
	}

	// Store.Apply, 100 events per call, each with an id as the stream's have.
	apply, err := e.openStore(ctx, cfg, benchPrefix+"apply:", e.opts.writers+2, "")
	if err != nil {
		return err
	}
	defer apply.Close()
	start := time.Now()
	batch := make([]ranking.Event, 0, ingestBatch)
	for i, x := range evs {
		batch = append(batch, ranking.Event{Member: x.member, Value: x.value, ID: "a" + strconv.Itoa(i)})
		if len(batch) == ingestBatch || i == len(evs)-1 {
			if _, err := apply.Apply(ctx, benchBoard, batch, ranking.ApplyOptions{}); err != nil {
				return err
			}
			batch = batch[:0]
		}
	}
	applyRate := float64(len(evs)) / time.Since(start).Seconds()

	// The stream: the consumer runs while the producer writes.
	store, err := e.openStore(ctx, cfg, benchPrefix+"stream:", e.opts.writers+2, "")
	if err != nil {
		return err
	}
	defer store.Close()
	stats := &ranking.StreamStats{}
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	start = time.Now()
	go func() {
		defer close(done)
		store.RunStreamConsumer(cctx, "bench", ranking.StreamOptions{Stats: stats}, func(err error) { e.logf("stream: %v", err) })
	}()
	key := store.StreamKey(benchBoard)
	pipe := e.rdb.Pipeline()
	for i, x := range evs {
		pipe.XAdd(ctx, &redis.XAddArgs{Stream: key, Values: []any{"member", x.member, "value", strconv.FormatInt(x.value, 10)}})
		if i%ingestBatch == ingestBatch-1 || i == len(evs)-1 {
			if _, err := pipe.Exec(ctx); err != nil {
				cancel()
				<-done
				return err
			}
		}
	}
	for stats.Applied.Load()+stats.Dead.Load() < int64(len(evs)) {
		if ctx.Err() != nil {
			cancel()
			<-done
			return ctx.Err()
		}
		time.Sleep(time.Millisecond)
	}
	streamRate := float64(len(evs)) / time.Since(start).Seconds()
	cancel()
	<-done
	if d := stats.Dead.Load(); d != 0 {
		return fmt.Errorf("stream benchmark: %d entries dead-lettered", d)
	}
	e.out.bench("stream_events_per_s", streamRate, "events/s")
	e.out.bench("apply_events_per_s", applyRate, "events/s")
	e.out.ratio("stream_vs_apply", divide(streamRate, applyRate))
	return nil
}
