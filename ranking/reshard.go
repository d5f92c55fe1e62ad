package ranking

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Reshard moves a board's data from the shard count it is written with to
// another (contract 17), while no instance serves the board. Its position
// is kept in the board's reshard record, so a run that stops (a crash, a
// cancelled context) continues where it was when run again:
//
//  1. snap: each day's all-view snapshot is rebuilt for the new layout from
//     the old one (the merged midnight ranks, shard_read.go's
//     snapshotPrevs), before anything else is written;
//  2. copy: every old shard's keys are walked with SCAN, a page at a time;
//     each member's entries (period codes, exact times, names, search
//     entries, segment values, idempotency records, removal outbox
//     entries) go to its new shard with their expiry; what is about a
//     shard as a whole (registry, built markers, segment values seen) goes
//     to every new shard;
//  3. verify: every period of every view and segment has the same number
//     of members and the same sum of codes in both layouts, and every
//     other key holding members (exact times, names, search entries,
//     segment records) as many entries;
//  4. delete: the old layout's keys go (members only, where an old shard's
//     tag is also a new shard's), then the shard count record says the
//     new count.
//
// Every step but the outbox copy writes what it would write again, so a
// page done twice is harmless. Old and new shards may share a tag (shard
// i of N and shard j of M hash to the same slot range): a member belongs
// to a tag in a layout only when the layout's hash puts it there, which
// is how every step tells old entries from new ones under one tag.

// Reshard's pages: keys per SCAN, entries per ZSCAN, HSCAN and XRANGE
// (variables so that tests take every path on small boards).
var (
	reshardKeysPage    int64 = 200
	reshardEntriesPage int64 = 500
)

// ReshardOptions tune Reshard.
type ReshardOptions struct {
	// Log receives one line per phase and per finished shard.
	Log func(msg string)
	// Step is called after each step whose position is saved, with the
	// phase; tests stop a run there.
	Step func(phase string)
}

// ReshardReport says what a Reshard did.
type ReshardReport struct {
	From, To int
	Resumed  bool
	Keys     int   // keys verified: periods, exact times, names, search entries, segment records
	Entries  int64 // their entries
}

// ErrServed is the error of a reshard refused while an instance serves
// the board.
var ErrServed = errors.New("the board is being served")

// reshardRun is one run's state.
type reshardRun struct {
	s        *Store
	b        *Board
	old, new *Board
	prog     string // the progress key
	opts     ReshardOptions
}

