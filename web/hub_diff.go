package web

// The live hub's diff frames: after the first whole fragment, a table
// topic's frame says only what changed since the topic's previous frame.
//
// A diff frame is one JSON object (static/app.js applyDiff reads it):
//
//	{"t":"diff","id":TABLE_ID,"period":P,"n":ROWS,
//	 "rows":[{"m":MEMBER,"i":POSITION,"h":ROW_HTML,"r":RANK,"mv":MOVE_HTML,"d":"+8","b":1}...],
//	 "ranks":[[COUNT,RANK_CHANGE]...],"gone":[MEMBER...],
//	 "caption":TEXT,"ticker":BLOCK_HTML}
//
// "rows" are the rows placed at a position of their own (0-based, in
// position order): new rows and rows that changed more than their rank
// carry their markup ("h", from the same row writer as the page), rows
// that only moved carry their new rank ("r") and, when it changed, their
// rank change's markup ("mv"); a row whose score changed
// carries the change as the board shows it ("d": "−4.915 s") and whether
// it is better (1) or worse (-1) by the board's order. Every other row
// keeps its order: with "gone" and the placed rows taken out, the rest
// fill the free positions in the order they had, and "ranks" says, in
// runs over them, by how much their rank numbers change. "caption"
// and "ticker" come only when they changed. Whatever a diff
// cannot say (another period, an empty table, a block that appears, a
// first page's podium that comes or goes) is a whole fragment, as is a
// diff no smaller than one.

import (
	"bytes"
	"encoding/json"
	"slices"

	"github.com/standings/standings/ranking"
	"github.com/standings/standings/views"
)

// tableState is what a table topic's frame showed, kept for the next
// frame's diff.
type tableState struct {
	id, period string
	rows       []views.Row
	raw        []int64 // each row's score, as stored (scaled)
	caption    string
	ticker     string // the ticker block's markup; "" when there is none
	podium     bool   // the table styles its top three as a podium
	// delta says a score change as the board shows it, and whether it is
	// better (1) or worse (-1) by the board's order.
	delta func(from, to int64) (string, int)
}

type diffFrame struct {
	T       string     `json:"t"`
	ID      string     `json:"id"`
	Period  string     `json:"period"`
	N       int        `json:"n"`
	Rows    []diffRow  `json:"rows,omitempty"`
	Ranks   [][2]int64 `json:"ranks,omitempty"`
	Gone    []string   `json:"gone,omitempty"`
	Caption string     `json:"caption,omitempty"`
	Ticker  string     `json:"ticker,omitempty"`
}

type diffRow struct {
	M string `json:"m"`
	I int    `json:"i"`
	H string `json:"h,omitempty"`
	R int64  `json:"r,omitempty"`
	// Move is the markup of the row's new rank change ("" for none).
	Move *string `json:"mv,omitempty"`
	D    string  `json:"d,omitempty"`
	B    int     `json:"b,omitempty"`
}

