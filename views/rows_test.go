package views

import (
	"bytes"
	"context"
	"io"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestStandingsRowsMatchTempl: standingsRows, the Go writer pages use,
// writes exactly the markup of the templ reference standingsRowsTempl, on
// random tables: names and ids with every character HTML escapes (and
// some it must not touch), ties, medals, the card's own row, every move,
// segment and query URLs, score formats. Either writer path (io.StringWriter
// or a plain io.Writer) must agree.
func TestStandingsRowsMatchTempl(t *testing.T) {
	seed := uint64(rand.Int64())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	for i := range 500 {
		rows := randomRows(rng)
		want := render(t, standingsRowsTempl(rows), false)
		for _, plain := range []bool{false, true} {
			if got := render(t, standingsRows(rows), plain); got != want {
				t.Fatalf("seed %d table %d (plain writer %v): rows %#v\nGo writer:\n%s\ntempl:\n%s", seed, i, plain, rows, got, want)
			}
		}
	}
}

// TestStandingsRowsWriteError: a failing writer's error is returned.
func TestStandingsRowsWriteError(t *testing.T) {
	rows := randomRows(rand.New(rand.NewPCG(1, 2)))
	if err := standingsRows(append(rows, Row{Rank: 1})).Render(context.Background(), failWriter{}); err == nil {
		t.Error("want the writer's error")
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, os.ErrClosed }

// plainWriter hides bytes.Buffer's WriteString, for the writer's other path.
type plainWriter struct{ w io.Writer }

func (p plainWriter) Write(b []byte) (int, error) { return p.w.Write(b) }

func render(t *testing.T, c interface {
	Render(context.Context, io.Writer) error
}, plain bool) string {
	t.Helper()
	var b bytes.Buffer
	var w io.Writer = &b
	if plain {
		w = plainWriter{&b}
	}
	if err := c.Render(context.Background(), w); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// randomRows is a standings table as the handlers build it, ranked with
// ties, each field drawn to reach every branch and every escape.
func randomRows(rng *rand.Rand) []Row {
	rows := make([]Row, rng.IntN(25))
	rank := int64(1)
	for i := range rows {
		if i > 0 && rng.IntN(4) != 0 { // otherwise a tie with the row above
			rank = int64(i + 1)
		}
		member := randomText(rng, 1+rng.IntN(12))
		name := member
		if rng.IntN(3) != 0 {
			name = randomText(rng, rng.IntN(20))
		}
		r := Row{
			Rank: rank, Member: member, Name: name,
			Score:    randomScore(rng),
			CardURL:  randomURL(rng, member),
			Self:     rng.IntN(8) == 0,
			Initials: randomText(rng, rng.IntN(3)),
			Hue:      rng.Int64N(12),
		}
		if rng.IntN(5) == 0 {
			r.ZoneEnd = randomText(rng, 1+rng.IntN(10))
		}
		k := moveKinds[rng.IntN(len(moveKinds))]
		if rng.IntN(20) == 0 {
			k = randomText(rng, rng.IntN(5))
		}
		if k != "" {
			r.Move = Move{Kind: k, Text: randomText(rng, rng.IntN(4)), Label: randomText(rng, rng.IntN(30))}
		}
		switch rng.IntN(40) { // ranks and hues no handler makes; the two must still agree
		case 0:
			r.Rank = rng.Int64N(4) - 1
		case 1:
			r.Rank = 1<<63 - 1
		case 2:
			r.Hue = rng.Int64() - 1<<62
		}
		rows[i] = r
	}
	return rows
}

// moveKinds are the kinds web/moves.go gives a move, and none; other
// text is drawn too (templ writes a class as text, escaped).
var moveKinds = []string{"", "up", "down", "same", "new"}

// textPool mixes plain letters with everything markup must escape, and
// what it must leave alone: entities already written out, quotes of both
// kinds, accents and combining marks, emoji, right-to-left text, control
// and zero-width characters, and bytes that are not UTF-8.
var textPool = []string{
	"a", "Z", "0", "9", " ", "-", "_", ".", ":", "/", "?", "=", "%", "+", "#", ";",
	"<", ">", "&", "\"", "'", "`", "&amp;", "&#34;", "&lt;b&gt;", "<script>", "</tr>", "<!--", "-->", "]]>",
	"é", "e\u0301", "ß", "Ω", "名", "👍🏽", "\u202e", "مرحبا", "\u200b", "\ufeff",
	"\x00", "\t", "\n", "\r", "\x7f", "\xff", "\xc3", "\\",
}

func randomText(rng *rand.Rand, n int) string {
	var b strings.Builder
	for range n {
		b.WriteString(textPool[rng.IntN(len(textPool))])
	}
	return b.String()
}

// randomScore is a score as the boards format them (integers with
// separators, decimals, times, signs), or any text.
func randomScore(rng *rand.Rand) string {
	n := rng.Int64N(2_000_000) - 1000
	switch rng.IntN(6) {
	case 0:
		return strconv.FormatInt(n, 10)
	case 1:
		s := strconv.FormatInt(n, 10)
		for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
			s = s[:i] + "," + s[i:]
		}
		return s
	case 2:
		return strconv.FormatFloat(float64(n)/1000, 'f', 3, 64)
	case 3:
		return strconv.FormatInt(n/60000, 10) + ":" + strconv.FormatFloat(float64(n%60000)/1000, 'f', 3, 64)
	case 4:
		return "−" + strconv.FormatInt(n, 10) + " pts"
	}
	return randomText(rng, rng.IntN(8))
}

// randomURL is a rank card's URL, sometimes with a period and a segment,
// or any text.
func randomURL(rng *rand.Rand, member string) string {
	u := "/boards/b/week/members/" + member
	switch rng.IntN(4) {
	case 0:
		return u + "?period=2026-11-16&segment=country%3AFR"
	case 1:
		return u + "?segment=" + randomText(rng, 3)
	case 2:
		return randomText(rng, rng.IntN(10))
	}
	return u
}