// Reshard moves board boardID's data to `to` shards; see above.
func (s *Store) Reshard(ctx context.Context, boardID string, to int, opts ReshardOptions) (ReshardReport, error) {
	b, err := s.board(boardID)
	if err != nil {
		return ReshardReport{}, err
	}
	if to < 1 || to > MaxShards {
		return ReshardReport{}, Errorf(EINVALID, "shards must be from 1 to %d, got %d", MaxShards, to)
	}
	if b.League != nil {
		return ReshardReport{}, Errorf(EINVALID, "board %q has a league: its cohorts are filled per shard and cannot be moved; a board with a league keeps its shard count", b.ID)
	}
	if opts.Log == nil {
		opts.Log = func(string) {}
	}
	if opts.Step == nil {
		opts.Step = func(string) {}
	}
	k := s.keysOf(b)
	r := &reshardRun{s: s, b: b, prog: k.reshardProgress(), opts: opts}
	prog, err := s.rdb.HGetAll(ctx, r.prog).Result()
	if err != nil {
		return ReshardReport{}, wrapRedis(err)
	}
	rep := ReshardReport{To: to, Resumed: len(prog) > 0}
	if len(prog) == 0 {
		from, err := s.RecordedShards(ctx, b.ID)
		if err != nil {
			return rep, err
		}
		if from == 0 {
			if err := r.refuseServed(ctx); err != nil {
				return rep, err
			}
			// No data: nothing to move, the record is all there is.
			if err := s.rdb.HSet(ctx, k.metaRecord(), "shards", to).Err(); err != nil {
				return rep, wrapRedis(err)
			}
			opts.Log(fmt.Sprintf("board %s has no data: recorded %d shards", b.ID, to))
			rep.From = to
			return rep, nil
		}
		if from == to {
			return rep, Errorf(EINVALID, "board %q is already written with %d shards", b.ID, to)
		}
		// The record goes first, then the check for instances: an instance
		// starting now checks the record after announcing itself
		// (CheckShards), so one of the two sees the other.
		if err := s.rdb.HSet(ctx, r.prog, "from", from, "to", to, "phase", "snap", "shard", 0, "cursor", "0").Err(); err != nil {
			return rep, wrapRedis(err)
		}
		prog = map[string]string{"from": strconv.Itoa(from), "to": strconv.Itoa(to), "phase": "snap", "shard": "0", "cursor": "0"}
		if err := r.refuseServed(ctx); err != nil {
			_ = s.rdb.Del(ctx, r.prog).Err()
			return rep, err
		}
	} else if err := r.refuseServed(ctx); err != nil {
		return rep, err
	}
	from, _ := strconv.Atoi(prog["from"])
	if pto, _ := strconv.Atoi(prog["to"]); pto != to {
		return rep, Errorf(EINVALID, "board %q: a reshard from %d to %d shards is under way; run it again with --shards %d to finish it", b.ID, from, pto, pto)
	}
	rep.From = from
	r.old, r.new = withShards(b, from), withShards(b, to)
	if rep.Resumed {
		opts.Log(fmt.Sprintf("board %s: resuming the move from %d to %d shards at phase %s", b.ID, from, to, prog["phase"]))
	}
	phase := prog["phase"]
	shard, _ := strconv.Atoi(prog["shard"])
	cursor, _ := strconv.ParseUint(prog["cursor"], 10, 64)
	if phase == "snap" {
		if err := r.snapshots(ctx); err != nil {
			return rep, err
		}
		if err := r.save(ctx, "copy", 0, 0); err != nil {
			return rep, err
		}
		phase, shard, cursor = "copy", 0, 0
		opts.Step("snap")
	}
	if phase == "copy" {
		if err := r.walk(ctx, "copy", shard, cursor, r.copyKey); err != nil {
			return rep, err
		}
		if err := r.keepCommonMarkers(ctx); err != nil {
			return rep, err
		}
		if err := r.save(ctx, "verify", 0, 0); err != nil {
			return rep, err
		}
		phase, shard, cursor = "verify", 0, 0
	}
	if phase == "verify" {
		if rep.Keys, rep.Entries, err = r.verify(ctx); err != nil {
			var e *Error
			if errors.As(err, &e) && e.Code == EINTERNAL {
				// A difference: the next run copies again, then checks.
				if serr := r.save(ctx, "copy", 0, 0); serr != nil {
					return rep, serr
				}
			}
			return rep, err
		}
		opts.Log(fmt.Sprintf("board %s: verified %d keys, %d entries: counts and sums match", b.ID, rep.Keys, rep.Entries))
		if err := r.save(ctx, "delete", 0, 0); err != nil {
			return rep, err
		}
		phase, shard, cursor = "delete", 0, 0
		opts.Step("verify")
	}
	if phase == "delete" {
		if err := r.walk(ctx, "delete", shard, cursor, r.deleteKey); err != nil {
			return rep, err
		}
	}
	if err := s.rdb.HSet(ctx, k.metaRecord(), "shards", to).Err(); err != nil {
		return rep, wrapRedis(err)
	}
	if err := s.rdb.Del(ctx, r.prog).Err(); err != nil {
		return rep, wrapRedis(err)
	}
	opts.Log(fmt.Sprintf("board %s: now written with %d shards; set shards: %d in the boards file before starting instances", b.ID, to, to))
	return rep, nil
}

// withShards is a copy of b laid out over n shards.
func withShards(b *Board, n int) *Board {
	c := *b
	c.Shards = n
	c.tags = shardTags(b.ID, n)
	return &c
}

// refuseServed is ErrServed, naming the instances, while any serves.
func (r *reshardRun) refuseServed(ctx context.Context) error {
	servers, err := r.s.Servers(ctx, r.b.ID)
	if err != nil || len(servers) == 0 {
		return err
	}
	names := make([]string, len(servers))
	for i, sv := range servers {
		names[i] = fmt.Sprintf("%s (until %s)", sv.Instance, sv.Until.UTC().Format(time.RFC3339))
	}
	return fmt.Errorf("board %q: %w by %s; stop those instances (their word lasts at most %s after they stop) and run reshard again",
		r.b.ID, ErrServed, strings.Join(names, ", "), ServingTTL)
}

// save records the position: phase, old shard and its SCAN cursor.
func (r *reshardRun) save(ctx context.Context, phase string, shard int, cursor uint64) error {
	return wrapRedis(r.s.rdb.HSet(ctx, r.prog, "phase", phase, "shard", shard, "cursor", strconv.FormatUint(cursor, 10)).Err())
}

// tagOf is the tag (without braces) of shard i of board l.
func tagOf(l *Board, i int) string {
	if !l.Sharded() {
		return l.ID
	}
	return l.tags[i]
}

// newIndex is the new layout's shard whose tag is tag, or -1.
func (r *reshardRun) newIndex(tag string) int {
	for j := range r.new.Shards {
		if tagOf(r.new, j) == tag {
			return j
		}
	}
	return -1
}

