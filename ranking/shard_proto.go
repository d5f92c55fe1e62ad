package ranking

import (
	"context"
	_ "embed"
	"strconv"
	"sync"
)

// The slice.lua protocol: one shard's ops of a merged read, built op by
// op; nothing else knows slice.lua's argument layout or reply.

//go:embed scripts/slice.lua
var sliceLua string

var sliceScript = newScript(sliceLua)

// shardEntry is one entry of a shard's sorted set. Entries rank by code,
// then member id in byte order, as Redis orders a sorted set. A rows op
// also gives its name (nil: none) and its code in the previous period
// (nil: none).
type shardEntry struct {
	member string
	code   float64
	name   any
	prev   *float64
}

// entryLess is the ranking order of entries of every shard.
func entryLess(a, b shardEntry) bool {
	return a.code < b.code || (a.code == b.code && a.member < b.member)
}

// fmtCode writes a code for Redis: codes are whole numbers below 2^53.
func fmtCode(c float64) string { return strconv.FormatFloat(c, 'f', -1, 64) }

// sliceOps is one slice.lua call on one shard: KEYS[1] is the shard's
// names hash, each sorted set an op names is listed once.
type sliceOps struct {
	k    boardKeys // the shard's
	keys []string
	args []any
	nops int
	zi   map[string]string // key -> its 1-based index, as ARGV text
}

func newSliceOps(k boardKeys) *sliceOps {
	return &sliceOps{k: k, keys: []string{k.names()}, args: []any{""}, zi: map[string]string{}}
}

func (o *sliceOps) key(z string) string {
	if i, ok := o.zi[z]; ok {
		return i
	}
	o.keys = append(o.keys, z)
	i := strconv.Itoa(len(o.keys))
	o.zi[z] = i
	return i
}

func (o *sliceOps) op(args ...any) int {
	o.args = append(o.args, args...)
	o.nops++
	return o.nops - 1
}

// card asks for ZCARD of z; the returned index finds its reply.
func (o *sliceOps) card(z string) int { return o.op("card", o.key(z)) }

// exists asks whether z exists.
func (o *sliceOps) exists(z string) int { return o.op("exists", o.key(z)) }

// get asks for the string at z.
func (o *sliceOps) get(z string) int { return o.op("get", o.key(z)) }

// rng asks for entries [start, stop] of z (start <= stop).
func (o *sliceOps) rng(z string, start, stop int64) int {
	return o.op("range", o.key(z), itoa(start), itoa(stop))
}

// rows asks for entries [start, stop] of z with their names and, when
// prev is not "", their codes in prev.
func (o *sliceOps) rows(z string, start, stop int64, prev string) int {
	pi := "0"
	if prev != "" {
		pi = o.key(prev)
	}
	return o.op("rows", o.key(z), itoa(start), itoa(stop), pi)
}

// before asks, for each pivot, how many entries of z rank before it.
func (o *sliceOps) before(z string, shared bool, pivots []shardEntry) int {
	o.args = append(o.args, "before", o.key(z), boolArg(shared), itoa(int64(len(pivots))))
	for _, p := range pivots {
		o.args = append(o.args, fmtCode(p.code), p.member)
	}
	o.nops++
	return o.nops - 1
}

// nearNamed asks for the count of entries before e (ties first) and the up
// to k entries before that position and k+1 from it, with their names
// (shardEntry.name).
func (o *sliceOps) nearNamed(z string, e shardEntry, k int) int {
	return o.op("nearn", o.key(z), fmtCode(e.code), e.member, itoa(int64(k)))
}

// nearEntries decodes a nearNamed op's reply: the count before, and the
// entries.
func (r sliceReply) nearEntries(op int) (int64, []shardEntry, error) {
	flat, _ := r[op].([]any)
	if len(flat) == 0 {
		return 0, nil, nil
	}
	out := make([]shardEntry, 0, (len(flat)-1)/3)
	for k := 1; k+2 < len(flat); k += 3 {
		m, _ := flat[k].(string)
		c, err := parseCode(flat[k+1])
		if err != nil {
			return 0, nil, err
		}
		out = append(out, shardEntry{member: m, code: c, name: flat[k+2]})
	}
	return asInt(flat[0]), out, nil
}

// score asks for the codes of members in z.
func (o *sliceOps) score(z string, members []string) int {
	o.args = append(o.args, "score", o.key(z), itoa(int64(len(members))))
	for _, m := range members {
		o.args = append(o.args, m)
	}
	o.nops++
	return o.nops - 1
}

// names asks for the display names of members.
func (o *sliceOps) names(members []string) int {
	o.args = append(o.args, "names", itoa(int64(len(members))))
	for _, m := range members {
		o.args = append(o.args, m)
	}
	o.nops++
	return o.nops - 1
}

// now asks for Redis's now in ms on the node of the call's tag.
func (o *sliceOps) now() int { return o.op("now") }

// sliceReply is one shard's replies, by op index.
type sliceReply []any

