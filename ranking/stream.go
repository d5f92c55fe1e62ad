package ranking

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// The ingest stream: how entries are applied exactly once.
//
// A board with `stream: true` reads `<prefix>{b}:in` with the consumer group
// `standings`, created at id `0` (not `$`) so entries written before any
// instance ever started are read too; `BUSYGROUP` is ignored. Each process
// joins under its own name (host-pid-random). The loop re-reads its own
// pending entries first (id `0`), then `XREADGROUP ... COUNT 100 BLOCK 1000
// >`, and every 15 s runs `XAUTOCLAIM` for entries idle over 30 s, so a dead
// instance's entries move within 60 s.
//
// An entry is parsed as the JSON API parses an event (exact value text,
// Validate* for member/name/id, RFC 3339 `at`, `segments` a JSON object of
// text values, each name once, checked by `ValidateSegments`, unknown
// fields refused). Good entries go to `Store.Apply` as one
// batch with `ID` = the entry's `id` or its stream entry id, then are
// `XACK`ed, duplicates included. A crash between Apply and XACK re-delivers
// the entry and the id makes it a duplicate: exactly once, as long as the
// re-delivery comes within the 10-minute idempotency window (claims after
// 30 s idle are far below it). On a sharded board each event goes to its
// member's shard with its idempotency record (`e:<id>` there), while the
// stream and its group stay on the board's tag: an entry applied and not
// acknowledged is re-applied to the same shard, under the same id, as a
// duplicate. A bad entry, or one the store refuses
// (bounds, lateness, an id reused for another event), goes through
// `dead.lua` (KEYS: `{b}:in`, `{b}:dead`, one slot): if still pending, it is
// copied with `error` and `source_id` to `{b}:dead` and acknowledged in the
// same call, so a dead letter is never lost or doubled. A whole-Apply failure
// or a per-event `unavailable` leaves the entries pending for a later read.

// StreamGroup is the consumer group every instance reads ingest streams with.
const StreamGroup = "standings"

// StreamStats counts what the stream consumers did, for logs and metrics.
type StreamStats struct {
	Applied, Duplicates, Dead, Claimed atomic.Int64
}

// StreamOptions tunes RunStreamConsumer; zero values take the defaults.
type StreamOptions struct {
	// ClaimIdle is how long an entry stays unacknowledged with another
	// consumer before it is claimed (default 30s). It must stay far below
	// the 10-minute idempotency window, or a claimed entry could count twice.
	ClaimIdle time.Duration
	// ClaimEvery is how often pending entries are claimed (default 15s).
	ClaimEvery time.Duration
	// Block is how long one read waits for new entries (default 1s).
	Block time.Duration
	// Stats, when set, counts applied, duplicate, dead and claimed entries.
	Stats *StreamStats
	// beforeAck, in tests, runs after a batch is applied and before it is
	// acknowledged; returning false drops the batch unacknowledged, as a
	// crash between Apply and XACK would.
	beforeAck func(board string, n int) bool
}

// RunStreamConsumer reads the ingest stream of every board with stream:
// true as consumer (unique per process) until ctx ends. Errors that do not
// stop it (Redis unavailable, a failed batch) go to onError; the entries
// concerned stay pending and are read again later.
func (s *Store) RunStreamConsumer(ctx context.Context, consumer string, opts StreamOptions, onError func(error)) {
	if opts.ClaimIdle <= 0 {
		opts.ClaimIdle = 30 * time.Second
	}
	if opts.ClaimEvery <= 0 {
		opts.ClaimEvery = 15 * time.Second
	}
	if opts.Block <= 0 {
		opts.Block = time.Second
	}
	if opts.Stats == nil {
		opts.Stats = &StreamStats{}
	}
	if onError == nil {
		onError = func(error) {}
	}
	done := make(chan struct{})
	n := 0
	for _, b := range s.cfg.Boards {
		if !b.Stream {
			continue
		}
		n++
		go func() {
			defer func() { done <- struct{}{} }()
			c := &streamConsumer{s: s, b: b, name: consumer, opts: opts, onError: onError}
			c.run(ctx)
		}()
	}
	for ; n > 0; n-- {
		<-done
	}
}

