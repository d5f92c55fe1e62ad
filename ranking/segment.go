package ranking

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"regexp"
	"slices"
	"strings"

	"github.com/redis/go-redis/v9"
)

// Segment boards: how they are kept.
//
// A board may declare up to 3 segment names; an event may carry one value
// per name (`A-Za-z0-9_.-`, 1..32). Each (name, value) is a segment board:
// the board's views, periods, codecs, ties, bounds and retention, on keys
// tagged `<view>@<name>=<value>` (neither part can hold `@`, `=` or `:`, so a
// registry entry still splits at its first `:`). The tag sits in the view
// part of the key, so the scripts that take a view's keys from Go (read,
// ensure, remove) and the card's reads work on segment boards unchanged;
// only apply.lua and the card (card.go) know there are two kinds.
//
// - Write: apply.lua gets the batch's segment boards and, for each, the
//   board's candidate period rows (only their keys are sent; the rows' Lua
//   tables are made on first use). An event's targets are the board's plus,
//   for each of its segment boards, the same period of every view (for
//   windows, each built window of the segment board that covers the event's
//   day). The plan checks bounds on all of them before anything is written:
//   a refusal by any of them refuses the whole event. One `e:<id>` record
//   covers the event and its segment boards.
// - Cost per event and view: one more zset entry per segment value (its
//   period's zset; for windows its day total and its built windows, as the
//   board's). No other key per period: `update: latest` keeps exact times in
//   the board's own `x` hash under the field `<member>\0@<name>=<value>`
//   (member ids hold no NUL). Removal leaves those fields; they are read only
//   while the member has a score in that segment board, and go when the
//   hash expires. A segment period key gets its expiry and registry entry
//   in the batch that creates it (its first `ZADD` of the batch added
//   members and `ZCARD` equals their count), not on every batch (segment
//   boards are many; every later member of the key finds both set).
// - Mirrors: a member every one of whose events on the board carried the
//   same value of a name ("pure" in it) has the same code in every period of
//   every view on that segment board as on the board. `sm` keeps, beside the
//   member's latest values (field `<member>`, `name=value` lines), its pure
//   names (field `<member>\0p`); for those, apply.lua copies the board's
//   plan to the segment target (one ZADD, no ZSCORE). Purity starts only
//   with the member's first event on the board (no record and no score in
//   `all`; boards without `all` never mirror) and a name leaves it for good
//   at the first event without the same value, so `sm` is declared on every
//   batch of a board with segments. Older records have no `\0p` field:
//   never pure, always correct.
// - Windows: today's window of a segment board must be built before a
//   write, as the board's: apply.lua answers `-2` with every unbuilt one
//   and Go runs ensure.lua for each (the segment board's own day totals and
//   marker). A value never written has no data, so its windows are empty:
//   the write that first fills today's marks it built itself instead of
//   asking for a build. `PrepareWindows` prepares the board's windows only;
//   a segment board's window is built by its first write or read of the day.
// - Values seen: `seg:<name>`, added by the write that first uses a value. A
//   new value when the index already holds 10,000 is refused
//   (`invalid_argument`) and nothing is written or built for it, so no
//   client can grow the keyspace without bound. `SegmentValues` reads it.
//   On a sharded board each shard keeps and caps its own (shardSegValues).
// - Reads: `Page`, `Members`, `Member`, `RankCard` take a query value
//   (`PageQuery`, ...) whose `Segment` names the segment board, and
//   `Scored` a `Segment`; the zero Segment is the board. An unknown name
//   is `invalid_argument`; a value never written reads as empty, and a read
//   never builds a window of a value not in `seg:<name>` (reads are public
//   and must not create keys for values a client makes up).
// - Rank card: `sm` holds each member's latest value of each name; Go reads
//   it (once per member: the Store keeps at most 4,096 records, the card
//   checks the one it used), and reads the member's rank in each of those
//   segment boards within the card's snapshot (`RankCard.Segments`, only those
//   where it has a score). `sm` is bounded by the members and is not cleared
//   by removal (the card lists only segment boards where the member scores);
//   the member sweep (below) forgets the records of members who no longer
//   score.
// - Results are recorded for the board only; removal reaches segment boards
//   through the registry.
// - Throughput: every segment value is one more ZSCORE and ZADD per view per
//   event, about as much Redis work as the board's own view, so 2 values per
//   event on a 5-view board cost roughly three times one plain event
//   (`RATIO ingest_2seg_vs_0seg` in docs/benchmarks.md).

// Segment names one segment board of a board: the members' events tagged
// with Name = Value (country = FR), ranked on their own with the board's
// views, periods, ties, bounds and retention. The zero Segment is the
// whole board.
type Segment struct {
	Name  string
	Value string
}

// IsZero reports whether s is the whole board.
func (s Segment) IsZero() bool { return s.Name == "" && s.Value == "" }

