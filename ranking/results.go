package ranking

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"time"

	"github.com/gowebpki/jcs"
	"github.com/redis/go-redis/v9"
)

// Period results: recording, digest, recorder and relay.
//
// Keys: `res:`, `rs:`, `rm:`, `out`, the results stream and `relayed` in the table in `ranking/keys.go`.
//
// Recording (`RecordResult`): Go reads the period's total and top
// `results_top` with read.lua (building a window still retained), builds the
// result and its digest, with `recorded_at` = Redis's now at that read.
// record.lua then, atomically: answers `exists` if the `rs` key exists (exactly
// once); `early` if Redis's now is before end + lateness; `stale` if its now
// is more than 5 s past the read's (recorded_at stays honest); `changed` if
// ZCARD or the top entries' members and codes differ from the read (a removal
// ran between); else SET rs, ZADD res, ZADD each listed member's `rm`
// (declared in KEYS: at most `results_top`), XADD out, and trims the index using the
// oldest ids Go declared in KEYS (an excess it could not declare waits for the
// next recording). Go retries `changed`/`stale`/`early` up to 5 times.
//
// Sharded boards (contract 17): the period is read merged from the shards
// (shard_read.go), which record.lua cannot check, so Go first reads the
// board's removal count `rg` and Redis's now on the board's tag
// (`removalMark`: recorded_at is that now), and record.lua answers
// `changed` if `rg` moved. A final period changes only by removal, and
// `amendRemoved` increments `rg` after the member left its shard and
// before reading its listings: a result stored with `rg` unchanged was
// either read after that removal, or stored before its listings were read
// and so amended. The result is the bytes one shard would record.
//
// Digest: `"sha256:"` + hex SHA-256 of `{"board","entries","period","total","view"}`
// in RFC 8785 (JCS) form: `gowebpki/jcs` transforms the struct's JSON (keys
// sorted, no whitespace, strings escaping only `"`, `\` and control
// characters, so U+2028/U+2029 stay raw where `encoding/json` writes `\u`
// escapes; numbers as ECMAScript writes them, which is the served score text
// up to 15 significant digits). Digests recorded before JCS differ only for
// names with U+2028/U+2029 or longer scores; they are served as stored.
// docs/api.md shows how users check a digest.
//
// Recorder (`RunResultRecorder`, every instance, every 30 s, at once on
// start): for each board with `results_keep` > 0 and each view but `all`,
// the periods from the newest final one back while still retained (at most
// `results_keep`), minus those in the index (one ZMSCORE), are recorded oldest
// first, at most 200 per pass. An empty period is recorded too (total 0, no
// entries): a finished week with nobody is still a result.
//
// Relay (`RelayResults`, in the recorder's loop, and at once when an
// instance's removal kicks it): the shared stream is in another slot than the
// board, so the copy cannot be one script with the outbox delete. relay.lua
// (KEYS: `results`, `{results}:relayed`, `{results}:wh:pending`, one
// `{results}:wh:d:<id>` per delivery; ARGV: dedupe id, append flag, give-up
// ms, nf, nf stream fields, 5 strings per delivery; reply 1 relayed / 0
// already) appends a result event to the stream, creates the event's webhook
// deliveries, and remembers `<board> <entry id>`, all at once unless
// `relayed` already holds it; Go then XDELs the outbox entry. A crash between
// the two relays the entry again and relay.lua drops the duplicate.
// `RelayResults` drains the outbox of every board (also those with
// `results_keep: 0`, which still get `member.removed`) and of each shard of
// a sharded board (its members' `member.removed`, relayed as
// `<entry id>/<shard>`); every entry passes through `relayEntry`. `member.removed` first runs the amendment (below),
// then creates its deliveries only (the stream carries results).

// Result is one recorded period result, in the field order it is served.
type Result struct {
	Board      string        `json:"board"`
	View       string        `json:"view"`
	Period     string        `json:"period"`
	Start      string        `json:"start"`
	End        string        `json:"end"`
	RecordedAt string        `json:"recorded_at"`
	AmendedAt  string        `json:"amended_at,omitempty"` // set when a removal amended it
	Total      int64         `json:"total"`
	Entries    []ResultEntry `json:"entries"`
	Digest     string        `json:"digest"`
}

// ResultEntry is one ranked row of a result. Score is the exact number
// text with the board's decimals; Name is nil when no name is known.
type ResultEntry struct {
	Rank   int64           `json:"rank"`
	Member string          `json:"member"`
	Name   *string         `json:"name"`
	Score  json.RawMessage `json:"score"`
}

// canonicalResult and canonicalEntry are the fields the digest covers;
// jcs.Transform sorts their keys.
type canonicalResult struct {
	Board   string           `json:"board"`
	Entries []canonicalEntry `json:"entries"`
	Period  string           `json:"period"`
	Total   int64            `json:"total"`
	View    string           `json:"view"`
}

type canonicalEntry struct {
	Member string          `json:"member"`
	Name   *string         `json:"name"`
	Rank   int64           `json:"rank"`
	Score  json.RawMessage `json:"score"`
}