type streamConsumer struct {
	s       *Store
	b       *Board
	name    string
	opts    StreamOptions
	onError func(error)
}

func (c *streamConsumer) run(ctx context.Context) {
	key := c.s.StreamKey(c.b.ID)
	rdb := c.s.rdb
	// The group starts at 0, not $, so entries written before the first
	// instance ever started are read too. BUSYGROUP means it exists.
	for ctx.Err() == nil {
		err := rdb.XGroupCreateMkStream(ctx, key, StreamGroup, "0").Err()
		if err == nil || strings.Contains(err.Error(), "BUSYGROUP") {
			break
		}
		c.fail(ctx, fmt.Errorf("stream %s: creating group: %w", key, err))
	}
	// Our own pending entries first (a restart with the same name), then
	// new ones; claims of other consumers' stale entries every ClaimEvery.
	ownPending := true
	nextClaim := time.Now()
	for ctx.Err() == nil {
		if !time.Now().Before(nextClaim) {
			nextClaim = time.Now().Add(c.opts.ClaimEvery)
			c.claim(ctx, key)
		}
		start := ">"
		block := c.opts.Block
		if ownPending {
			start, block = "0", -1
		}
		res, err := rdb.XReadGroup(ctx, &redis.XReadGroupArgs{
			Group: StreamGroup, Consumer: c.name, Streams: []string{key, start},
			Count: 100, Block: block,
		}).Result()
		if errors.Is(err, redis.Nil) {
			continue
		}
		if err != nil {
			c.fail(ctx, fmt.Errorf("stream %s: read: %w", key, err))
			continue
		}
		var msgs []redis.XMessage
		for _, st := range res {
			msgs = append(msgs, st.Messages...)
		}
		if ownPending && len(msgs) == 0 {
			ownPending = false
			continue
		}
		if ownPending {
			// With id 0, deleted entries come back with no values.
			msgs = slices.DeleteFunc(msgs, func(m redis.XMessage) bool { return m.Values == nil })
			if len(msgs) == 0 {
				ownPending = false
				continue
			}
		}
		if !c.process(ctx, key, msgs) && ownPending {
			// Some stay pending (Redis failed): go on with new entries and
			// leave them to a later claim.
			ownPending = false
		}
	}
}

// claim takes entries idle longer than ClaimIdle from any consumer.
func (c *streamConsumer) claim(ctx context.Context, key string) {
	start := "0-0"
	for ctx.Err() == nil {
		msgs, next, err := c.s.rdb.XAutoClaim(ctx, &redis.XAutoClaimArgs{
			Stream: key, Group: StreamGroup, Consumer: c.name,
			MinIdle: c.opts.ClaimIdle, Start: start, Count: 100,
		}).Result()
		if err != nil {
			c.fail(ctx, fmt.Errorf("stream %s: claim: %w", key, err))
			return
		}
		msgs = slices.DeleteFunc(msgs, func(m redis.XMessage) bool { return m.Values == nil })
		c.opts.Stats.Claimed.Add(int64(len(msgs)))
		if len(msgs) > 0 {
			c.process(ctx, key, msgs)
		}
		if next == "0-0" || next == "" {
			return
		}
		start = next
	}
}

// process applies a batch; it reports whether every entry was acknowledged.
func (c *streamConsumer) process(ctx context.Context, key string, msgs []redis.XMessage) bool {
	events := make([]Event, 0, len(msgs))
	good := make([]redis.XMessage, 0, len(msgs))
	all := true
	for _, m := range msgs {
		ev, err := c.parse(m)
		if err != nil {
			all = c.dead(ctx, m, err) && all
			continue
		}
		events = append(events, ev)
		good = append(good, m)
	}
	if len(events) == 0 {
		return all
	}
	// Nobody reads the ranks of a stream's events: they are not asked for.
	results, err := c.s.Apply(ctx, c.b.ID, events, ApplyOptions{NoRanks: true})
	if err != nil {
		c.fail(ctx, fmt.Errorf("stream %s: apply: %w", key, err))
		return false
	}
	if c.opts.beforeAck != nil && !c.opts.beforeAck(c.b.ID, len(events)) {
		return false
	}
	ack := make([]string, 0, len(good))
	for i, r := range results {
		switch {
		case r.Err == nil:
			if r.Duplicate {
				c.opts.Stats.Duplicates.Add(1)
			} else {
				c.opts.Stats.Applied.Add(1)
			}
			ack = append(ack, good[i].ID)
		case ErrorCode(r.Err) == EUNAVAILABLE:
			all = false // left pending; re-read later and deduplicated by id
		default:
			all = c.dead(ctx, good[i], r.Err) && all
		}
	}
	if len(ack) > 0 {
		if err := c.s.rdb.XAck(ctx, key, StreamGroup, ack...).Err(); err != nil {
			c.fail(ctx, fmt.Errorf("stream %s: ack: %w", key, err))
			return false
		}
	}
	return all
}

