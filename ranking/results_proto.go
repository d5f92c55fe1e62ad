package ranking

import (
	_ "embed"
)

// The record.lua protocol: KEYS and ARGV of recording a period's result,
// and its replies (relay.lua's is in webhooks_proto.go).

//go:embed scripts/record.lua
var recordLua string

var recordScript = newScript(recordLua)

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
// trimming may remove.
func (s *Store) recordRequest(b *Board, v View, p Period, total, readNowMS int64, result []byte, digest string, flat []any, drop []string) (keys []string, args []any) {
	n := len(flat) / 3
	keys = make([]string, 0, 4+len(drop))
	keys = append(keys, s.periodKey(b, "z", v.Name, p.ID), s.resultsIndexKey(b, v.Name),
		s.resultKey(b, v.Name, p.ID), s.outboxKey(b))
	args = make([]any, 0, 11+len(drop)+2*n)
	args = append(args, itoa(total), itoa(int64(n)), itoa(readNowMS), itoa(p.End.Add(b.Lateness).UnixMilli()),
		string(result), digest, itoa(p.Start.UnixMilli()), itoa(int64(b.ResultsKeep)), v.Name, p.ID, itoa(int64(len(drop))))
	for _, id := range drop {
		keys = append(keys, s.resultKey(b, v.Name, id))
		args = append(args, id)
	}
	for k := 0; k+2 < len(flat); k += 3 {
		args = append(args, flat[k], flat[k+1])
	}
	return keys, args
}

// resultsIndexKey is a view's index of recorded results: period ids scored
// by their start in ms.
func (s *Store) resultsIndexKey(b *Board, view string) string {
	return s.keyPrefix(b) + "res:" + view
}

// resultKey holds one recorded result's JSON, exactly as served.
func (s *Store) resultKey(b *Board, view, period string) string {
	return s.keyPrefix(b) + "rs:" + view + ":" + period
}

// outboxKey is the board's stream of result events not yet relayed.
func (s *Store) outboxKey(b *Board) string { return s.keyPrefix(b) + "out" }

// ResultsStream is the shared stream every recorded result is relayed to:
// "standings:results" under the default prefix.
func (s *Store) ResultsStream() string { return s.prefix + "results" }
