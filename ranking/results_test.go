package ranking_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"os/exec"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/redis/go-redis/v9"
	"github.com/standings/standings/internal/testsupport"
	"github.com/standings/standings/ranking"
	"github.com/standings/standings/ranking/rankingtest"
	"github.com/standings/standings/ranking/redistest"
)

func strp(s string) *string { return &s }

// TestResultCanonicalDigest: the canonical form is RFC 8785 (JCS): keys
// sorted, names null when unknown, the score's number text, unicode,
// U+2028/U+2029 and <, >, & unescaped, and the digest is the SHA-256 of
// exactly those bytes.
func TestResultCanonicalDigest(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    ranking.Result
		want string
	}{
		{"empty", ranking.Result{Board: "b", View: "week", Period: "2026-11-16", Total: 0},
			`{"board":"b","entries":[],"period":"2026-11-16","total":0,"view":"week"}`},
		{"null name and decimals", ranking.Result{Board: "b", View: "7d", Period: "2026-11-16", Total: 7, Entries: []ranking.ResultEntry{
			{Rank: 1, Member: "ann", Name: strp("Ann"), Score: json.RawMessage("12.5")},
			{Rank: 2, Member: "bob", Score: json.RawMessage("-0.000001")},
		}}, `{"board":"b","entries":[{"member":"ann","name":"Ann","rank":1,"score":12.5},{"member":"bob","name":null,"rank":2,"score":-0.000001}],"period":"2026-11-16","total":7,"view":"7d"}`},
		{"unicode and html", ranking.Result{Board: "b", View: "hour", Period: "2026-11-01T01:00-05:00", Total: 1, Entries: []ranking.ResultEntry{
			{Rank: 1, Member: "zoë", Name: strp(`<Zoë & "co">` + "\t日本\\"), Score: json.RawMessage("3")},
		}}, `{"board":"b","entries":[{"member":"zoë","name":"<Zoë & \"co\">\t日本\\","rank":1,"score":3}],"period":"2026-11-01T01:00-05:00","total":1,"view":"hour"}`},
		{"line and paragraph separators", ranking.Result{Board: "b", View: "day", Period: "2026-11-16", Total: 1, Entries: []ranking.ResultEntry{
			{Rank: 1, Member: "a\u2029b", Name: strp("x\u2028y 😀"), Score: json.RawMessage("1")},
		}}, "{\"board\":\"b\",\"entries\":[{\"member\":\"a\u2029b\",\"name\":\"x\u2028y 😀\",\"rank\":1,\"score\":1}],\"period\":\"2026-11-16\",\"total\":1,\"view\":\"day\"}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.r
			r.Start, r.End, r.RecordedAt = "2026-11-16T00:00:00-05:00", "2026-11-23T00:00:00-05:00", "2026-11-23T05:10:00.123Z"
			if got := string(r.Canonical()); got != tc.want {
				t.Fatalf("canonical\n got %s\nwant %s", got, tc.want)
			}
			sum := sha256.Sum256([]byte(tc.want))
			if got, want := r.ComputeDigest(), "sha256:"+hex.EncodeToString(sum[:]); got != want {
				t.Fatalf("digest %s, want %s", got, want)
			}
			r.Digest = r.ComputeDigest()
			if got := independentDigest(t, r.JSON()); got != r.Digest {
				t.Fatalf("digest recomputed from the served JSON %s, want %s", got, r.Digest)
			}
		})
	}
}