// Canonical returns the canonical JSON the digest covers: the object
// {"board","entries","period","total","view"} in RFC 8785 (JCS) form, so
// that any JCS implementation (or a JSON library with sorted keys, no
// whitespace and no escaping beyond JSON's own) computes the same bytes:
// keys sorted, strings with only '"', '\' and control characters escaped
// (U+2028 and U+2029 stay raw, unlike encoding/json's output), numbers as
// ECMAScript writes them (the served score text, which never has trailing
// zeros, unless it has more than 15 significant digits).
func (r *Result) Canonical() []byte {
	c := canonicalResult{Board: r.Board, Period: r.Period, Total: r.Total, View: r.View, Entries: make([]canonicalEntry, 0, len(r.Entries))}
	for _, e := range r.Entries {
		c.Entries = append(c.Entries, canonicalEntry{Member: e.Member, Name: e.Name, Rank: e.Rank, Score: e.Score})
	}
	out, err := jcs.Transform(marshalNoHTML(c))
	if err != nil {
		panic(err) // valid JSON of strings and finite numbers only
	}
	return out
}

// ComputeDigest returns "sha256:" + the hex SHA-256 of Canonical().
func (r *Result) ComputeDigest() string {
	sum := sha256.Sum256(r.Canonical())
	return "sha256:" + hex.EncodeToString(sum[:])
}

// JSON returns the result as stored and served.
func (r *Result) JSON() []byte {
	c := *r
	if c.Entries == nil {
		c.Entries = []ResultEntry{}
	}
	return marshalNoHTML(&c)
}

// marshalNoHTML is json.Marshal without HTML escaping and without the
// encoder's trailing newline.
func marshalNoHTML(v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err) // strings, numbers and valid raw numbers only
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// resultsView reports whether a view records results: every view but all.
func resultsView(v View) bool { return v.Kind != All }

// recordAttempts bounds retries when the period changes, or Redis's clock
// moves on, between the read and the write.
const recordAttempts = 5

// RecordResult records the result of one final period of a view, unless it
// is already recorded. It reports whether this call recorded it. A period
// that is not final yet is EINVALID; a period with nobody is recorded
// with total 0 and no entries (a finished week with nobody is a result).
func (s *Store) RecordResult(ctx context.Context, boardID, viewName, period string) (bool, error) {
	b, v, err := s.boardView(boardID, viewName)
	if err != nil {
		return false, err
	}
	if !resultsView(v) {
		return false, Errorf(ENOTFOUND, "view %q of board %q has no results", v.Name, b.ID)
	}
	if b.ResultsKeep == 0 {
		return false, Errorf(EINVALID, "board %q records no results (results_keep: 0)", b.ID)
	}
	p, err := s.cfg.Calendar.ParsePeriod(v, period)
	if err != nil {
		return false, err
	}
	return s.recordResult(ctx, b, v, p)
}

func (s *Store) recordResult(ctx context.Context, b *Board, v View, p Period) (bool, error) {
	loc := s.cfg.Calendar.Location()
	for attempt := 0; attempt < recordAttempts; attempt++ {
		removals, markMS, err := s.removalMark(ctx, b)
		if err != nil {
			return false, err
		}
		st, rep, err := s.read(ctx, b, v, p.ID, "page", "0", itoa(int64(b.ResultsTop)))
		if err != nil {
			return false, err
		}
		if b.Sharded() {
			rep.nowMS = markMS // record.lua's clock, read before the shards
		}
		if !st.Final {
			return false, Errorf(EINVALID, "%s %s of board %q is not final until %s", v.Name, p.ID, b.ID, p.End.Add(b.Lateness).In(loc).Format(time.RFC3339))
		}
		r := &Result{
			Board: b.ID, View: v.Name, Period: p.ID,
			Start: p.Start.In(loc).Format(time.RFC3339), End: p.End.In(loc).Format(time.RFC3339),
			RecordedAt: formatResultTime(rep.nowMS), Total: st.Total,
		}
		if r.Entries, err = s.resultEntries(b, v, rep); err != nil {
			return false, err
		}
		r.Digest = r.ComputeDigest()
		drop, err := s.trimCandidates(ctx, b, v)
		if err != nil {
			return false, err
		}
		if s.beforeRecord != nil {
			s.beforeRecord()
		}
		keys, args := s.recordRequest(b, v, p, st.Total, rep.nowMS, r.JSON(), r.Digest, rep.flat, drop, removals)
		ans, err := recordScript.Run(ctx, s.rdb, keys, args...).Text()
		if err != nil {
			return false, wrapRedis(err)
		}
		switch ans {
		case recordRecorded:
			return true, nil
		case recordExists:
			return false, nil
		case recordChanged, recordStale, recordEarly:
			continue
		default:
			return false, Errorf(EINTERNAL, "record: unexpected reply %q", ans)
		}
	}
	return false, Errorf(EUNAVAILABLE, "%s %s of board %q kept changing while its result was recorded; try again", v.Name, p.ID, b.ID)
}

