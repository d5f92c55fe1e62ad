package ranking

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
)

// DefaultPrefix starts every key and the change channel.
const DefaultPrefix = "standings:"

// DefaultPoolSize is the Redis connection pool, per node, that Open gives
// its client when the operator sets none (pool_size in the RedisURL). Every page, card and API read is one round trip, and
// a pool smaller than the requests in flight queues the rest in go-redis
// rather than in Redis: with 64 clients, make bench's pages suite served
// 8-12 % fewer rank cards per second through go-redis's default (10 per CPU,
// 20 here) than through 64 or 128 connections, with more app CPU per card.
// Connections open only as concurrency needs them.
const DefaultPoolSize = 128

// DedupeWindow is how long an idempotency id is remembered.
const DedupeWindow = 10 * time.Minute

// Options say which Redis Open connects to, and tune the Store.
type Options struct {
	// RedisURL is a redis:// or rediss:// URL of a standalone Redis;
	// go-redis's URL options apply (pool_size: DefaultPoolSize when unset).
	RedisURL string
	// RedisCluster is the comma-separated seed nodes of a Redis Cluster.
	RedisCluster string
	// Embedded runs an in-process miniredis: not durable, for demos and
	// trials. It reads solo (SoloReads) and its TTLs follow the wall clock.
	Embedded bool
	// Logger receives go-redis's own log lines at debug level (they are
	// process-wide); nil leaves them where they go.
	Logger *slog.Logger

	// Prefix starts every key and channel name; DefaultPrefix when empty.
	// Tests use distinct prefixes to share one Redis.
	Prefix string
	// Clock is the app server's clock. It only seeds the estimate of Redis's
	// clock; Redis's TIME decides every period. time.Now when nil.
	Clock func() time.Time
	// WebhookGiveUp is how long a webhook delivery is retried before it is
	// marked failed (0: DefaultWebhookGiveUp, 24 h). Tests shorten it.
	WebhookGiveUp time.Duration
	// SoloReads sends every read script on its own instead of in shared
	// pipelines (see readPipe). For an embedded miniredis: it has no
	// network cost to save, and it runs one command of a connection per
	// turn of its lock, so a pipeline of reads would get one turn where
	// the same reads on their own connections get one each.
	SoloReads bool
	// SoloWrites sends every single write (Store.Write) on its own instead
	// of sharing script calls with concurrent ones (see writeGroup): for
	// comparisons.
	SoloWrites bool
}

// Store keeps the boards of one Config in Redis (standalone or cluster).
type Store struct {
	rdb        redis.UniversalClient
	owned      bool                 // Open made rdb, and Close closes it
	embedded   *miniredis.Miniredis // Options.Embedded: closed by Close
	reads      map[string]*readPipe // per board: its read scripts of concurrent requests, in shared pipelines
	otherReads *readPipe            // of a board not in cfg (a caller's own *Board)
	cfg        *Config
	prefix     string
	clock      func() time.Time

	// skew is Redis's clock minus the local clock, in ms, learned from every
	// script reply. It only chooses which candidate periods to send.
	skew      atomic.Int64
	skewKnown atomic.Bool

	mu      sync.Mutex
	periods map[periodKey]periodEntry // small cache of period table rows
	cards   map[string]*cardTemplate  // rank card reads but the member's parts (cardTx)
	segRecs map[string]string         // members' segment records as a rank card last read them (the card checks them)
	charts  *chartCache               // final chart points of rank cards (chart_cache.go)
	moves   recentMoves               // overtakes lists rank cards look in (moves.go)
	writes  map[groupKey]*writeGroup  // single writes of concurrent requests, in shared calls (writegroup.go)

	soloWrites bool // Options.SoloWrites

	hooks hookState // webhook settings and counters

	beforeActionBoard func(board string) error // test hook: fails one board of an action
	applyOverride     *redis.Script            // test hook: the apply script in place of applyScript

	afterRelay   func() error // test hook: runs between relay.lua and the outbox XDEL
	beforeRecord func()       // test hook: runs between a result's read and record.lua

	shardLimits shardLimits             // merged reads' thresholds (shard_read.go)
	shardPipes  map[boardKeys]*readPipe // per shard of a sharded board: its slice.lua calls (shard_proto.go)
}