// TestResultDigestIsJCS: over random results whose names and members mix
// every script, emoji, U+2028/U+2029, quotes and backslashes (no control
// characters, as the write rules allow) and scores of every scale, the
// digest equals one recomputed from the served JSON by this file's own RFC
// 8785 serializer, and, where python3 is installed, by Python's json with
// sorted keys (the recipe users are given) for the scores Python writes as
// ECMAScript does.
func TestResultDigestIsJCS(t *testing.T) {
	r := rand.New(rand.NewPCG(8785, 2028))
	pool := []rune("aZ09 _-.~\"\\/<>&'`éÉßøÆœŁżčğıİ" + "αβΩЖжщЯ" + "مرحبا" + "שלום" + "नमस्ते" + "日本語漢字" + "한국어" + "ไทย" +
		"\u2028\u2029\u00a0\u200d\ufeff\u0301\u00ad\u2060\ufffd" + "😀👍🏽🇫🇷𝄞𐍈")
	text := func(max int) string {
		var b strings.Builder
		for range 1 + r.IntN(max) {
			b.WriteRune(pool[r.IntN(len(pool))])
		}
		return b.String()
	}
	var results [][]byte
	var pyOK []bool
	for range 400 {
		res := ranking.Result{Board: "b", View: "week", Period: "2026-11-16", Total: int64(r.IntN(1 << 40)),
			Start: "2026-11-16T00:00:00Z", End: "2026-11-23T00:00:00Z", RecordedAt: "2026-11-23T00:00:00.000Z"}
		py := true
		for k := range r.IntN(6) {
			decimals := r.IntN(7)
			v := r.Int64N(1<<53) >> r.IntN(54) // every magnitude, up to 2^53
			if r.IntN(2) == 0 {
				v = -v
			}
			score := formatScaledForTest(v, decimals)
			if !pythonWritesLikeJCS(score) {
				py = false
			}
			e := ranking.ResultEntry{Rank: int64(k + 1), Member: text(20), Score: json.RawMessage(score)}
			if r.IntN(4) > 0 {
				e.Name = strp(text(30))
			}
			res.Entries = append(res.Entries, e)
		}
		res.Digest = res.ComputeDigest()
		served := res.JSON()
		if got := independentDigest(t, served); got != res.Digest {
			t.Fatalf("digest %s, independent JCS %s, of %s\ncanonical %s", res.Digest, got, served, res.Canonical())
		}
		results, pyOK = append(results, served), append(pyOK, py)
	}
	if _, err := exec.LookPath("python3"); err != nil {
		t.Logf("python3 not installed: checked against the in-test serializer only")
		return
	}
	const prog = `import sys, json, hashlib
for line in sys.stdin:
    r = json.loads(line)
    c = {k: r[k] for k in ("board", "entries", "period", "total", "view")}
    print("sha256:" + hashlib.sha256(json.dumps(c, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()).hexdigest())
`
	var in bytes.Buffer
	var want []string
	for i, served := range results {
		if pyOK[i] {
			in.Write(served)
			in.WriteByte('\n')
			var res ranking.Result
			if err := json.Unmarshal(served, &res); err != nil {
				t.Fatal(err)
			}
			want = append(want, res.Digest)
		}
	}
	cmd := exec.Command("python3", "-c", prog)
	cmd.Stdin = &in
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python3: %v", err)
	}
	got := strings.Fields(string(out))
	if len(want) < 100 || !slices.Equal(got, want) {
		t.Fatalf("python3 digests of %d results differ:\n got %v\nwant %v", len(want), got, want)
	}
}

// formatScaledForTest writes v scaled by 10^decimals as the API does:
// exact, without trailing zeros.
func formatScaledForTest(v int64, decimals int) string {
	s := new(big.Rat).SetFrac(big.NewInt(v), new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(decimals)), nil)).FloatString(decimals)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// pythonWritesLikeJCS reports whether Python's json writes the number as
// RFC 8785 does: integers up to 2^53 exactly, other numbers when their
// repr has no exponent (|x| >= 1e-4) and 15 significant digits at most.
func pythonWritesLikeJCS(num string) bool {
	digits := strings.TrimLeft(strings.NewReplacer("-", "", ".", "").Replace(num), "0")
	if !strings.Contains(num, ".") {
		return len(digits) <= 15
	}
	f, _ := strconv.ParseFloat(num, 64)
	return len(digits) <= 15 && math.Abs(f) >= 1e-4
}

// independentDigest recomputes a served result's digest from its JSON
// alone: parse, keep the five covered keys, write them in RFC 8785 (JCS)
// form by a routine of its own (not the library the code uses), hash.
func independentDigest(tb testing.TB, served []byte) string {
	tb.Helper()
	return independentDigestOf(tb, served, "board", "entries", "period", "total", "view")
}

