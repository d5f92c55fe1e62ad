package ranking

import (
	_ "embed"
)

// The record.lua and relay.lua protocols: KEYS and ARGV of recording a
// period's result and of relaying an outbox event, and their replies.

//go:embed scripts/record.lua
var recordLua string

var recordScript = newScript(recordLua)

//go:embed scripts/relay.lua
var relayLua string

var relayScript = newScript(relayLua)

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

// relayRequest builds KEYS and ARGV for relay.lua: one outbox entry of
// board b, with its fields and the board's id added.
func (s *Store) relayRequest(b *Board, entryID string, fields map[string]any) (keys []string, args []any) {
	stream := s.ResultsStream()
	keys = []string{stream, "{" + stream + "}:relayed"}
	args = []any{b.ID + " " + entryID, "type", fields["type"], "board", b.ID}
	for _, f := range []string{"view", "period", "digest", "result"} {
		args = append(args, f, fields[f])
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