// diffOf is the diff frame from table a to table b, or nil when b must go
// whole.
func diffOf(a, b *tableState) []byte {
	if a == nil || b == nil || a.id != b.id || a.period != b.period ||
		len(a.rows) == 0 || len(b.rows) == 0 ||
		(a.ticker == "") != (b.ticker == "") || a.podium != b.podium {
		return nil
	}
	old := make(map[string]int, len(a.rows))
	for i, r := range a.rows {
		old[r.Member] = i
	}
	d := diffFrame{T: "diff", ID: b.id, Period: b.period, N: len(b.rows)}
	// Rows that kept their markup but for the rank may keep their place in
	// the order: the longest run of them in their old order does.
	var keepNew, keepOld []int
	kept := make(map[string]struct{}, len(b.rows))
	for j, r := range b.rows {
		kept[r.Member] = struct{}{}
		if i, ok := old[r.Member]; ok && rankOnly(a.rows[i], r) {
			keepNew, keepOld = append(keepNew, j), append(keepOld, i)
		}
	}
	stay := make([]bool, len(b.rows))
	for _, k := range increasing(keepOld) {
		stay[keepNew[k]] = true
	}
	for j, r := range b.rows {
		i, was := old[r.Member]
		if stay[j] {
			delta := r.Rank - a.rows[i].Rank
			if n := len(d.Ranks); n > 0 && d.Ranks[n-1][1] == delta {
				d.Ranks[n-1][0]++
			} else {
				d.Ranks = append(d.Ranks, [2]int64{1, delta})
			}
			continue
		}
		dr := diffRow{M: r.Member, I: j}
		ok, move := false, false
		if was {
			ok, move = views.RankChange(a.rows[i], r)
		}
		switch {
		case ok:
			dr.R = r.Rank
			if move {
				mv := views.MoveHTML(r.Move)
				dr.Move = &mv
			}
		default:
			dr.H = views.RowHTML(r)
			if was && b.raw[j] != a.raw[i] && b.delta != nil {
				dr.D, dr.B = b.delta(a.raw[i], b.raw[j])
			}
		}
		d.Rows = append(d.Rows, dr)
	}
	if len(d.Ranks) == 1 && d.Ranks[0][1] == 0 {
		d.Ranks = nil // every row that stayed kept its rank
	}
	for _, r := range a.rows {
		if _, ok := kept[r.Member]; !ok {
			d.Gone = append(d.Gone, r.Member)
		}
	}
	if a.caption != b.caption {
		d.Caption = b.caption
	}
	if a.ticker != b.ticker {
		d.Ticker = b.ticker
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // read by JSON.parse, never put in a page as it is
	if err := enc.Encode(d); err != nil {
		return nil
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// rankOnly: row b is row a but for its rank number.
func rankOnly(a, b views.Row) bool {
	ok, move := views.RankChange(a, b)
	return ok && !move
}

// increasing returns the indexes of a longest strictly increasing
// subsequence of xs (patience sorting, O(n log n)).
func increasing(xs []int) []int {
	var tails []int // tails[k]: index in xs of the smallest end of a run of length k+1
	prev := make([]int, len(xs))
	for i, x := range xs {
		k, _ := slices.BinarySearchFunc(tails, x, func(t, x int) int { return xs[t] - x })
		if k > 0 {
			prev[i] = tails[k-1]
		} else {
			prev[i] = -1
		}
		if k == len(tails) {
			tails = append(tails, i)
		} else {
			tails[k] = i
		}
	}
	out := make([]int, len(tails))
	for k, i := len(tails)-1, -1; k >= 0; k-- {
		if k == len(tails)-1 {
			i = tails[k]
		}
		out[k] = i
		i = prev[i]
	}
	return out
}

// scoreDelta says a change of score on board b as its pages show scores:
// "+8" on a points board, "−4.915 s" on a lap board (format: duration),
// better (1) or worse (-1) by the board's order.
func scoreDelta(b *ranking.Board) func(from, to int64) (string, int) {
	return func(from, to int64) (string, int) {
		d := to - from
		if d == 0 {
			return "", 0
		}
		better := 1
		if (d < 0) != (b.Order == ranking.Asc) {
			better = -1
		}
		sign, mag := "+", d
		if d < 0 {
			sign, mag = "−", -d // a minus sign, not a hyphen
		}
		if b.Format != "duration" {
			return sign + b.FormatScore(mag), better
		}
		scale := int64(1)
		for range b.Decimals {
			scale *= 10
		}
		if mag/scale < 60 {
			return sign + b.FormatScore(mag) + " s", better
		}
		return sign + scoreText(b, mag), better
	}
}

// tableStateOf keeps what a live table frame shows, for the next diff.
func tableStateOf(b *ranking.Board, t views.Table, raw []int64, ticker string) *tableState {
	return &tableState{id: t.ID, period: t.Period, rows: t.Rows, raw: raw, caption: t.Caption, ticker: ticker, podium: len(t.Podium) > 0, delta: scoreDelta(b)}
}