// newStore returns a Store for cfg on rdb; Open is the way in, and tests
// that watch or alter the store's own commands hand in a client of theirs.
func newStore(rdb redis.UniversalClient, cfg *Config, opts Options) *Store {
	s := &Store{rdb: rdb, cfg: cfg, prefix: opts.Prefix, clock: opts.Clock, periods: map[periodKey]periodEntry{}, cards: map[string]*cardTemplate{}, segRecs: map[string]string{}, charts: newChartCache(), shardLimits: defaultShardLimits, writes: map[groupKey]*writeGroup{}, soloWrites: opts.SoloWrites}
	s.reads = make(map[string]*readPipe, len(cfg.Boards))
	for _, b := range cfg.Boards {
		s.reads[b.ID] = &readPipe{rdb: rdb, solo: opts.SoloReads}
	}
	s.otherReads = &readPipe{rdb: rdb, solo: opts.SoloReads}
	if s.prefix == "" {
		s.prefix = DefaultPrefix
	}
	s.shardPipes = map[boardKeys]*readPipe{}
	for _, b := range cfg.Boards {
		if b.Sharded() {
			for i := range b.Shards {
				s.shardPipes[s.shardKeys(b, i)] = &readPipe{rdb: rdb, solo: opts.SoloReads}
			}
		}
	}
	if s.clock == nil {
		s.clock = time.Now
	}
	s.hooks.giveUp = opts.WebhookGiveUp
	if s.hooks.giveUp <= 0 {
		s.hooks.giveUp = DefaultWebhookGiveUp
	}
	s.hooks.wake = make(chan struct{}, 1)
	s.hooks.kick = make(chan struct{}, 1)
	return s
}

// readsOf is the read pipe of a board.
func (s *Store) readsOf(b *Board) *readPipe {
	if p := s.reads[b.ID]; p != nil {
		return p
	}
	return s.otherReads
}

// Prefix returns the prefix of every key and channel of the store.
func (s *Store) Prefix() string { return s.prefix }

// Config returns the boards the store serves.
func (s *Store) Config() *Config { return s.cfg }

// board looks up a board by id.
func (s *Store) board(id string) (*Board, error) {
	b, ok := s.cfg.Board(id)
	if !ok {
		return nil, Errorf(ENOTFOUND, "no board %q", id)
	}
	return b, nil
}

// boardView looks up a board and one of its views.
func (s *Store) boardView(boardID, viewName string) (*Board, View, error) {
	b, err := s.board(boardID)
	if err != nil {
		return nil, View{}, err
	}
	v, ok := b.View(viewName)
	if !ok {
		return nil, View{}, Errorf(ENOTFOUND, "board %q has no view %q", boardID, viewName)
	}
	return b, v, nil
}

// Now returns the current estimate of Redis's clock.
func (s *Store) Now(ctx context.Context) (time.Time, error) {
	if !s.skewKnown.Load() {
		if err := s.SyncClock(ctx); err != nil {
			return time.Time{}, err
		}
	}
	return s.clock().Add(time.Duration(s.skew.Load()) * time.Millisecond), nil
}

// SyncClock measures Redis's clock with TIME.
func (s *Store) SyncClock(ctx context.Context) error {
	before := s.clock()
	t, err := s.rdb.Time(ctx).Result()
	if err != nil {
		return wrapRedis(err)
	}
	after := s.clock()
	mid := before.Add(after.Sub(before) / 2)
	s.learnNow(t.UnixMilli(), mid)
	return nil
}

func (s *Store) learnNow(redisMS int64, local time.Time) {
	s.skew.Store(redisMS - local.UnixMilli())
	s.skewKnown.Store(true)
}

// Ping checks that Redis answers.
func (s *Store) Ping(ctx context.Context) error {
	return wrapRedis(s.rdb.Ping(ctx).Err())
}

// wrapRedis turns connection-level failures into EUNAVAILABLE.
func wrapRedis(err error) error {
	if err == nil {
		return nil
	}
	var ne net.Error
	var oe *net.OpError
	if errors.As(err, &ne) || errors.As(err, &oe) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, redis.ErrClosed) || errors.Is(err, redis.ErrPoolTimeout) || isUnavailableReply(err) {
		return &Error{Code: EUNAVAILABLE, Message: "the score store (Redis) is unavailable; try again shortly"}
	}
	if errors.Is(err, context.Canceled) {
		return err
	}
	return fmt.Errorf("redis: %w", err)
}

// unavailableReplies are the error replies that mean "not now" rather than
// "wrong": Redis loading or failing over, a slot migration that outlasted the
// client's redirects (MOVED, ASK, TRYAGAIN), a busy script, and a server that
// refuses writes on purpose (too few replicas, a demoted primary, a failed
// disk). Redis refused the call before running it, so a write that gets one
// was not applied (timeouts and dropped connections are another matter: see
// writeOutcome).
var unavailableReplies = []string{"LOADING", "CLUSTERDOWN", "MASTERDOWN", "TRYAGAIN", "BUSY",
	"MOVED", "ASK", "NOREPLICAS", "READONLY", "MISCONF"}