// independentDigestOf is independentDigest over the given covered keys (a
// league cohort result covers board, cohort, entries, round and tier).
func independentDigestOf(tb testing.TB, served []byte, fields ...string) string {
	tb.Helper()
	dec := json.NewDecoder(bytes.NewReader(served))
	dec.UseNumber()
	var all map[string]any
	if err := dec.Decode(&all); err != nil {
		tb.Fatalf("served JSON %s: %v", served, err)
	}
	covered := map[string]any{}
	for _, k := range fields {
		v, ok := all[k]
		if !ok {
			tb.Fatalf("served JSON lacks %q: %s", k, served)
		}
		covered[k] = v
	}
	var b strings.Builder
	var write func(v any)
	write = func(v any) {
		switch v := v.(type) {
		case nil:
			b.WriteString("null")
		case json.Number:
			f, err := strconv.ParseFloat(string(v), 64)
			if err != nil {
				tb.Fatalf("number %s: %v", v, err)
			}
			b.WriteString(ecmaNumber(f))
		case string:
			// RFC 8785 3.2.2.2: only '"', '\\' and U+0000..U+001F are
			// escaped, five of them by their short forms.
			b.WriteByte('"')
			for _, c := range v {
				switch {
				case c == '"' || c == '\\':
					b.WriteString(`\` + string(c))
				case c == '\b':
					b.WriteString(`\b`)
				case c == '\t':
					b.WriteString(`\t`)
				case c == '\n':
					b.WriteString(`\n`)
				case c == '\f':
					b.WriteString(`\f`)
				case c == '\r':
					b.WriteString(`\r`)
				case c < 0x20:
					fmt.Fprintf(&b, `\u%04x`, c)
				default:
					b.WriteRune(c)
				}
			}
			b.WriteByte('"')
		case []any:
			b.WriteByte('[')
			for i, e := range v {
				if i > 0 {
					b.WriteByte(',')
				}
				write(e)
			}
			b.WriteByte(']')
		case map[string]any:
			keys := make([]string, 0, len(v))
			for k := range v {
				keys = append(keys, k)
			}
			// Keys sort by their UTF-16 code units (RFC 8785 3.2.3).
			slices.SortFunc(keys, func(x, y string) int {
				return slices.Compare(utf16.Encode([]rune(x)), utf16.Encode([]rune(y)))
			})
			b.WriteByte('{')
			for i, k := range keys {
				if i > 0 {
					b.WriteByte(',')
				}
				write(k)
				b.WriteByte(':')
				write(v[k])
			}
			b.WriteByte('}')
		default:
			tb.Fatalf("unexpected JSON value %T", v)
		}
	}
	write(covered)
	sum := sha256.Sum256([]byte(b.String()))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// ecmaNumber writes f as ECMAScript's Number::toString does (RFC 8785
// 3.2.2.3): the shortest round-trip digits, positional from 1e-6 up to
// 1e21, else d.ddde±n without exponent padding.
func ecmaNumber(f float64) string {
	if f == 0 {
		return "0"
	}
	if a := math.Abs(f); a >= 1e-6 && a < 1e21 {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	s := strconv.FormatFloat(f, 'e', -1, 64) // e.g. 1.5e-07
	mant, exp, _ := strings.Cut(s, "e")
	sign := exp[:1]
	exp = strings.TrimLeft(exp[1:], "0")
	return mant + "e" + sign + exp
}

const resultsBoards = `timezone: America/New_York
boards:
  - {id: g, decimals: 2, min_score: 0, max_score: 100000, views: [hour, week, month, 7d, all], results_top: 2, results_keep: 3, lateness: 10m}
`

// scored is one write of the results scenario.
type scored struct {
	at     time.Time
	member string
	value  int64
}

// modelResult ranks the writes falling in [start, end) the brute-force way
// (every value distinct: no ties) and returns (total, top members with
// scores as text).
func modelResult(b *ranking.Board, writes []scored, start, end time.Time, top int) (int64, []string) {
	sums := map[string]int64{}
	for _, w := range writes {
		if !w.at.Before(start) && w.at.Before(end) {
			sums[w.member] += w.value
		}
	}
	var ms []string
	for m := range sums {
		ms = append(ms, m)
	}
	sort.Slice(ms, func(i, j int) bool { return sums[ms[i]] > sums[ms[j]] })
	var out []string
	for i, m := range ms {
		if i < top {
			out = append(out, m+"="+b.FormatScore(sums[m]))
		}
	}
	return int64(len(ms)), out
}

// TestRecordResultsExactlyOnce: on miniredis's clock, an hour on each side
// of the fall-back change (America/New_York), a month and a 7d window
// become final; two stores record and relay at once; each result is
// recorded once, matches the model and its digest; nothing is recorded
// before final; a week is recorded after a downtime; results_keep trims.
func TestRecordResultsExactlyOnce(t *testing.T) {
	ctx := context.Background()
	cfg := MustConfig(t, resultsBoards)
	b, _ := cfg.Board("g")
	ny := cfg.Calendar.Location()
	edt1 := time.Date(2026, 11, 1, 5, 30, 0, 0, time.UTC) // 01:30 EDT
	writes := []scored{
		{time.Date(2026, 10, 31, 23, 30, 0, 0, ny), "ann", 500},
		{time.Date(2026, 10, 31, 23, 40, 0, 0, ny), "bob", 700},
		{time.Date(2026, 10, 31, 23, 50, 0, 0, ny), "cy<&>", 125},
		{edt1, "ann", 300},
		{edt1.Add(time.Minute), "dee", 50},
		{edt1.Add(time.Hour), "bob", 999}, // 01:30 EST
		{edt1.Add(time.Hour + time.Minute), "eve", 1},
		{edt1.Add(time.Hour + 2*time.Minute), "fay", 2},
	}
	m, rdb := MustMiniredis(t, writes[0].at)
	clock := writes[0].at
	now := func() time.Time { return clock }
	prefix := redistest.Namespace(t) + ":"
	store := func() *ranking.Store {
		return rankingtest.MustStore(t, rdb, cfg, ranking.Options{Prefix: prefix, Clock: now})
	}
	s1, s2 := store(), store()
	for _, w := range writes {
		clock = w.at
		m.SetTime(clock)
		name := ""
		if w.member != "dee" {
			name = strings.ToUpper(w.member)
		}
		if _, err := s1.Write(ctx, "g", ranking.Event{Member: w.member, Value: w.value, Name: name}); err != nil {
			t.Fatal(err)
		}
	}
	cal := cfg.Calendar
	view := func(n string) ranking.View { v, _ := b.View(n); return v }
	hour23 := cal.PeriodAt(view("hour"), writes[0].at)
	hourEDT := cal.PeriodAt(view("hour"), edt1)
	hourEST := cal.PeriodAt(view("hour"), edt1.Add(time.Hour))
	if hourEDT.ID == hourEST.ID {
		t.Fatalf("the two 1 AM hours share the id %s", hourEDT.ID)
	}
	oct := cal.PeriodAt(view("month"), writes[0].at)
	win := cal.PeriodAt(view("7d"), writes[0].at)
	week := cal.PeriodAt(view("week"), writes[0].at)

	// Before final: the month ended 5 minutes ago, lateness is 10 minutes.
	clock = oct.End.Add(5 * time.Minute)
	m.SetTime(clock)
	if _, err := s1.RecordResults(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s1.Result(ctx, "g", "month", oct.ID); ranking.ErrorCode(err) != ranking.ENOTFOUND {
		t.Fatalf("month %s before final: %v, want ENOTFOUND", oct.ID, err)
	}
	if _, err := s1.RecordResult(ctx, "g", "month", oct.ID); ranking.ErrorCode(err) != ranking.EINVALID {
		t.Fatalf("RecordResult of a period not final: %v, want EINVALID", err)
	}

	// Final: 03:00 EST. Both stores record and relay at once.
	clock = time.Date(2026, 11, 1, 3, 0, 0, 0, ny)
	m.SetTime(clock)
	var wg sync.WaitGroup
	for _, s := range []*ranking.Store{s1, s2, s1, s2} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := s.RecordResults(ctx); err != nil {
				t.Error(err)
			}
			if _, err := s.RelayResults(ctx); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	want := []struct {
		view string
		p    ranking.Period
	}{{"hour", hourEDT}, {"hour", hourEST}, {"month", oct}, {"7d", win}}
	for _, w := range want {
		checkResult(t, s1, b, w.view, w.p, writes)
	}
	if _, err := s1.Result(ctx, "g", "week", week.ID); ranking.ErrorCode(err) != ranking.ENOTFOUND {
		t.Fatalf("week %s before final: %v", week.ID, err)
	}
	// results_keep is 3: of the final hours (23, 00, 01 EDT, 01 EST) only
	// the newest 3 are recorded.
	list, err := s1.Results(ctx, "g", "hour", "", 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 3 {
		t.Fatalf("hour results %d, want 3 (results_keep)", len(list))
	}
	if _, err := s1.Result(ctx, "g", "hour", hour23.ID); ranking.ErrorCode(err) != ranking.ENOTFOUND {
		t.Fatalf("hour %s, older than results_keep: %v", hour23.ID, err)
	}
	checkStream(t, rdb, s1)

	// Downtime: nobody runs until the week is final; a new store records it.
	clock = week.End.Add(time.Hour)
	m.SetTime(clock)
	s3 := store()
	if _, err := s3.RecordResults(ctx); err != nil {
		t.Fatal(err)
	}
	checkResult(t, s3, b, "week", week, writes)
	// Newer hours were recorded meanwhile; results_keep trimmed the older
	// ones from the index and deleted their results.
	list, err = s3.Results(ctx, "g", "hour", "", 100)
	if err != nil || len(list) != 3 {
		t.Fatalf("hour results after trimming: %d (%v), want 3", len(list), err)
	}
	for _, p := range []ranking.Period{hourEDT, hourEST} {
		if _, err := s3.Result(ctx, "g", "hour", p.ID); ranking.ErrorCode(err) != ranking.ENOTFOUND {
			t.Errorf("hour %s after trimming: %v, want ENOTFOUND", p.ID, err)
		}
		if m.Exists(prefix + "{g}:rs:hour:" + p.ID) {
			t.Errorf("the result key of hour %s outlived its trimming", p.ID)
		}
	}
	if _, err := s3.RelayResults(ctx); err != nil {
		t.Fatal(err)
	}
	checkStream(t, rdb, s3)
	if _, err := s1.Results(ctx, "g", "all", "", 10); ranking.ErrorCode(err) != ranking.ENOTFOUND {
		t.Fatalf("results of all: %v, want ENOTFOUND", err)
	}
}

// checkResult compares one stored result with the model and its digest.
func checkResult(t *testing.T, s *ranking.Store, b *ranking.Board, view string, p ranking.Period, writes []scored) {
	t.Helper()
	raw, err := s.Result(context.Background(), b.ID, view, p.ID)
	if err != nil {
		t.Fatalf("%s %s: %v", view, p.ID, err)
	}
	var r ranking.Result
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatal(err)
	}
	total, top := modelResult(b, writes, p.Start, p.End, b.ResultsTop)
	var got []string
	for i, e := range r.Entries {
		got = append(got, e.Member+"="+string(e.Score))
		if e.Rank != int64(i+1) {
			t.Errorf("%s %s: entry %d has rank %d", view, p.ID, i, e.Rank)
		}
		if (e.Name == nil) != (e.Member == "dee") || (e.Name != nil && *e.Name != strings.ToUpper(e.Member)) {
			t.Errorf("%s %s: %s has name %v", view, p.ID, e.Member, e.Name)
		}
	}
	if r.Total != total || !slices.Equal(got, top) || r.Board != b.ID || r.View != view || r.Period != p.ID {
		t.Errorf("%s %s: %s\nwant total %d, top %v", view, p.ID, raw, total, top)
	}
	if r.Digest != r.ComputeDigest() || r.Digest != independentDigest(t, raw) {
		t.Errorf("%s %s: digest %s does not match", view, p.ID, r.Digest)
	}
	if !strings.HasSuffix(r.RecordedAt, "Z") || len(r.RecordedAt) != len("2026-11-01T08:00:00.000Z") {
		t.Errorf("recorded_at %q is not RFC 3339 UTC with milliseconds", r.RecordedAt)
	}
}

// checkStream: the results stream holds each recorded result once, the
// outboxes are empty.
func checkStream(t *testing.T, rdb redis.UniversalClient, s *ranking.Store) {
	t.Helper()
	ctx := context.Background()
	msgs, err := rdb.XRange(ctx, s.ResultsStream(), "-", "+").Result()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, m := range msgs {
		k := fmt.Sprint(m.Values["board"], " ", m.Values["view"], " ", m.Values["period"])
		if seen[k] {
			t.Errorf("%s relayed twice", k)
		}
		seen[k] = true
		raw, err := s.Result(ctx, fmt.Sprint(m.Values["board"]), fmt.Sprint(m.Values["view"]), fmt.Sprint(m.Values["period"]))
		if err == nil && string(raw) != m.Values["result"] {
			t.Errorf("%s: relayed %s, stored %s", k, m.Values["result"], raw)
		}
		if m.Values["type"] != "result.recorded" {
			t.Errorf("%s: type %v", k, m.Values["type"])
		}
	}
	if n, err := rdb.XLen(ctx, s.Prefix()+"{g}:out").Result(); err != nil || n != 0 {
		t.Errorf("outbox holds %d entries (%v) after the relay", n, err)
	}
	if len(msgs) == 0 {
		t.Error("nothing relayed")
	}
}

// TestResultsRecordAndRelayOnEveryBackend: on miniredis, real Redis and the
// cluster, with every script's keys guarded, results are recorded (empty
// ones: on a real clock no period with scores is final yet), and a relay
// that stops after appending to the results stream but before deleting
// the outbox entry, as a crash would, relays again without a duplicate.
func TestResultsRecordAndRelayOnEveryBackend(t *testing.T) {
	ranking.GuardKeys(t)
	for _, be := range backends() {
		t.Run(be.Name, func(t *testing.T) {
			ctx := context.Background()
			rdb := be.Client(t)
			cfg := MustConfig(t, "boards: [{id: g, views: [hour, 2d, all], results_keep: 2, lateness: 0s}]\n")
			s := newStore(t, rdb, cfg, nil)
			if _, err := s.Write(ctx, "g", ranking.Event{Member: "a", Value: 1}); err != nil {
				t.Fatal(err)
			}
			crashed := 0
			s.SetAfterRelay(func() error {
				crashed++
				return fmt.Errorf("crash %d", crashed)
			})
			n, err := s.RecordResults(ctx)
			if err != nil || n != 4 {
				t.Fatalf("recorded %d (%v), want 4: 2 hours and 2 windows", n, err)
			}
			if _, err := s.RelayResults(ctx); err == nil || crashed != 1 {
				t.Fatalf("relay with a crash after the append: %v", err)
			}
			s.SetAfterRelay(nil)
			if n, err := s.RelayResults(ctx); err != nil || n != 3 {
				t.Fatalf("relay after the crash appended %d (%v), want 3 (the first was appended before)", n, err)
			}
			if n, err := rdb.XLen(ctx, s.ResultsStream()).Result(); err != nil || n != 4 {
				t.Fatalf("results stream holds %d (%v), want 4", n, err)
			}
			checkStream(t, rdb, s)
			var r ranking.Result
			raw, _ := rdb.XRange(ctx, s.ResultsStream(), "-", "+").Val()[0].Values["result"].(string)
			if err := json.Unmarshal([]byte(raw), &r); err != nil {
				t.Fatal(err)
			}
			if again, err := s.RecordResult(ctx, "g", r.View, r.Period); err != nil || again {
				t.Fatalf("recording %s %s again: %v, %v; want false, nil", r.View, r.Period, again, err)
			}
		})
	}
}

// TestRunResultRecorderRecordsOnStart: the loop's first pass, at once on
// start, records the final periods and relays them.
func TestRunResultRecorderRecordsOnStart(t *testing.T) {
	at := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	m, rdb := MustMiniredis(t, at)
	cfg := MustConfig(t, "boards: [{id: g, views: [day, all], results_keep: 1, lateness: 1h}]\n")
	s := newStore(t, rdb, cfg, func() time.Time { return at })
	if _, err := s.Write(context.Background(), "g", ranking.Event{Member: "a", Value: 4}); err != nil {
		t.Fatal(err)
	}
	m.SetTime(at.Add(16 * time.Hour)) // 02:00 the next day: the 22nd is final
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.RunResultRecorder(ctx, time.Hour, func(err error) { t.Error(err) })
	}()
	testsupport.WaitFor(t, "the first results", func() bool { return rdb.XLen(context.Background(), s.ResultsStream()).Val() > 0 })
	cancel()
	<-done
	raw, err := s.Result(context.Background(), "g", "day", "2026-11-22")
	if err != nil || !strings.Contains(string(raw), `"entries":[{"rank":1,"member":"a","name":null,"score":4}]`) {
		t.Fatalf("result %s, %v", raw, err)
	}
	if n := rdb.XLen(context.Background(), s.ResultsStream()).Val(); n != 1 {
		t.Fatalf("results stream holds %d, want 1", n)
	}
}

// TestRecordResultRereadsAfterARemoval: a member removed between the read
// and record.lua makes the script refuse; the retry records the result
// without it.
func TestRecordResultRereadsAfterARemoval(t *testing.T) {
	at := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	m, rdb := MustMiniredis(t, at)
	cfg := MustConfig(t, "boards: [{id: g, views: [day, all], lateness: 1h}]\n")
	s := newStore(t, rdb, cfg, func() time.Time { return at })
	ctx := context.Background()
	for _, ev := range []ranking.Event{{Member: "cheat", Value: 99}, {Member: "b", Value: 5}} {
		if _, err := s.Write(ctx, "g", ev); err != nil {
			t.Fatal(err)
		}
	}
	m.SetTime(at.Add(16 * time.Hour))
	calls := 0
	s.SetBeforeRecord(func() {
		if calls++; calls == 1 {
			if _, err := s.RemoveMember(ctx, "g", "cheat"); err != nil {
				t.Error(err)
			}
		}
	})
	if ok, err := s.RecordResult(ctx, "g", "day", "2026-11-22"); !ok || err != nil {
		t.Fatalf("RecordResult: %v, %v", ok, err)
	}
	raw, _ := s.Result(ctx, "g", "day", "2026-11-22")
	if calls != 2 || !strings.Contains(string(raw), `"total":1,"entries":[{"rank":1,"member":"b","name":null,"score":5}]`) {
		t.Fatalf("after %d reads: %s", calls, raw)
	}
}

// TestResultRecordedWhenKeepEndsBeforeLateness: an hour view keeping fewer
// periods than its lateness spans still has its data when it turns final,
// so its result is recorded (the data used to expire at that very moment).
func TestResultRecordedWhenKeepEndsBeforeLateness(t *testing.T) {
	at := time.Date(2026, 11, 22, 10, 15, 0, 0, time.UTC)
	m, rdb := MustMiniredis(t, at)
	cfg := MustConfig(t, "boards: [{id: g, views: [hour], keep: 1, results_keep: 1, lateness: 3h}]\n")
	s := newStore(t, rdb, cfg, func() time.Time { return at })
	if _, err := s.Write(context.Background(), "g", ranking.Event{Member: "a", Value: 4}); err != nil {
		t.Fatal(err)
	}
	m.SetTime(time.Date(2026, 11, 22, 14, 0, 30, 0, time.UTC)) // 10:00 is final since 14:00
	if n, err := s.RecordResults(context.Background()); err != nil || n != 1 {
		t.Fatalf("recorded %d, %v", n, err)
	}
	raw, err := s.Result(context.Background(), "g", "hour", "2026-11-22T10")
	if err != nil || !strings.Contains(string(raw), `"entries":[{"rank":1,"member":"a","name":null,"score":4}]`) {
		t.Fatalf("result %s, %v", raw, err)
	}
}