// removalMark reads, on a sharded board's own tag, its removal count and
// Redis's now there: a result read from the shards afterwards is recorded
// (or amended) only if the count has not moved, and is stamped with that
// now, the clock record.lua checks. A board of one shard reads nothing:
// its scripts check the period itself.
func (s *Store) removalMark(ctx context.Context, b *Board) (removals string, nowMS int64, err error) {
	if !b.Sharded() {
		return "", 0, nil
	}
	k := s.keysOf(b)
	o := newSliceOps(k)
	o.get(k.removals())
	o.now()
	reps, err := s.runSlices(ctx, []*sliceOps{o})
	if err != nil {
		return "", 0, err
	}
	removals, _ = reps[0][0].(string)
	if removals == "" {
		removals = "0"
	}
	return removals, reps[0].int(1), nil
}

// resultEntries turns the top entries read.lua returned into result
// entries.
func (s *Store) resultEntries(b *Board, v View, rep readReply) ([]ResultEntry, error) {
	entries, err := s.entries(b, v, rep.firstRank, 0, rep.flat)
	if err != nil {
		return nil, err
	}
	out := make([]ResultEntry, 0, len(entries))
	for _, e := range entries {
		var name *string
		if e.Name != "" {
			n := e.Name
			name = &n
		}
		out = append(out, ResultEntry{Rank: e.Rank, Member: e.Member, Name: name, Score: json.RawMessage(b.FormatScore(e.Score))})
	}
	return out, nil
}

// resultTimeLayout writes recorded_at and amended_at: RFC 3339 UTC with
// milliseconds.
const resultTimeLayout = "2006-01-02T15:04:05.000Z07:00"

// formatResultTime formats a time on Redis's clock, in ms, for a result.
func formatResultTime(ms int64) string { return time.UnixMilli(ms).UTC().Format(resultTimeLayout) }

// trimCandidates lists the oldest index ids that recording one more result
// would push past results_keep.
func (s *Store) trimCandidates(ctx context.Context, b *Board, v View) ([]string, error) {
	idx := s.keysOf(b).resultsIndex(v.Name)
	n, err := s.rdb.ZCard(ctx, idx).Result()
	if err != nil {
		return nil, wrapRedis(err)
	}
	excess := n + 1 - int64(b.ResultsKeep)
	if excess <= 0 {
		return nil, nil
	}
	ids, err := s.rdb.ZRange(ctx, idx, 0, min(excess, 100)-1).Result()
	return ids, wrapRedis(err)
}

// MaxResultsLimit bounds one page of the results list.
const MaxResultsLimit = 100

// Results lists the recorded results of a view, newest first: at most
// limit, only periods older than before when it is not empty. Each is the
// stored JSON, byte for byte.
func (s *Store) Results(ctx context.Context, boardID, viewName, before string, limit int) ([]json.RawMessage, error) {
	b, v, err := s.resultsBoardView(boardID, viewName)
	if err != nil {
		return nil, err
	}
	if limit < 1 || limit > MaxResultsLimit {
		return nil, Errorf(EINVALID, "limit must be from 1 to %d, got %d", MaxResultsLimit, limit)
	}
	hi := "+inf"
	if before != "" {
		p, err := s.cfg.Calendar.ParsePeriod(v, before)
		if err != nil {
			return nil, err
		}
		hi = "(" + itoa(p.Start.UnixMilli())
	}
	ids, err := s.rdb.ZRevRangeByScore(ctx, s.keysOf(b).resultsIndex(v.Name), &redis.ZRangeBy{Min: "-inf", Max: hi, Count: int64(limit)}).Result()
	if err != nil {
		return nil, wrapRedis(err)
	}
	out := make([]json.RawMessage, 0, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	keys := make([]string, len(ids))
	for i, id := range ids {
		keys[i] = s.keysOf(b).result(v.Name, id)
	}
	vals, err := s.rdb.MGet(ctx, keys...).Result()
	if err != nil {
		return nil, wrapRedis(err)
	}
	for _, val := range vals {
		if str, ok := val.(string); ok { // trimmed meanwhile: left out
			out = append(out, json.RawMessage(str))
		}
	}
	return out, nil
}

// Result returns one recorded result's stored JSON; ENOTFOUND before it is
// recorded.
func (s *Store) Result(ctx context.Context, boardID, viewName, period string) (json.RawMessage, error) {
	b, v, err := s.resultsBoardView(boardID, viewName)
	if err != nil {
		return nil, err
	}
	p, err := s.cfg.Calendar.ParsePeriod(v, period)
	if err != nil {
		return nil, err
	}
	val, err := s.rdb.Get(ctx, s.keysOf(b).result(v.Name, p.ID)).Result()
	if errors.Is(err, redis.Nil) {
		return nil, Errorf(ENOTFOUND, "no result recorded for %s %s of board %q", v.Name, p.ID, b.ID)
	}
	if err != nil {
		return nil, wrapRedis(err)
	}
	return json.RawMessage(val), nil
}

func (s *Store) resultsBoardView(boardID, viewName string) (*Board, View, error) {
	b, v, err := s.boardView(boardID, viewName)
	if err != nil {
		return nil, View{}, err
	}
	if !resultsView(v) {
		return nil, View{}, Errorf(ENOTFOUND, "view %q of board %q has no results", v.Name, b.ID)
	}
	return b, v, nil
}
