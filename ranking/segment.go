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

var (
	segmentNamePattern  = regexp.MustCompile(`^[a-z][a-z0-9_]{0,15}$`)
	segmentValuePattern = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,32}$`)
)

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
	if !segmentValuePattern.MatchString(value) {
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
	err := s.rdb.ZScore(ctx, s.keysOf(b).segValues(seg.Name), seg.Value).Err()
	if err == nil {
		return true, nil
	}
	if errors.Is(err, redis.Nil) {
		return false, nil
	}
	return false, wrapRedis(err)
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
