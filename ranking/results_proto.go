package ranking

import (
	"crypto/sha1"
	_ "embed"
	"encoding/hex"
	"time"
)

// The record.lua and amend.lua protocols: KEYS and ARGV of recording a
// period's result and of amending it after a removal, and their replies
// (relay.lua's is in webhooks_proto.go).

//go:embed scripts/record.lua
var recordLua string

var recordScript = newScript(recordLua)

//go:embed scripts/amend.lua
var amendLua string

var amendScript = newScript(amendLua)

// record.lua's answers.
const (
	recordRecorded = "recorded"
	recordExists   = "exists"
	recordChanged  = "changed"
	recordStale    = "stale"
	recordEarly    = "early"
)

// recordRequest builds KEYS and ARGV for record.lua. flat holds the
// (member, code, name) triples read.lua returned; drop the index ids that
// trimming may remove; removals the removal count read before a sharded
// board's merged read ("" on a board of one shard: the period is checked).
func (s *Store) recordRequest(b *Board, v View, p Period, total, readNowMS int64, result []byte, digest string, flat []any, drop []string, removals string) (keys []string, args []any) {
	n := len(flat) / 3
	keys = make([]string, 0, 4+len(drop)+n)
	k := s.keysOf(b)
	keys = append(keys, s.periodCheck(b, v, p), k.resultsIndex(v.Name),
		k.result(v.Name, p.ID), k.outbox())
	args = make([]any, 0, 13+len(drop)+2*n)
	args = append(args, itoa(total), itoa(int64(n)), itoa(readNowMS), itoa(p.End.Add(b.Lateness).UnixMilli()),
		string(result), digest, itoa(p.Start.UnixMilli()), itoa(int64(b.ResultsKeep)), v.Name, p.ID, itoa(int64(len(drop))),
		itoa(s.resultHorizon(b, v, p)), removals)
	for _, id := range drop {
		keys = append(keys, k.result(v.Name, id))
		args = append(args, id)
	}
	for i := 0; i+2 < len(flat); i += 3 {
		m, _ := flat[i].(string)
		keys = append(keys, k.memberResults(m))
		args = append(args, flat[i], flat[i+1])
	}
	return keys, args
}

// amend.lua's answers.
const (
	amendAmended = "amended"
	amendGone    = "gone"    // the result is no longer stored (trimmed)
	amendMoved   = "moved"   // the stored result is not the one read
	amendChanged = "changed" // the period changed, or its retention ended, since the read
	amendStale   = "stale"   // Redis's now is too far from amended_at
)

// amendment is one amendment of a stored result, as Go built it.
type amendment struct {
	old       []byte   // the stored result JSON it replaces
	result    *Result  // the amended result
	removed   string   // the member removed
	added     []string // members the amendment newly lists
	recompute bool     // read again from the retained period, else dropped
	expireMS  int64    // the period's retention end
	amendedMS int64    // amended_at in ms
	flat      []any    // recompute: the (member, code, name) triples read
	removals  string   // recompute on a sharded board: the removal count read before
}

// periodCheck is the key record.lua and amend.lua check a read against:
// the period itself, or on a sharded board (whose period lies on the
// shards) the board's removal count.
func (s *Store) periodCheck(b *Board, v View, p Period) string {
	if b.Sharded() {
		return s.keysOf(b).removals()
	}
	return s.keysOf(b).period(v.Name, p.ID)
}

// amendRequest builds KEYS and ARGV for amend.lua.
func (s *Store) amendRequest(b *Board, v View, p Period, a *amendment) (keys []string, args []any) {
	n := len(a.flat) / 3
	keys = make([]string, 0, 4+len(a.added))
	k := s.keysOf(b)
	keys = append(keys, k.result(v.Name, p.ID), k.outbox(), k.memberResults(a.removed),
		s.periodCheck(b, v, p))
	for _, m := range a.added {
		keys = append(keys, k.memberResults(m))
	}
	sum := sha1.Sum(a.old)
	mode := "drop"
	if a.recompute {
		mode = "recompute"
	}
	args = make([]any, 0, 13+2*n)
	args = append(args, hex.EncodeToString(sum[:]), string(a.result.JSON()), a.result.Digest, v.Name, p.ID,
		itoa(p.Start.UnixMilli()), itoa(s.resultHorizon(b, v, p)), mode, itoa(a.expireMS), itoa(a.amendedMS),
		itoa(a.result.Total), itoa(int64(n)), a.removals)
	for k := 0; k+2 < len(a.flat); k += 3 {
		args = append(args, a.flat[k], a.flat[k+1])
	}
	return keys, args
}

// resultHorizon is a time until which the result of p may still be in its
// view's index while the recorder runs: it is trimmed when the
// results_keep-th newer period is recorded, shortly after that period is
// final. Steps are measured at p and given 1/8 more (months of 28 to 31
// days, days of 23 to 25 hours), plus a day for the recorder's passes.
func (s *Store) resultHorizon(b *Board, v View, p Period) int64 {
	step := s.cfg.Calendar.Next(v, p).Start.Sub(p.Start)
	step += step / 8
	return p.End.Add(b.Lateness).Add(time.Duration(b.ResultsKeep+1) * step).Add(24 * time.Hour).UnixMilli()
}
