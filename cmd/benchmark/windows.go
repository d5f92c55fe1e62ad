package main

import (
	"context"
	"fmt"

	"github.com/standings/standings/ranking"
)

// windowConfig has one board per rolling window length; they differ only
// in N, so their rates show whether an event's cost depends on N.
const windowConfig = `
boards:
  - {id: w7, views: [7d]}
  - {id: w30, views: [30d]}
  - {id: w90, views: [90d]}
`

// runWindows measures events/s into boards with 7d, 30d and 90d windows,
// each with today's window built and (as in the last hour of a day)
// tomorrow's prepared, so every event writes its day total and two windows.
func runWindows(ctx context.Context, e *env) error {
	cfg, err := ranking.ParseConfig([]byte(windowConfig))
	if err != nil {
		return fmt.Errorf("window boards: %w", err)
	}
	store, err := e.openStore(ctx, cfg, benchPrefix, e.opts.writers+2, "")
	if err != nil {
		return err
	}
	defer store.Close()
	members := memberIDs(ingestIDs)
	// Two rounds, best of each: the first measurement of a run tends to be
	// slower (cold caches, CPU clock), which would bias whichever came first.
	rates := map[string]float64{}
	for _, board := range []string{"w7", "w30", "w90", "w7", "w30", "w90"} {
		name := "window_" + board[1:] + "d"
		e.logf("- %s: Store.Apply, %d events per call, into a %sd window", name, ingestBatch, board[1:])
		newWork := applyWork(store, board, ranking.ApplyOptions{})
		m, err := e.measure(ctx, name, func(writer int) work {
			return newWork(newEventGen(members, uint64(writer)))
		}, func(ctx context.Context) error { return store.PrepareTomorrow(ctx) })
		if err != nil {
			return err
		}
		rates[name] = max(rates[name], m.eventsPerSecond())
	}
	for _, name := range []string{"window_7d", "window_30d", "window_90d"} {
		e.out.bench(name+"_events_per_s", rates[name], "events/s")
	}
	e.out.ratio("window_30d_vs_7d", divide(rates["window_30d"], rates["window_7d"]))
	e.out.ratio("window_90d_vs_7d", divide(rates["window_90d"], rates["window_7d"]))
	return nil
}