// String is the segment as reads take it: "NAME:VALUE" ("" for the board).
func (s Segment) String() string {
	if s.IsZero() {
		return ""
	}
	return s.Name + ":" + s.Value
}

// tag is what a segment board's keys add to the view name:
// "<view>@<name>=<value>". Neither part can hold '@', '=' or ':', so the
// registry entry "<view>@<name>=<value>:<period>" still splits at its
// first ':' and names exactly one view and segment.
func (s Segment) tag() string {
	if s.IsZero() {
		return ""
	}
	return "@" + s.Name + "=" + s.Value
}

// SegmentRank is a member's standing in one segment board of a view.
type SegmentRank struct {
	Segment Segment
	Total   int64 // members ranked in the segment board's period
	Rank    int64
	Score   int64 // scaled
}

// Segment limits (contract section 11).
const (
	MaxSegmentNames = 3
	// MaxSegmentValues bounds the distinct values one segment name may
	// take on a board: each value is a set of period keys and an entry in
	// the values index, so no client may grow them without bound.
	MaxSegmentValues = 10000
)

var segmentNamePattern = regexp.MustCompile(`^[a-z][a-z0-9_]{0,15}$`)

// validSegmentValue reports whether v is 1 to 32 characters of
// A-Za-z0-9_.- (written out: every event with segment values checks each).
func validSegmentValue(v string) bool {
	if len(v) == 0 || len(v) > 32 {
		return false
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '.' || c == '-') {
			return false
		}
	}
	return true
}

// HasSegment reports whether the board declares the segment name.
func (b *Board) HasSegment(name string) bool { return slices.Contains(b.Segments, name) }

// ValidateSegmentName checks that name is one of the board's segments.
func (b *Board) ValidateSegmentName(name string) error {
	if len(b.Segments) == 0 {
		return Errorf(EINVALID, "board %q has no segments", b.ID)
	}
	if !b.HasSegment(name) {
		return Errorf(EINVALID, "unknown segment %q: board %q has segments %s", name, b.ID, strings.Join(b.Segments, ", "))
	}
	return nil
}

// ValidateSegmentValue checks a segment value: 1..32 characters of
// A-Za-z0-9_.-.
func ValidateSegmentValue(name, value string) error {
	if !validSegmentValue(value) {
		return Errorf(EINVALID, "segment %s value %q must be 1 to 32 characters of A-Za-z0-9_.-", name, value)
	}
	return nil
}

// ValidateSegment checks a segment a read asks for; the zero Segment (the
// whole board) is always valid.
func (b *Board) ValidateSegment(seg Segment) error {
	if seg.IsZero() {
		return nil
	}
	if err := b.ValidateSegmentName(seg.Name); err != nil {
		return err
	}
	return ValidateSegmentValue(seg.Name, seg.Value)
}

// ValidateSegments checks an event's segments: known names, good values.
// (A map holds at most one value per name.)
func (b *Board) ValidateSegments(segs map[string]string) error {
	if len(segs) == 0 {
		return nil
	}
	if len(b.Segments) == 0 {
		return Errorf(EINVALID, "board %q has no segments, so an event cannot carry any", b.ID)
	}
	valid := true
	for name, value := range segs {
		if !b.HasSegment(name) || !validSegmentValue(value) {
			valid = false
			break
		}
	}
	if valid {
		return nil
	}
	// The first wrong one by name, so that the error does not depend on
	// the map's order.
	for _, name := range sortedNames(segs) {
		if err := b.ValidateSegmentName(name); err != nil {
			return err
		}
		if err := ValidateSegmentValue(name, segs[name]); err != nil {
			return err
		}
	}
	return nil
}

// ParseSegment parses a read's "NAME:VALUE" for board b ("" is the whole
// board).
func (b *Board) ParseSegment(s string) (Segment, error) {
	if s == "" {
		return Segment{}, nil
	}
	name, value, ok := strings.Cut(s, ":")
	if !ok {
		return Segment{}, Errorf(EINVALID, "segment %q must be NAME:VALUE", s)
	}
	seg := Segment{Name: name, Value: value}
	return seg, b.ValidateSegment(seg)
}

// eventSegments lists an event's segments in the board's order of names.
func (b *Board) eventSegments(segs map[string]string) []Segment {
	if len(segs) == 0 {
		return nil
	}
	out := make([]Segment, 0, len(segs))
	for _, name := range b.Segments {
		if v, ok := segs[name]; ok {
			out = append(out, Segment{Name: name, Value: v})
		}
	}
	return out
}

