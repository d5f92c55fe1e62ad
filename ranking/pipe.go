package ranking

import (
	"context"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// readPipe sends the read scripts of concurrent requests (card.lua,
// read.lua, search.lua) to Redis together: calls that arrive while
// pipeMaxFlights pipelines are already out wait, and the next pipeline
// carries all of them (up to pipeMaxBatch). A page server answering many
// requests at once then pays one write and one read per pipeline, in the
// server and in Redis, instead of one of each per request (in the pages
// benchmark about 20 of a rank card's ~150 µs of Redis CPU, and the
// server's syscalls).
//
// A call that finds a flight free goes out at once, on its own, through
// the plain client with its caller's context: a lone request waits for
// nobody and nothing changes for it. A waiting call keeps its caller's
// deadline: the caller stops waiting when its context ends (a call whose
// context ended before its pipeline left is dropped from it), and a
// pipeline's deadline is the latest of its calls'. The scripts are read
// only, so a pipeline that go-redis retries after a network error does no
// harm. There are no goroutines between requests: a call that finds a
// free flight is sent by its own caller, and a flight that finds calls
// waiting when it lands sends them on a new goroutine, which then lands
// in turn.
//
// Each board has its own pipe (Store.reads): a board's keys share one
// hash tag, so on a cluster its reads go to one node, and a slow read
// holds back only reads of its own board, which that node would run
// after it anyway.
type readPipe struct {
	rdb  redis.UniversalClient
	solo bool // every call on its own (Options.SoloReads)

	mu      sync.Mutex
	flights int         // pipelines (or lone calls) out
	waiting []*pipeCall // calls for the next pipeline

	pipelines func(n int) // test hook: called with the size of each pipeline sent
}

// A pipeline carries at most pipeMaxBatch calls; at most pipeMaxFlights
// are out at once. Two flights keep Redis busy while the server reads
// the previous answers, and still let calls gather behind them.
const (
	pipeMaxBatch   = 64
	pipeMaxFlights = 2
)

type pipeCall struct {
	ctx    context.Context
	script *redis.Script
	keys   []string
	args   []any
	cmd    *redis.Cmd
	done   chan struct{}
}

// run runs a read-only script, alone or in a shared pipeline, and
// returns its reply.
func (p *readPipe) run(ctx context.Context, script *redis.Script, keys []string, args ...any) *redis.Cmd {
	if p.solo {
		return script.Run(ctx, p.rdb, keys, args...)
	}
	p.mu.Lock()
	if p.flights < pipeMaxFlights {
		p.flights++
		p.mu.Unlock()
		cmd := script.Run(ctx, p.rdb, keys, args...)
		p.landed()
		return cmd
	}
	c := &pipeCall{ctx: ctx, script: script, keys: keys, args: args, done: make(chan struct{})}
	p.waiting = append(p.waiting, c)
	p.mu.Unlock()
	select {
	case <-c.done:
		if c.cmd != nil {
			return c.cmd
		}
	case <-ctx.Done():
	}
	cmd := redis.NewCmd(ctx)
	cmd.SetErr(ctx.Err())
	return cmd
}

// landed ends a flight: calls waiting for one leave together on this
// flight's turn, else the flight is given back.
func (p *readPipe) landed() {
	p.mu.Lock()
	if len(p.waiting) == 0 {
		p.flights--
		p.mu.Unlock()
		return
	}
	n := min(len(p.waiting), pipeMaxBatch)
	batch := make([]*pipeCall, n)
	copy(batch, p.waiting)
	rest := copy(p.waiting, p.waiting[n:])
	clear(p.waiting[rest:])
	p.waiting = p.waiting[:rest]
	p.mu.Unlock()
	go func() {
		p.send(batch)
		p.landed()
	}()
}

// send runs a batch of calls in one pipeline (EVALSHA; the calls whose
// script Redis does not have yet go again with EVAL) and wakes each
// call's caller.
func (p *readPipe) send(batch []*pipeCall) {
	live := batch[:0:0]
	var deadline time.Time
	endless := false // some call has no deadline
	for _, c := range batch {
		if c.ctx.Err() != nil {
			close(c.done) // its caller has gone (c.cmd stays nil)
			continue
		}
		if d, ok := c.ctx.Deadline(); !ok {
			endless = true
		} else if d.After(deadline) {
			deadline = d
		}
		live = append(live, c)
	}
	if len(live) == 0 {
		return
	}
	if p.pipelines != nil {
		p.pipelines(len(live))
	}
	ctx := context.Background()
	if !endless {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, deadline)
		defer cancel()
	}
	pipe := p.rdb.Pipeline()
	for _, c := range live {
		c.cmd = c.script.EvalSha(ctx, pipe, c.keys, c.args...)
	}
	_, _ = pipe.Exec(ctx) // each command keeps its own error
	var again []*pipeCall
	for _, c := range live {
		if err := c.cmd.Err(); err != nil && redis.HasErrorPrefix(err, "NOSCRIPT") {
			again = append(again, c)
		}
	}
	if len(again) > 0 {
		pipe := p.rdb.Pipeline()
		for _, c := range again {
			c.cmd = c.script.Eval(ctx, pipe, c.keys, c.args...)
		}
		_, _ = pipe.Exec(ctx)
	}
	for _, c := range live {
		close(c.done)
	}
}
