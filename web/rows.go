package web

import (
	"hash/fnv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/standings/standings/ranking"
	"github.com/standings/standings/views"
)

// PageSize is the number of rows a board page shows (contract: 100).
const PageSize = 100

// rows turns entries into table rows linking to rank cards in the period
// shown (no period in the link when it is the current one), on the same
// (segment) board.
func rows(b *ranking.Board, view string, seg ranking.Segment, period string, es []ranking.Entry, self string) []views.Row {
	out := make([]views.Row, 0, len(es))
	v, _ := b.View(view)
	for _, e := range es {
		name := e.Name
		if name == "" {
			name = e.Member
		}
		out = append(out, views.Row{
			Rank: e.Rank, Member: e.Member, Name: name, Score: scoreText(b, e.Score),
			CardURL:  withQuery(cardPath(b.ID, view, e.Member), "period", period, "segment", seg.String()),
			Self:     self != "" && e.Member == self,
			Move:     moveOf(v, e),
			Initials: initials(name), Hue: hue(e.Member),
		})
	}
	markZoneEnds(b, out)
	return out
}

// markZoneEnds names, on each row that is the last of its zone in the
// table, the zone whose line is drawn after it. It is computed into the
// row itself so that a live diff sends a row whose line came or went as a
// changed row. The table's last row ends its zone only when no later row
// can share it: its rank is the zone's last and ranks are not shared.
func markZoneEnds(b *ranking.Board, rs []views.Row) {
	if len(b.Zones) == 0 {
		return
	}
	for i := range rs {
		z, ok := b.ZoneOf(rs[i].Rank)
		if !ok {
			continue
		}
		if i+1 < len(rs) {
			if next, ok := b.ZoneOf(rs[i+1].Rank); ok && next == z {
				continue
			}
		} else if rs[i].Rank != int64(z.Top) || b.Ties == ranking.TiesShared {
			continue
		}
		rs[i].ZoneEnd = z.Title
	}
}

// initials are up to two letters of a display name for its avatar: the
// first letters of its first and last words ("Leila Haddad" -> "LH").
func initials(name string) string {
	words := strings.FieldsFunc(name, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	if len(words) == 0 {
		return "?"
	}
	first := func(w string) string {
		r, _ := utf8.DecodeRuneInString(w)
		return strings.ToUpper(string(r))
	}
	if len(words) == 1 {
		return first(words[0])
	}
	return first(words[0]) + first(words[len(words)-1])
}

// hue picks one of the avatar colours from the member id (FNV-1a), so a
// member keeps its colour everywhere.
func hue(member string) int64 {
	h := fnv.New32a()
	h.Write([]byte(member))
	return int64(h.Sum32() % 12)
}