func sortedNames(m map[string]string) []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// SegmentValues lists the values of a segment name seen on a board,
// sorted (byte order).
func (s *Store) SegmentValues(ctx context.Context, boardID, name string) ([]string, error) {
	b, err := s.board(boardID)
	if err != nil {
		return nil, err
	}
	if err := b.ValidateSegmentName(name); err != nil {
		return nil, err
	}
	if b.Sharded() {
		lists, err := s.shardSegValues(ctx, b, []string{name}, MaxSegmentValues)
		if err != nil {
			return nil, err
		}
		return lists[0], nil
	}
	// Every member of the index has score 0, so ZRANGE answers in byte order.
	vals, err := s.rdb.ZRange(ctx, s.keysOf(b).segValues(name), 0, -1).Result()
	if err != nil {
		return nil, wrapRedis(err)
	}
	return vals, nil
}

// SegmentChoices reads, in one round trip, the first n values (byte
// order) of each of the board's segment names, in the board's order of
// names.
func (s *Store) SegmentChoices(ctx context.Context, boardID string, n int) ([][]string, error) {
	b, err := s.board(boardID)
	if err != nil {
		return nil, err
	}
	if n < 1 {
		return nil, Errorf(EINVALID, "n must be >= 1, got %d", n)
	}
	if len(b.Segments) == 0 {
		return nil, nil
	}
	if b.Sharded() {
		return s.shardSegValues(ctx, b, b.Segments, int64(min(n, MaxSegmentValues)))
	}
	// The indexes of one board share its hash tag, so one pipeline is one
	// node's round trip on a cluster too.
	cmds := make([]*redis.StringSliceCmd, len(b.Segments))
	_, err = s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, name := range b.Segments {
			cmds[i] = p.ZRange(ctx, s.keysOf(b).segValues(name), 0, int64(n-1))
		}
		return nil
	})
	if err != nil {
		return nil, wrapRedis(err)
	}
	out := make([][]string, len(cmds))
	for i, c := range cmds {
		out[i] = c.Val()
	}
	return out, nil
}

// segmentKnown reports whether a segment value was ever written on the
// board (the zero Segment always is).
func (s *Store) segmentKnown(ctx context.Context, b *Board, seg Segment) (bool, error) {
	if seg.IsZero() {
		return true, nil
	}
	if b.Sharded() {
		// Each shard's index holds the values its members wrote.
		ops := make([]*sliceOps, b.Shards)
		for i := range ops {
			k := s.shardKeys(b, i)
			ops[i] = newSliceOps(k)
			ops[i].score(k.segValues(seg.Name), []string{seg.Value})
		}
		reps, err := s.runSlices(ctx, ops)
		if err != nil {
			return false, err
		}
		for _, rep := range reps {
			if cs, err := rep.codes(0); err == nil && cs[0] != nil {
				return true, nil
			}
		}
		return false, nil
	}
	err := s.rdb.ZScore(ctx, s.keysOf(b).segValues(seg.Name), seg.Value).Err()
	if err == nil {
		return true, nil
	}
	if errors.Is(err, redis.Nil) {
		return false, nil
	}
	return false, wrapRedis(err)
}

// shardSegValues reads, in one round trip, the first n values (byte
// order) of each of names on a sharded board: each shard's index holds the
// values its own members wrote (apply.lua caps each at MaxSegmentValues),
// so the board's values are their union, cut to its first n. n is at most
// MaxSegmentValues, so a sharded board never lists more values of a name
// than a board of one shard could hold; values past the cut are still
// written and read by name, they are only left out of the list.
func (s *Store) shardSegValues(ctx context.Context, b *Board, names []string, n int64) ([][]string, error) {
	ops := make([]*sliceOps, b.Shards)
	for i := range ops {
		k := s.shardKeys(b, i)
		ops[i] = newSliceOps(k)
		for _, name := range names {
			ops[i].rng(k.segValues(name), 0, n-1)
		}
	}
	reps, err := s.runSlices(ctx, ops)
	if err != nil {
		return nil, err
	}
	out := make([][]string, len(names))
	for j := range names {
		var all []string
		for _, rep := range reps {
			es, err := rep.entries(j)
			if err != nil {
				return nil, err
			}
			for _, e := range es {
				all = append(all, e.member)
			}
		}
		slices.Sort(all)
		all = slices.Compact(all)
		out[j] = all[:min(int64(len(all)), n)]
	}
	return out, nil
}

// parseSegmentsJSON reads a JSON object of segment values
// ({"country": "FR"}): strings only, each name once.
func parseSegmentsJSON(text string) (map[string]string, error) {
	bad := Errorf(EINVALID, "segments must be a JSON object of text values like {\"country\": \"FR\"}, each name once")
	dec := json.NewDecoder(strings.NewReader(text))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, bad
	}
	out := map[string]string{}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return nil, bad
		}
		v, err := dec.Token()
		name, _ := k.(string)
		value, isString := v.(string)
		if err != nil || !isString {
			return nil, bad
		}
		if _, dup := out[name]; dup {
			return nil, Errorf(EINVALID, "segment %q is given twice; an event has at most one value per name", name)
		}
		out[name] = value
	}
	if t, err := dec.Token(); err != nil || t != json.Delim('}') {
		return nil, bad
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, bad
	}
	return out, nil
}