func isUnavailableReply(err error) bool {
	var re redis.Error
	if !errors.As(err, &re) {
		return false
	}
	for _, p := range unavailableReplies {
		if strings.HasPrefix(re.Error(), p) {
			return true
		}
	}
	return false
}

// writeOutcome tells whether a write that failed with err may have reached
// Redis: OutcomeNotApplied only when it provably did not (no connection, no
// free connection before the deadline, the client closed, a refusal reply),
// OutcomeUnknown otherwise. go-redis returns a bare context error only
// before it writes the command (waiting for a connection, a connection's
// handshake, a backoff); once the command is out, a deadline ends the read
// as a *net.OpError.
func writeOutcome(err error) string {
	var oe *net.OpError
	switch {
	case errors.As(err, &oe):
		if oe.Op == "dial" {
			return OutcomeNotApplied
		}
		return OutcomeUnknown
	case errors.Is(err, redis.ErrPoolTimeout), errors.Is(err, redis.ErrClosed), isUnavailableReply(err),
		redis.HasErrorPrefix(err, "NOSCRIPT"),
		errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return OutcomeNotApplied
	}
	return OutcomeUnknown
}

// noRetryCmd is a write script call that go-redis must not send again by
// itself: its own retries (MaxRetries, and a cluster client's retries of a
// dropped connection) would resend a call Redis may already have run.
// runWrite resends only what is safe.
type noRetryCmd struct{ *redis.Cmd }

func (noRetryCmd) NoRetry() bool { return true }

// writeScripter runs scripts on rdb as noRetryCmd calls (redis.Script.Run
// still falls back from EVALSHA to EVAL on NOSCRIPT: Redis ran nothing).
type writeScripter struct{ rdb redis.UniversalClient }

func (w writeScripter) eval(ctx context.Context, verb, script string, keys []string, args []any) *redis.Cmd {
	cmdArgs := make([]any, 0, 3+len(keys)+len(args))
	cmdArgs = append(cmdArgs, verb, script, len(keys))
	for _, k := range keys {
		cmdArgs = append(cmdArgs, k)
	}
	cmdArgs = append(cmdArgs, args...)
	cmd := redis.NewCmd(ctx, cmdArgs...)
	if len(keys) > 0 {
		cmd.SetFirstKeyPos(3) // routes the call to the keys' cluster node
	}
	_ = w.rdb.Process(ctx, noRetryCmd{cmd})
	return cmd
}

func (w writeScripter) Eval(ctx context.Context, script string, keys []string, args ...any) *redis.Cmd {
	return w.eval(ctx, "eval", script, keys, args)
}

func (w writeScripter) EvalSha(ctx context.Context, sha1 string, keys []string, args ...any) *redis.Cmd {
	return w.eval(ctx, "evalsha", sha1, keys, args)
}

func (w writeScripter) EvalRO(ctx context.Context, script string, keys []string, args ...any) *redis.Cmd {
	return w.eval(ctx, "eval_ro", script, keys, args)
}

func (w writeScripter) EvalShaRO(ctx context.Context, sha1 string, keys []string, args ...any) *redis.Cmd {
	return w.eval(ctx, "evalsha_ro", sha1, keys, args)
}

func (w writeScripter) ScriptExists(ctx context.Context, hashes ...string) *redis.BoolSliceCmd {
	return w.rdb.ScriptExists(ctx, hashes...)
}

func (w writeScripter) ScriptLoad(ctx context.Context, script string) *redis.StringCmd {
	return w.rdb.ScriptLoad(ctx, script)
}

// writeAttempts bounds how often runWrite sends one write.
const writeAttempts = 4

// runWrite runs a write script and returns its reply. It sends the call
// again (after a short pause, while ctx lasts) only when that cannot count
// it twice: when the failure proves Redis did not run it (no connection, a
// TRYAGAIN or CLUSTERDOWN reply), or when keyed (every change it makes
// carries an idempotency id the script remembers, so a second run answers
// duplicates). A failure of Redis is EUNAVAILABLE with its Outcome: unknown
// once any attempt may have reached Redis, else not applied.
func (s *Store) runWrite(ctx context.Context, script *redis.Script, keyed bool, keys []string, args ...any) (any, error) {
	outcome := OutcomeNotApplied
	var last error
	for attempt := 0; attempt < writeAttempts; attempt++ {
		if attempt > 0 && !sleepCtx(ctx, min(8*time.Millisecond<<attempt, 512*time.Millisecond)) {
			break
		}
		if ctx.Err() != nil {
			if last == nil {
				last = ctx.Err()
			}
			break // ended before this call was written
		}
		val, err := script.Run(ctx, writeScripter{s.rdb}, keys, args...).Result()
		if err == nil || errors.Is(err, redis.Nil) {
			return val, err
		}
		last = err
		var re redis.Error
		if errors.As(err, &re) && !isUnavailableReply(err) {
			return nil, wrapRedis(err) // Redis ran the script and it failed: not a matter of availability
		}
		if writeOutcome(err) == OutcomeUnknown {
			outcome = OutcomeUnknown
		}
		if errors.Is(err, redis.ErrClosed) || (outcome == OutcomeUnknown && !keyed) {
			break
		}
	}
	return nil, unavailableWrite(last, outcome)
}