// scanner is the node holding tag's keys: SCAN lists one node's keys.
func (r *reshardRun) scanner(ctx context.Context, tag string) (redis.Cmdable, error) {
	if cc, ok := r.s.rdb.(*redis.ClusterClient); ok {
		c, err := cc.MasterForKey(ctx, "{"+tag+"}")
		return c, wrapRedis(err)
	}
	return r.s.rdb, nil
}

// globEscape escapes SCAN MATCH's special characters.
func globEscape(s string) string {
	var sb strings.Builder
	for _, c := range s {
		if strings.ContainsRune(`*?[]\`, c) {
			sb.WriteByte('\\')
		}
		sb.WriteRune(c)
	}
	return sb.String()
}

// walk runs fn on every key of the old layout's shards from shard and
// cursor on, a SCAN page at a time, saving the position after each page.
func (r *reshardRun) walk(ctx context.Context, phase string, shard int, cursor uint64, fn func(ctx context.Context, i int, key, suffix string) error) error {
	for i := shard; i < r.old.Shards; i++ {
		tag := tagOf(r.old, i)
		node, err := r.scanner(ctx, tag)
		if err != nil {
			return err
		}
		base := r.s.prefix + "{" + tag + "}:"
		match := globEscape(base) + "*"
		for {
			keys, next, err := node.Scan(ctx, cursor, match, reshardKeysPage).Result()
			if err != nil {
				return wrapRedis(err)
			}
			slices.Sort(keys)
			for _, key := range slices.Compact(keys) {
				if err := fn(ctx, i, key, strings.TrimPrefix(key, base)); err != nil {
					return err
				}
			}
			cursor = next
			if cursor == 0 {
				break
			}
			if err := r.save(ctx, phase, i, cursor); err != nil {
				return err
			}
			r.opts.Step(phase)
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if err := r.save(ctx, phase, i+1, 0); err != nil {
			return err
		}
		r.opts.Log(fmt.Sprintf("board %s: %s: old shard %d of %d done", r.b.ID, phase, i+1, r.old.Shards))
		r.opts.Step(phase)
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	return nil
}

// Kinds of key, by what follows "<prefix>{<tag>}:".
const (
	kindBoard       = iota // about the board as a whole: stays under {<board>}
	kindZMember            // zset, element = member (z:)
	kindHMember            // hash, field = member or member\0... (x:, sm)
	kindNames              // hash, field = member or member\0k (n)
	kindIndex              // zset, element = text\0member (ni)
	kindIndexBlocks        // hash, value = text\0member lines (nb): copied to ni
	kindIndexBounds        // zset of nb's bounds (nx): dropped with nb
	kindIDRec              // string, value = member\n... (e:)
	kindUnion              // about a shard as a whole: to every new shard (k, r:, seg:, ni:ids)
	kindSnap               // a day's snapshot (snap:, snapz:, snapn:): rebuilt by snapshots
	kindSweep              // the sweep's and compaction's positions (sw, nc): dropped
	kindOutbox             // a shard's outbox (out): member.removed entries
)

// kindOf classifies a key suffix; ok false for one reshard does not know.
func (r *reshardRun) kindOf(suffix string, boardTag bool) (kind int, ok bool) {
	head, _, _ := strings.Cut(suffix, ":")
	switch head {
	case "z":
		return kindZMember, true
	case "x", "sm":
		return kindHMember, true
	case "n":
		return kindNames, true
	case "ni":
		if suffix == "ni:ids" {
			return kindUnion, true
		}
		return kindIndex, true
	case "nb":
		return kindIndexBlocks, true
	case "nx":
		return kindIndexBounds, true
	case "e":
		return kindIDRec, true
	case "k", "r", "seg":
		return kindUnion, true
	case "snap", "snapz", "snapn":
		return kindSnap, true
	case "sw", "nc":
		return kindSweep, true
	case "out":
		if boardTag {
			return kindBoard, true
		}
		return kindOutbox, true
	case "meta", "serving", "reshard", "res", "rs", "rm", "in", "dead", "mv", "lr":
		return kindBoard, boardTag
	}
	return 0, false
}

// memberOf is the member an element, field or value of a kind is about.
func memberOf(kind int, s string) string {
	switch kind {
	case kindNames, kindHMember:
		// n: <member>\0k holds the folded name; sm: <member>\0p the
		// segment names of the member's record.
		m, _, _ := strings.Cut(s, "\x00")
		return m
	case kindIndex:
		_, m, _ := strings.Cut(s, "\x00")
		return m
	case kindIDRec:
		m, _, _ := strings.Cut(s, "\n")
		return m
	}
	return s
}

// copyKey copies one key of old shard i to the new layout.
func (r *reshardRun) copyKey(ctx context.Context, i int, key, suffix string) error {
	s := r.s
	oldTag := tagOf(r.old, i)
	kind, ok := r.kindOf(suffix, oldTag == r.b.ID)
	if !ok {
		return Errorf(EINTERNAL, "board %q: key %q is of no kind reshard knows; nothing deleted, the old layout is intact", r.b.ID, key)
	}
	if kind == kindBoard || kind == kindSnap || kind == kindSweep || kind == kindIndexBounds {
		return nil
	}
	pttl, err := s.rdb.PTTL(ctx, key).Result()
	if err != nil {
		return wrapRedis(err)
	}
	if pttl == -2*time.Nanosecond || pttl == -2*time.Millisecond {
		return nil // gone since the SCAN
	}
	newKey := func(j int) string { return string(s.shardKeys(r.new, j)) + suffix }
	expire := func(p redis.Pipeliner, k string) {
		if pttl > 0 {
			p.PExpire(ctx, k, pttl)
		}
	}
	// mine: the entry's member is old shard i's and moves elsewhere.
	target := func(m string) (int, bool) {
		if ShardOf(m, r.old.Shards) != i {
			return 0, false // a new shard's entry under a shared tag
		}
		j := ShardOf(m, r.new.Shards)
		return j, tagOf(r.new, j) != oldTag
	}
	switch kind {
	case kindUnion:
		typ, err := s.rdb.Type(ctx, key).Result()
		if err != nil {
			return wrapRedis(err)
		}
		if typ == "string" {
			v, err := s.rdb.Get(ctx, key).Result()
			if errors.Is(err, redis.Nil) {
				return nil
			} else if err != nil {
				return wrapRedis(err)
			}
			_, err = s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
				for j := range r.new.Shards {
					p.Set(ctx, newKey(j), v, max(pttl, 0))
				}
				return nil
			})
			return wrapRedis(err)
		}
		return r.scanZ(ctx, key, func(p redis.Pipeliner, zs []redis.Z) {
			for j := range r.new.Shards {
				p.ZAdd(ctx, newKey(j), zs...)
				expire(p, newKey(j))
			}
		})
	case kindZMember, kindIndex:
		return r.scanZ(ctx, key, func(p redis.Pipeliner, zs []redis.Z) {
			per := map[int][]redis.Z{}
			for _, z := range zs {
				if j, move := target(memberOf(kind, z.Member.(string))); move {
					per[j] = append(per[j], z)
				}
			}
			for j, zz := range per {
				p.ZAdd(ctx, newKey(j), zz...)
				expire(p, newKey(j))
			}
		})
	case kindHMember, kindNames:
		var cursor uint64
		for {
			kv, next, err := s.rdb.HScan(ctx, key, cursor, "", reshardEntriesPage).Result()
			if err != nil {
				return wrapRedis(err)
			}
			per := map[int][]any{}
			for q := 0; q+1 < len(kv); q += 2 {
				if j, move := target(memberOf(kind, kv[q])); move {
					per[j] = append(per[j], kv[q], kv[q+1])
				}
			}
			if _, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
				for j, fv := range per {
					p.HSet(ctx, newKey(j), fv...)
					expire(p, newKey(j))
				}
				return nil
			}); err != nil {
				return wrapRedis(err)
			}
			if cursor = next; cursor == 0 {
				return nil
			}
		}
	case kindIndexBlocks:
		// The new shard's ni takes the moving entries: search reads both.
		return r.scanIndexBlocks(ctx, key, func(p redis.Pipeliner, entries []string) {
			for _, e := range entries {
				if j, move := target(memberOf(kindIndex, e)); move {
					p.ZAdd(ctx, string(s.shardKeys(r.new, j))+"ni", redis.Z{Member: e})
				}
			}
		})
	case kindIDRec:
		v, err := s.rdb.Get(ctx, key).Result()
		if errors.Is(err, redis.Nil) {
			return nil
		} else if err != nil {
			return wrapRedis(err)
		}
		if j, move := target(memberOf(kind, v)); move {
			return wrapRedis(s.rdb.Set(ctx, newKey(j), v, max(pttl, 0)).Err())
		}
		return nil
	case kindOutbox:
		return r.copyOutbox(ctx, i, key)
	}
	return nil
}

// keepCommonMarkers drops from the new layout a window's built marker
// that some old shard lacks: the old layout read that window as not built
// (shard_read.go's shardsBuilt), and so does the new one, until a build
// makes it whole from the day totals.
func (r *reshardRun) keepCommonMarkers(ctx context.Context) error {
	if !r.old.Sharded() {
		return nil
	}
	s := r.s
	for j := range r.new.Shards {
		tag := tagOf(r.new, j)
		node, err := r.scanner(ctx, tag)
		if err != nil {
			return err
		}
		base := s.prefix + "{" + tag + "}:"
		var cursor uint64
		for {
			keys, next, err := node.Scan(ctx, cursor, globEscape(base+"r:")+"*", reshardKeysPage).Result()
			if err != nil {
				return wrapRedis(err)
			}
			for _, key := range keys {
				suffix := strings.TrimPrefix(key, base)
				for i := range r.old.Shards {
					n, err := s.rdb.Exists(ctx, string(s.shardKeys(r.old, i))+suffix).Result()
					if err != nil {
						return wrapRedis(err)
					}
					if n == 0 {
						if err := s.rdb.Del(ctx, key).Err(); err != nil {
							return wrapRedis(err)
						}
						break
					}
				}
			}
			if cursor = next; cursor == 0 {
				break
			}
		}
	}
	return nil
}

// scanIndexBlocks hands fn the entries of the search index's blocks in key, an
// HSCAN page at a time, in one pipeline.
func (r *reshardRun) scanIndexBlocks(ctx context.Context, key string, fn func(p redis.Pipeliner, entries []string)) error {
	var cursor uint64
	for {
		kv, next, err := r.s.rdb.HScan(ctx, key, cursor, "", reshardEntriesPage).Result()
		if err != nil {
			return wrapRedis(err)
		}
		var entries []string
		for q := 1; q < len(kv); q += 2 {
			// A block is "\n<entry>\n<entry>\n": the empty ends are no entries.
			for _, e := range strings.Split(kv[q], "\n") {
				if e != "" {
					entries = append(entries, e)
				}
			}
		}
		if len(entries) > 0 {
			if _, err := r.s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
				fn(p, entries)
				return nil
			}); err != nil {
				return wrapRedis(err)
			}
		}
		if cursor = next; cursor == 0 {
			return nil
		}
	}
}

// scanZ hands fn key's entries a ZSCAN page at a time, in one pipeline.
func (r *reshardRun) scanZ(ctx context.Context, key string, fn func(p redis.Pipeliner, zs []redis.Z)) error {
	var cursor uint64
	for {
		flat, next, err := r.s.rdb.ZScan(ctx, key, cursor, "", reshardEntriesPage).Result()
		if err != nil {
			return wrapRedis(err)
		}
		zs := make([]redis.Z, 0, len(flat)/2)
		for q := 0; q+1 < len(flat); q += 2 {
			sc, err := strconv.ParseFloat(flat[q+1], 64)
			if err != nil {
				return Errorf(EINTERNAL, "%s: score %q", key, flat[q+1])
			}
			zs = append(zs, redis.Z{Member: flat[q], Score: sc})
		}
		if len(zs) > 0 {
			if _, err := r.s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
				fn(p, zs)
				return nil
			}); err != nil {
				return wrapRedis(err)
			}
		}
		if cursor = next; cursor == 0 {
			return nil
		}
	}
}

// copyOutbox moves old shard i's member.removed entries not yet relayed
// to the outbox of the member's new shard (the board's outbox when the
// new layout has one shard). Entries get new ids there, so the progress
// record keeps the last copied id: a crash between the two writes may
// send one member.removed twice, which webhooks already allow (at least
// once).
func (r *reshardRun) copyOutbox(ctx context.Context, i int, key string) error {
	s := r.s
	field := "out:" + strconv.Itoa(i)
	last, err := s.rdb.HGet(ctx, r.prog, field).Result()
	if errors.Is(err, redis.Nil) {
		last = "-"
	} else if err != nil {
		return wrapRedis(err)
	} else {
		last = "(" + last
	}
	for {
		msgs, err := s.rdb.XRangeN(ctx, key, last, "+", reshardEntriesPage).Result()
		if err != nil {
			return wrapRedis(err)
		}
		if len(msgs) == 0 {
			return nil
		}
		for _, m := range msgs {
			member, _ := m.Values["member"].(string)
			if ShardOf(member, r.old.Shards) != i {
				continue
			}
			j := ShardOf(member, r.new.Shards)
			dst := s.shardKeys(r.new, j).outbox()
			if dst == key {
				continue
			}
			if _, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
				p.XAdd(ctx, &redis.XAddArgs{Stream: dst, MaxLen: 10000, Approx: true, Values: m.Values})
				return nil
			}); err != nil {
				return wrapRedis(err)
			}
			if err := s.rdb.HSet(ctx, r.prog, field, m.ID).Err(); err != nil {
				return wrapRedis(err)
			}
		}
		last = "(" + msgs[len(msgs)-1].ID
	}
}

// dropEntries removes, a page at a time, the entries of key (a sorted set
// when zset, else a hash) for which gone says so.
func (r *reshardRun) dropEntries(ctx context.Context, key string, zset bool, gone func(field string) bool) error {
	s := r.s
	var cursor uint64
	for {
		var flat []string
		var next uint64
		var err error
		if zset {
			flat, next, err = s.rdb.ZScan(ctx, key, cursor, "", reshardEntriesPage).Result()
		} else {
			flat, next, err = s.rdb.HScan(ctx, key, cursor, "", reshardEntriesPage).Result()
		}
		if err != nil {
			return wrapRedis(err)
		}
		var drop []string
		for q := 0; q+1 < len(flat); q += 2 {
			if gone(flat[q]) {
				drop = append(drop, flat[q])
			}
		}
		if len(drop) > 0 {
			if zset {
				err = s.rdb.ZRem(ctx, key, anys(drop)...).Err()
			} else {
				err = s.rdb.HDel(ctx, key, drop...).Err()
			}
			if err != nil {
				return wrapRedis(err)
			}
		}
		if cursor = next; cursor == 0 {
			return nil
		}
	}
}

// anys converts strings to a command's arguments.
func anys(xs []string) []any {
	out := make([]any, len(xs))
	for i, x := range xs {
		out[i] = x
	}
	return out
}

// deleteKey removes one key of old shard i, or, where the tag is also a
// new shard's, the entries of members the new layout puts elsewhere.
func (r *reshardRun) deleteKey(ctx context.Context, i int, key, suffix string) error {
	s := r.s
	oldTag := tagOf(r.old, i)
	kind, ok := r.kindOf(suffix, oldTag == r.b.ID)
	if !ok || kind == kindBoard {
		return nil
	}
	j := r.newIndex(oldTag)
	if j < 0 {
		return wrapRedis(s.rdb.Unlink(ctx, key).Err())
	}
	// A tag both layouts use: keep what the new layout puts here.
	stays := func(m string) bool { return ShardOf(m, r.new.Shards) == j }
	switch kind {
	case kindSweep, kindIndexBounds:
		return wrapRedis(s.rdb.Unlink(ctx, key).Err())
	case kindIndexBlocks:
		// What stays goes to ni, as the copy put what moved; the blocks go.
		ni := string(s.shardKeys(r.new, j)) + "ni"
		if err := r.scanIndexBlocks(ctx, key, func(p redis.Pipeliner, entries []string) {
			for _, e := range entries {
				if stays(memberOf(kindIndex, e)) {
					p.ZAdd(ctx, ni, redis.Z{Member: e})
				}
			}
		}); err != nil {
			return err
		}
		return wrapRedis(s.rdb.Unlink(ctx, key).Err())
	case kindZMember, kindIndex:
		return r.dropEntries(ctx, key, true, func(f string) bool { return !stays(memberOf(kind, f)) })
	case kindHMember, kindNames:
		return r.dropEntries(ctx, key, false, func(f string) bool { return !stays(memberOf(kind, f)) })
	case kindIDRec:
		v, err := s.rdb.Get(ctx, key).Result()
		if errors.Is(err, redis.Nil) {
			return nil
		} else if err != nil {
			return wrapRedis(err)
		}
		if !stays(memberOf(kind, v)) {
			return wrapRedis(s.rdb.Unlink(ctx, key).Err())
		}
	case kindOutbox:
		last := "-"
		for {
			msgs, err := s.rdb.XRangeN(ctx, key, last, "+", reshardEntriesPage).Result()
			if err != nil {
				return wrapRedis(err)
			}
			if len(msgs) == 0 {
				return nil
			}
			var gone []string
			for _, m := range msgs {
				member, _ := m.Values["member"].(string)
				if ShardOf(member, r.old.Shards) == i && !stays(member) {
					gone = append(gone, m.ID)
				}
			}
			if len(gone) > 0 {
				if err := s.rdb.XDel(ctx, key, gone...).Err(); err != nil {
					return wrapRedis(err)
				}
			}
			last = "(" + msgs[len(msgs)-1].ID
		}
	}
	// kindUnion and kindSnap under a shared tag are the new layout's.
	return nil
}

// keySum is one key's entries and, for a period, the sum of their codes.
type keySum struct {
	n   int64
	sum *big.Float
}

// sums counts the entries of every key of layout l that holds members
// (periods, exact times, names, search entries, segment records), and
// adds up the periods' codes; each entry counts under the shard the
// layout's hash gives its member.
func (r *reshardRun) sums(ctx context.Context, l *Board) (map[string]*keySum, error) {
	out := map[string]*keySum{}
	for i := range l.Shards {
		tag := tagOf(l, i)
		node, err := r.scanner(ctx, tag)
		if err != nil {
			return nil, err
		}
		base := r.s.prefix + "{" + tag + "}:"
		var cursor uint64
		for {
			keys, next, err := node.Scan(ctx, cursor, globEscape(base)+"*", reshardKeysPage).Result()
			if err != nil {
				return nil, wrapRedis(err)
			}
			slices.Sort(keys)
			for _, key := range slices.Compact(keys) {
				suffix := strings.TrimPrefix(key, base)
				kind, _ := r.kindOf(suffix, tag == r.b.ID)
				if kind != kindZMember && kind != kindIndex && kind != kindHMember && kind != kindNames && kind != kindIndexBlocks {
					continue
				}
				if kind == kindIndexBlocks {
					suffix = "ni" // the copy moves the blocks' entries to ni
				}
				ks := out[suffix]
				if ks == nil {
					ks = &keySum{sum: new(big.Float).SetPrec(2048)}
					out[suffix] = ks
				}
				if err := r.sumKey(ctx, key, kind, i, l.Shards, ks); err != nil {
					return nil, err
				}
			}
			if cursor = next; cursor == 0 {
				break
			}
		}
	}
	for k, ks := range out {
		if ks.n == 0 {
			delete(out, k) // a tag's key holding only the other layout's members
		}
	}
	return out, nil
}

// sumKey adds key's entries owned by shard i of n to ks.
func (r *reshardRun) sumKey(ctx context.Context, key string, kind, i, n int, ks *keySum) error {
	if kind == kindIndexBlocks {
		// A search entry may be in ni as well as in a block (compaction
		// merges it before taking it out of ni, and a write may add it
		// again), and counts once: ni (same tag) counts it, a block only
		// when ni lacks it. Each page's ZMSCORE is answered by the time
		// the next page is handed over, so no entry is kept.
		ni := strings.TrimSuffix(key, "nb") + "ni"
		var asked []*redis.Cmd
		tally := func() {
			for _, c := range asked {
				got, _ := c.Slice() // an error fails the pipeline
				for _, v := range got {
					if v == nil {
						ks.n++
					}
				}
			}
			asked = asked[:0]
		}
		err := r.scanIndexBlocks(ctx, key, func(p redis.Pipeliner, entries []string) {
			tally()
			args := []any{"ZMSCORE", ni}
			for _, e := range entries {
				if ShardOf(memberOf(kindIndex, e), n) == i {
					args = append(args, e)
				}
			}
			if len(args) > 2 {
				asked = append(asked, p.Do(ctx, args...))
			}
		})
		tally()
		return err
	}
	if kind == kindZMember || kind == kindIndex {
		return r.scanZ(ctx, key, func(_ redis.Pipeliner, zs []redis.Z) {
			for _, z := range zs {
				if ShardOf(memberOf(kind, z.Member.(string)), n) == i {
					ks.n++
					ks.sum.Add(ks.sum, big.NewFloat(z.Score))
				}
			}
		})
	}
	var cursor uint64
	for {
		kv, next, err := r.s.rdb.HScan(ctx, key, cursor, "", reshardEntriesPage).Result()
		if err != nil {
			return wrapRedis(err)
		}
		for q := 0; q+1 < len(kv); q += 2 {
			if ShardOf(memberOf(kind, kv[q]), n) == i {
				ks.n++
			}
		}
		if cursor = next; cursor == 0 {
			return nil
		}
	}
}

// verify checks that every key holding members has as many entries in
// both layouts, and every period the same sum of codes.
func (r *reshardRun) verify(ctx context.Context) (keys int, entries int64, err error) {
	old, err := r.sums(ctx, r.old)
	if err != nil {
		return 0, 0, err
	}
	nw, err := r.sums(ctx, r.new)
	if err != nil {
		return 0, 0, err
	}
	var bad []string
	for k, o := range old {
		n := nw[k]
		switch {
		case n == nil:
			bad = append(bad, fmt.Sprintf("%s: %d entries in the old layout, none in the new", k, o.n))
		case n.n != o.n || n.sum.Cmp(o.sum) != 0:
			bad = append(bad, fmt.Sprintf("%s: %d entries summing %s in the old layout, %d summing %s in the new", k, o.n, o.sum.Text('f', 0), n.n, n.sum.Text('f', 0)))
		}
		entries += o.n
	}
	for k, n := range nw {
		if old[k] == nil {
			bad = append(bad, fmt.Sprintf("%s: %d entries in the new layout, none in the old", k, n.n))
		}
	}
	if len(bad) > 0 {
		slices.Sort(bad)
		return 0, 0, Errorf(EINTERNAL, "board %q: the layouts differ, the old one is kept (a key that expired during the move differs too; run reshard again to copy and check again): %s",
			r.b.ID, strings.Join(bad[:min(len(bad), 5)], "; "))
	}
	return len(old), entries, nil
}

// snapshots rebuilds each retained day's all-view snapshot for the new
// layout from the old one: the merged midnight state is each old shard's
// snapshot, or its current entries when it took none that day (it was
// not written since midnight); a one-shard board's snapshot holds ranks,
// which stand in for codes (they order the members the same way, equal
// ranks being shared ties). It reads every old snapshot of a day before
// writing any new one.
func (r *reshardRun) snapshots(ctx context.Context) error {
	s := r.s
	now, err := s.Now(ctx)
	if err != nil {
		return err
	}
	for _, v := range r.b.Views {
		if v.Kind != All {
			continue
		}
		for _, day := range snapshotDays(s.cfg.Calendar, now) {
			top, total, taken, err := r.midnight(ctx, v, day)
			if err != nil {
				return err
			}
			if !taken {
				continue
			}
			if err := r.writeSnapshot(ctx, v, day, top, total); err != nil {
				return err
			}
		}
	}
	return nil
}

// midnight reads the old layout's merged state at day's start: its best
// SnapshotTop (member, code) in rank order, and how many were ranked.
func (r *reshardRun) midnight(ctx context.Context, v View, day Period) (top []redis.Z, total int64, taken bool, err error) {
	s := r.s
	if !r.old.Sharded() {
		h, err := s.rdb.HGetAll(ctx, s.keysOf(r.old).snapshot(v.Name, day.ID)).Result()
		if err != nil || len(h) == 0 {
			return nil, 0, false, wrapRedis(err)
		}
		for m, rank := range h {
			n, _ := strconv.ParseInt(rank, 10, 64)
			if m == "\x00" {
				total = n
				continue
			}
			top = append(top, redis.Z{Member: m, Score: float64(n)})
		}
		sortZ(top)
		return top, total, true, nil
	}
	for i := range r.old.Shards {
		k := s.shardKeys(r.old, i)
		n, err := s.rdb.Get(ctx, k.snapshotCount(v.Name, day.ID)).Int64()
		var zs []redis.Z
		switch {
		case err == nil:
			taken = true
			total += n
			zs, err = s.rdb.ZRangeWithScores(ctx, k.snapshotCodes(v.Name, day.ID), 0, -1).Result()
		case errors.Is(err, redis.Nil):
			zkey := k.period(v.Name, AllPeriodID)
			if n, err = s.rdb.ZCard(ctx, zkey).Result(); err == nil {
				total += n
				zs, err = s.rdb.ZRangeWithScores(ctx, zkey, 0, SnapshotTop-1).Result()
			}
		}
		if err != nil {
			return nil, 0, false, wrapRedis(err)
		}
		top = append(top, zs...)
	}
	sortZ(top)
	return top[:min(len(top), SnapshotTop)], total, taken, nil
}

// sortZ sorts entries as a sorted set does: by score, then member bytes.
func sortZ(zs []redis.Z) {
	slices.SortFunc(zs, func(a, b redis.Z) int {
		if a.Score != b.Score {
			if a.Score < b.Score {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Member.(string), b.Member.(string))
	})
}

// writeSnapshot writes day's snapshot of view v in the new layout's shape
// (apply.lua's keep_day_snapshot), expiring a day after the day ends.
// Every new shard gets one, so that none reads its current entries as its
// midnight; the counts add up to total.
func (r *reshardRun) writeSnapshot(ctx context.Context, v View, day Period, top []redis.Z, total int64) error {
	s := r.s
	exp := time.UnixMilli(day.End.UnixMilli() + 86400000)
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		if !r.new.Sharded() {
			key := s.keysOf(r.new).snapshot(v.Name, day.ID)
			h := []any{"\x00", total}
			var rank int64
			for q, z := range top {
				if r.b.Ties != TiesShared || q == 0 || z.Score != top[q-1].Score {
					rank = int64(q + 1)
				}
				h = append(h, z.Member, rank)
			}
			p.Del(ctx, key)
			p.HSet(ctx, key, h...)
			p.PExpireAt(ctx, key, exp)
			return nil
		}
		per := make([][]redis.Z, r.new.Shards)
		for _, z := range top {
			j := ShardOf(z.Member.(string), r.new.Shards)
			per[j] = append(per[j], z)
		}
		rest := total
		for j := r.new.Shards - 1; j >= 0; j-- {
			k := s.shardKeys(r.new, j)
			n := int64(len(per[j]))
			if j == 0 {
				n = rest
			}
			rest -= n
			p.Del(ctx, k.snapshotCodes(v.Name, day.ID))
			if len(per[j]) > 0 {
				p.ZAdd(ctx, k.snapshotCodes(v.Name, day.ID), per[j]...)
				p.PExpireAt(ctx, k.snapshotCodes(v.Name, day.ID), exp)
			}
			p.Set(ctx, k.snapshotCount(v.Name, day.ID), n, 0)
			p.PExpireAt(ctx, k.snapshotCount(v.Name, day.ID), exp)
		}
		return nil
	})
	return wrapRedis(err)
}
