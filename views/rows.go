package views

import (
	"context"
	"io"
	"strconv"
	"strings"

	"github.com/a-h/templ"
)

// standingsRows renders the <tr> rows of a standings table. It is written
// in Go rather than templ because it is the most rendered markup there is:
// 100 rows per board page, every live frame, every rank card and compare
// table. templ formats each { expression } through fmt.Sprint, with two
// allocations, and builds a map for each class list: 47 allocations per
// row. This writes a row with none. The markup is that of the reference
// component standingsRowsTempl (rows_ref.templ), byte for byte:
// TestStandingsRowsMatchTempl checks it on random rows.
func standingsRows(rows []Row) templ.Component {
	return templ.ComponentFunc(func(_ context.Context, w io.Writer) error {
		sw, ok := w.(io.StringWriter)
		if !ok {
			sw = stringWriter{w}
		}
		h := htmlWriter{w: sw}
		for i := range rows {
			r := &rows[i]
			h.raw(`<tr data-testid="` + TestRow + `" ` + HookMember + `="`)
			h.esc(r.Member)
			h.raw(`" class="`)
			switch {
			case r.Self && r.Rank <= 3:
				h.raw("self " + medal(r.Rank))
			case r.Self:
				h.raw("self")
			case r.Rank <= 3:
				h.raw(medal(r.Rank))
			}
			if r.ZoneEnd != "" {
				if r.Self || r.Rank <= 3 {
					h.raw(" ")
				}
				h.raw("zone-end")
			}
			h.raw(`"><td class="rank"><span data-testid="` + TestRank + `" ` + HookLiveRank + `>`)
			h.raw(strconv.FormatInt(r.Rank, 10))
			h.raw(`</span> `)
			h.move(r.Move)
			h.raw(`</td><th scope="row" class="who" data-testid="` + TestMember + `"><span class="avatar hue-`)
			h.raw(strconv.FormatInt(r.Hue, 10))
			h.raw(`" aria-hidden="true">`)
			h.esc(r.Initials)
			h.raw(`</span> <a href="`)
			h.esc(r.CardURL)
			h.raw(`">`)
			h.esc(r.Name)
			h.raw(`</a> `)
			if r.Name != r.Member {
				h.raw(`<span class="id">`)
				h.esc(r.Member)
				h.raw(`</span>`)
			}
			if r.ZoneEnd != "" {
				// Named in text, not by colour alone: "▲ Prize", read out
				// as "Prize ends here".
				h.raw(`<span class="zone-line" data-testid="` + TestZoneLine + `"><span aria-hidden="true">▲ </span>`)
				h.esc(r.ZoneEnd)
				h.raw(`<span class="visually-hidden"> ends here</span></span>`)
			}
			h.raw(`</th><td class="score"><span data-testid="` + TestScore + `" ` + HookLiveScore + `>`)
			h.esc(r.Score)
			h.raw(`</span></td></tr>`)
		}
		return h.err
	})
}

// RowHTML is the markup of one standings row, as tables write it: live
// frames carry it for each row that changed more than its rank.
func RowHTML(r Row) string {
	var b strings.Builder
	standingsRows([]Row{r}).Render(context.Background(), &b) // a strings.Builder does not fail
	return b.String()
}

// MoveHTML is the markup of a row's rank change ("" for the zero Move),
// which a live frame sends when a row's rank change changed.
func MoveHTML(m Move) string {
	var b strings.Builder
	h := htmlWriter{w: &b}
	h.move(m)
	return b.String()
}

// RankChange reports whether row b differs from row a in its rank number
// and its rank change (move: whether that changed too) alone, so that a
// live frame can say those instead of the whole row. A rank of the podium
// (1-3) also changes the row's class, so a row that enters or leaves it
// never does.
func RankChange(a, b Row) (ok, move bool) {
	if (a.Rank <= 3 || b.Rank <= 3) && a.Rank != b.Rank {
		return false, false
	}
	move = a.Move != b.Move
	a.Rank, a.Move = b.Rank, b.Move
	return a == b, move
}

// move writes a row's rank change (nothing for the zero Move).
func (h *htmlWriter) move(m Move) {
	if m.Kind == "" {
		return
	}
	h.raw(`<span class="move `)
	h.esc(m.Kind)
	h.raw(`" data-testid="` + TestMove + `" title="`)
	h.esc(m.Label)
	h.raw(`"><span aria-hidden="true">`)
	h.esc(m.Text)
	h.raw(`</span><span class="visually-hidden">`)
	h.esc(m.Label)
	h.raw(`</span></span>`)
}

// htmlWriter writes markup and HTML-escaped text (as templ.EscapeString
// escapes it) without allocating, keeping the first write error.
type htmlWriter struct {
	w   io.StringWriter
	err error
}

func (h *htmlWriter) raw(s string) {
	if h.err == nil {
		_, h.err = h.w.WriteString(s)
	}
}

func (h *htmlWriter) esc(s string) {
	last := 0
	for i := 0; i < len(s); i++ {
		var rep string
		switch s[i] {
		case '<':
			rep = "&lt;"
		case '>':
			rep = "&gt;"
		case '&':
			rep = "&amp;"
		case '\'':
			rep = "&#39;"
		case '"':
			rep = "&#34;"
		default:
			continue
		}
		h.raw(s[last:i])
		h.raw(rep)
		last = i + 1
	}
	h.raw(s[last:])
}

type stringWriter struct{ w io.Writer }

func (s stringWriter) WriteString(v string) (int, error) { return io.WriteString(s.w, v) }