// dead dead-letters and acknowledges one entry.
func (c *streamConsumer) dead(ctx context.Context, m redis.XMessage, cause error) bool {
	keys, args := c.s.deadRequest(c.b, StreamGroup, m.ID, ErrorMessage(cause), m.Values)
	// Keyed: dead.lua moves the entry only while it is pending, so a
	// resent call cannot dead-letter it twice.
	if _, err := c.s.runWrite(ctx, deadScript, true, keys, args...); err != nil {
		c.fail(ctx, fmt.Errorf("stream %s: dead letter %s: %w", keys[0], m.ID, err))
		return false
	}
	c.opts.Stats.Dead.Add(1)
	return true
}

// fail reports err and waits a moment so a Redis outage is not a busy loop.
func (c *streamConsumer) fail(ctx context.Context, err error) {
	if ctx.Err() != nil {
		return
	}
	c.onError(err)
	select {
	case <-ctx.Done():
	case <-time.After(500 * time.Millisecond):
	}
}

// parse reads one entry exactly as the JSON API reads an event.
func (c *streamConsumer) parse(m redis.XMessage) (Event, error) {
	var ev Event
	text := func(f string) (string, bool, error) {
		v, ok := m.Values[f]
		if !ok {
			return "", false, nil
		}
		s, isString := v.(string)
		if !isString {
			return "", true, Errorf(EINVALID, "field %q must be text", f)
		}
		return s, true, nil
	}
	for _, f := range sortedFields(m.Values) {
		switch f {
		case "member", "value", "name", "id", "at", "segments":
		default:
			return ev, Errorf(EINVALID, "unknown field %q; an entry has member, value, name, id, at, segments", f)
		}
	}
	member, ok, err := text("member")
	if err != nil {
		return ev, err
	}
	if !ok {
		return ev, Errorf(EINVALID, "field \"member\" is required")
	}
	if err := ValidateMember(member); err != nil {
		return ev, err
	}
	ev.Member = member
	value, ok, err := text("value")
	if err != nil {
		return ev, err
	}
	if !ok {
		return ev, Errorf(EINVALID, "field \"value\" is required")
	}
	if ev.Value, err = c.b.ParseScore(value); err != nil {
		return ev, err
	}
	if name, ok, err := text("name"); err != nil {
		return ev, err
	} else if ok {
		if err := ValidateName(name); err != nil {
			return ev, err
		}
		ev.Name = name
	}
	ev.ID = m.ID
	if id, ok, err := text("id"); err != nil {
		return ev, err
	} else if ok {
		if err := ValidateEventID(id); err != nil {
			return ev, err
		}
		ev.ID = id
	}
	if at, ok, err := text("at"); err != nil {
		return ev, err
	} else if ok {
		t, err := ParseInstant(at)
		if err != nil {
			return ev, Errorf(EINVALID, "at %q is not an RFC 3339 time like 2026-03-01T12:00:00Z", at)
		}
		ev.At = t
	}
	if segs, ok, err := text("segments"); err != nil {
		return ev, err
	} else if ok {
		if ev.Segments, err = parseSegmentsJSON(segs); err != nil {
			return ev, err
		}
		if err := c.b.ValidateSegments(ev.Segments); err != nil {
			return ev, err
		}
	}
	return ev, nil
}

// sortedFields returns the field names of an entry in a stable order.
func sortedFields(values map[string]any) []string {
	fields := make([]string, 0, len(values))
	for f := range values {
		fields = append(fields, f)
	}
	slices.Sort(fields)
	return fields
}