func (r sliceReply) int(op int) int64 { return asInt(r[op]) }

// entries decodes a range op's reply.
func (r sliceReply) entries(op int) ([]shardEntry, error) {
	flat, _ := r[op].([]any)
	return decodeShardEntries(flat)
}

func decodeShardEntries(flat []any) ([]shardEntry, error) {
	out := make([]shardEntry, 0, len(flat)/2)
	for k := 0; k+1 < len(flat); k += 2 {
		m, _ := flat[k].(string)
		c, err := parseCode(flat[k+1])
		if err != nil {
			return nil, err
		}
		out = append(out, shardEntry{member: m, code: c})
	}
	return out, nil
}

// rowEntries decodes a rows op's reply.
func (r sliceReply) rowEntries(op int) ([]shardEntry, error) {
	flat, _ := r[op].([]any)
	out := make([]shardEntry, 0, len(flat)/4)
	for k := 0; k+3 < len(flat); k += 4 {
		m, _ := flat[k].(string)
		c, err := parseCode(flat[k+1])
		if err != nil {
			return nil, err
		}
		e := shardEntry{member: m, code: c, name: flat[k+2]}
		if flat[k+3] != nil {
			pc, err := parseCode(flat[k+3])
			if err != nil {
				return nil, err
			}
			e.prev = &pc
		}
		out = append(out, e)
	}
	return out, nil
}

// ints decodes a before op's reply.
func (r sliceReply) ints(op int) []int64 {
	xs, _ := r[op].([]any)
	out := make([]int64, len(xs))
	for i, x := range xs {
		out[i] = asInt(x)
	}
	return out
}

// codes decodes a score op's reply: nil for a member without a code.
func (r sliceReply) codes(op int) ([]*float64, error) {
	xs, _ := r[op].([]any)
	out := make([]*float64, len(xs))
	for i, x := range xs {
		if x == nil {
			continue
		}
		c, err := parseCode(x)
		if err != nil {
			return nil, err
		}
		out[i] = &c
	}
	return out, nil
}

// strs decodes a names op's reply ("" for no name).
func (r sliceReply) strs(op int) []string {
	xs, _ := r[op].([]any)
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i], _ = x.(string)
	}
	return out
}

// shardPipe is the read pipe of a shard (see readPipe: concurrent
// requests' calls to one shard share pipelines, as a board's reads do).
func (s *Store) shardPipe(k boardKeys) *readPipe {
	if p := s.shardPipes[k]; p != nil {
		return p
	}
	return s.otherReads
}

// runSlices sends each shard's ops (nil: none) at once, one call per
// shard, and returns each shard's replies.
func (s *Store) runSlices(ctx context.Context, ops []*sliceOps) ([]sliceReply, error) {
	out := make([]sliceReply, len(ops))
	errs := make([]error, len(ops))
	var wg sync.WaitGroup
	for i, o := range ops {
		if o == nil || o.nops == 0 {
			continue
		}
		o.args[0] = strconv.Itoa(o.nops)
		wg.Add(1)
		go func() {
			defer wg.Done()
			raw, err := s.shardPipe(o.k).run(ctx, sliceScript, o.keys, o.args...).Slice()
			if err != nil {
				errs[i] = wrapRedis(err)
				return
			}
			if len(raw) != o.nops {
				errs[i] = Errorf(EINTERNAL, "slice.lua: %d replies for %d ops", len(raw), o.nops)
				return
			}
			out[i] = raw
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// hget asks for field of the hash at key h (a member's record).
func (o *sliceOps) hget(h, field string) int { return o.op("hget", o.key(h), field) }

// str decodes a get or hget op's reply ("" for none).
func (r sliceReply) str(op int) string {
	x, _ := r[op].(string)
	return x
}

// mine asks for the member's shard's part of its standing in z, read with
// its code: the code, the total, the count before it (shared: lower codes
// when k < 0; else its position) and, with k >= 0, the k entries before
// its position and k+1 from it with their names.
func (o *sliceOps) mine(z, member string, shared bool, k int) int {
	return o.op("mine", o.key(z), member, boolArg(shared), itoa(int64(k)))
}

// minePart decodes a mine op's reply: code nil when the member has none.
func (r sliceReply) minePart(op int) (code *float64, total, before int64, es []shardEntry, err error) {
	flat, _ := r[op].([]any)
	if len(flat) < 3 {
		if len(flat) == 2 {
			total = asInt(flat[1])
		}
		return nil, total, 0, nil, nil
	}
	c, err := parseCode(flat[0])
	if err != nil {
		return nil, 0, 0, nil, err
	}
	for k := 3; k+2 < len(flat); k += 3 {
		m, _ := flat[k].(string)
		ec, err := parseCode(flat[k+1])
		if err != nil {
			return nil, 0, 0, nil, err
		}
		es = append(es, shardEntry{member: m, code: ec, name: flat[k+2]})
	}
	return &c, asInt(flat[1]), asInt(flat[2]), es, nil
}
