package ranking

import (
	"context"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// readPipe sends the reads of concurrent requests (the cards' transactions,
// read.lua, search.lua) to Redis together: calls that arrive while
// pipeMaxFlights pipelines are already out wait, and the next pipeline
// carries all of them (up to pipeMaxBatch). A page server answering many
// requests at once then pays one write and one read per pipeline, in the
// server and in Redis, instead of one of each per request (a sizeable
// part of a rank card's Redis CPU in the pages benchmark, and the
// server's syscalls). The transactions of a pipeline go in one
// MULTI/EXEC, its scripts after it.
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
	tx     txQueue // a transaction instead of a script (runTx)
	tag    string  // the hash tag of the transaction's keys
	sent   bool    // the transaction went out
	done   chan struct{}
}

// txQueue queues a read's commands on pipe, its scripts by EVALSHA or
// (eval) by EVAL, and returns whether, once run, a script was missing.
type txQueue func(ctx context.Context, pipe redis.Pipeliner, eval bool) (noscript func() bool)

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

// runTx runs a read of several commands as one MULTI/EXEC transaction,
// alone or with the transactions of other calls whose keys share its
// hash tag (tag) in a shared one (on a cluster, a transaction's keys must
// share a slot; each call's commands see one snapshot either way). Its
// commands carry their own replies and errors; the error is the caller's
// context's when the call was dropped before it went out.
func (p *readPipe) runTx(ctx context.Context, tag string, tx txQueue) error {
	if p.solo {
		execTx(ctx, p.rdb, []txQueue{tx})
		return nil
	}
	p.mu.Lock()
	if p.flights < pipeMaxFlights {
		p.flights++
		p.mu.Unlock()
		execTx(ctx, p.rdb, []txQueue{tx})
		p.landed()
		return nil
	}
	c := &pipeCall{ctx: ctx, tx: tx, tag: tag, done: make(chan struct{})}
	p.waiting = append(p.waiting, c)
	p.mu.Unlock()
	select {
	case <-c.done:
		if c.sent {
			return nil
		}
	case <-ctx.Done():
	}
	return ctx.Err()
}

// execTx runs the reads txs in one transaction; those whose script Redis
// did not have go again, with it, in a second one.
func execTx(ctx context.Context, rdb redis.UniversalClient, txs []txQueue) {
	pipe := rdb.TxPipeline()
	missing := make([]func() bool, len(txs))
	for i, tx := range txs {
		missing[i] = tx(ctx, pipe, false)
	}
	_, _ = pipe.Exec(ctx) // each command keeps its own reply and error
	var again []txQueue
	for i, tx := range txs {
		if missing[i]() {
			again = append(again, tx)
		}
	}
	if len(again) > 0 {
		pipe := rdb.TxPipeline()
		for _, tx := range again {
			tx(ctx, pipe, true)
		}
		_, _ = pipe.Exec(ctx)
	}
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

// send runs a batch of calls, the transactions in one MULTI/EXEC and
// the scripts in one pipeline, and wakes each call's caller.
func (p *readPipe) send(batch []*pipeCall) {
	live := batch[:0:0]
	var ctxs []context.Context
	for _, c := range batch {
		if c.ctx.Err() != nil {
			close(c.done) // its caller has gone (c.cmd stays nil)
			continue
		}
		live = append(live, c)
		ctxs = append(ctxs, c.ctx)
	}
	if len(live) == 0 {
		return
	}
	if p.pipelines != nil {
		p.pipelines(len(live))
	}
	ctx, cancel := latestDeadline(ctxs)
	defer cancel()
	var scripts []*pipeCall
	var tags []string
	txs := map[string][]txQueue{}
	for _, c := range live {
		if c.tx != nil {
			c.sent = true
			if txs[c.tag] == nil {
				tags = append(tags, c.tag)
			}
			txs[c.tag] = append(txs[c.tag], c.tx)
		} else {
			scripts = append(scripts, c)
		}
	}
	for _, tag := range tags {
		execTx(ctx, p.rdb, txs[tag])
	}
	if len(scripts) > 0 {
		sendScripts(ctx, p.rdb, scripts)
	}
	for _, c := range live {
		close(c.done)
	}
}

// latestDeadline is the context of a call shared by callers with contexts
// ctxs: not cancelled when one of them is, and ending at the latest of
// their deadlines (never, when one has none).
func latestDeadline(ctxs []context.Context) (context.Context, context.CancelFunc) {
	var deadline time.Time
	for _, c := range ctxs {
		d, ok := c.Deadline()
		if !ok {
			return context.Background(), func() {}
		}
		if d.After(deadline) {
			deadline = d
		}
	}
	return context.WithDeadline(context.Background(), deadline)
}

// sendScripts runs calls' scripts in one pipeline (EVALSHA; the calls
// whose script Redis does not have yet go again with EVAL).
func sendScripts(ctx context.Context, rdb redis.UniversalClient, live []*pipeCall) {
	pipe := rdb.Pipeline()
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
		pipe := rdb.Pipeline()
		for _, c := range again {
			c.cmd = c.script.Eval(ctx, pipe, c.keys, c.args...)
		}
		_, _ = pipe.Exec(ctx)
	}
}