// unavailableWrite is the EUNAVAILABLE error of a write that failed for
// want of Redis, with its outcome.
func unavailableWrite(err error, outcome string) error {
	if errors.Is(err, context.Canceled) && outcome == OutcomeNotApplied {
		return err // the caller went away before anything was sent
	}
	msg := "the score store (Redis) is unavailable; the write was not applied; try again shortly"
	if outcome == OutcomeUnknown {
		msg = "the score store (Redis) did not answer in time; the write may still be applied; retry it with the same id"
	}
	return &Error{Code: EUNAVAILABLE, Outcome: outcome, Message: msg}
}

// sleepCtx waits d, or less when ctx ends first; it reports whether ctx
// is still live.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// periodKey identifies a cached period-table row.
type periodKey struct {
	board, view, id string
}

// periodEntry is what the scripts need to know of one period.
type periodEntry struct {
	period   Period
	startMS  int64
	endMS    int64
	base     int64 // tie unit at which the period's time part counts 0
	expireAt int64 // ms; 0 = never
	lastDay  int64 // ms; for a window, the start of its last day
}

var allStartMS, allEndMS = minInstant.UnixMilli(), maxInstant.UnixMilli()

// entry returns the period-table row of p, computing and caching it.
func (s *Store) entry(b *Board, v View, p Period) periodEntry {
	k := periodKey{b.ID, v.Name, p.ID}
	s.mu.Lock()
	e, ok := s.periods[k]
	s.mu.Unlock()
	if ok {
		return e
	}
	cd := b.codecs[v.Name]
	unit := max(cd.unit.ms, 1)
	if p.IsAll() {
		e = periodEntry{period: p, startMS: allStartMS, endMS: allEndMS, base: allStartMS / unit}
	} else {
		e = periodEntry{period: p, startMS: p.Start.UnixMilli(), endMS: p.End.UnixMilli(), base: floorDiv(p.Start.UnixMilli(), unit)}
		e.expireAt = s.expireAt(b, v, p).UnixMilli()
		if v.Kind == Window {
			e.lastDay = s.cfg.Calendar.PeriodAt(dayTotals, p.End.Add(-time.Millisecond)).Start.UnixMilli()
		}
		if v == dayTotals {
			e.expireAt = s.dayTotalsExpireAt(b, p).UnixMilli()
		}
	}
	s.mu.Lock()
	if len(s.periods) > 4096 {
		clear(s.periods)
	}
	s.periods[k] = e
	s.mu.Unlock()
	return e
}

// resultGrace keeps a final period's data a while after it becomes final
// when the board records results: without it a period whose keep ends
// before its lateness (an hour view with keep 12 and lateness 26h) would
// expire the moment it turned final, before any recorder could read it.
const resultGrace = time.Hour

// expireAt is when a period's data goes: keep periods of its view after its
// end (a league round at least 2), and never before it is final (plus
// resultGrace when results are recorded).
func (s *Store) expireAt(b *Board, v View, p Period) time.Time {
	cal := s.cfg.Calendar
	last := p
	keep := b.Keep
	if v.Name == leagueViewName {
		// A round outlives the next one, so that a member's placement in
		// it can still read the cohort that sets its tier.
		keep = max(keep, 2)
	}
	for i := 0; i < keep; i++ {
		last = cal.Next(v, last)
	}
	final := p.End.Add(b.Lateness)
	if b.ResultsKeep > 0 {
		final = final.Add(resultGrace)
	}
	if last.End.After(final) {
		return last.End
	}
	return final
}

// dayTotalsExpireAt keeps a day's totals as long as a window that covers
// the day may still be built or repaired from them: until the last such
// window (ending N-1 days later) expires.
func (s *Store) dayTotalsExpireAt(b *Board, day Period) time.Time {
	cal := s.cfg.Calendar
	var last time.Time
	for _, v := range b.Views {
		if v.Kind != Window {
			continue
		}
		w := cal.Shift(v, cal.PeriodAt(v, day.Start), v.Days-1)
		if at := s.expireAt(b, v, w); at.After(last) {
			last = at
		}
	}
	return last
}

// Final reports whether period p of board b is closed at now.
func (b *Board) Final(p Period, now time.Time) bool {
	return !p.IsAll() && !now.Before(p.End.Add(b.Lateness))
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
