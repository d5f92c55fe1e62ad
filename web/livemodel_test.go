package web

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/PuerkitoBio/goquery"
)

// LiveModel is what a live table shows, built from frames as static/app.js
// builds it: a whole fragment sets it, a diff frame patches it. Rows are
// kept as normalized markup (parsed and written again), so that a patched
// model and a fresh fragment compare as strings.
type LiveModel struct {
	ID, Period      string
	Members, Rows   []string // in order
	Caption         string
	TableAttrs      string // the table element's attributes (a podium's class)
	Ticker          string // the ticker block's normalized markup
	Diffs, Wholes   int    // frames applied of each kind
	WholeBytes      int    // bytes of the whole fragments applied
	DiffBytes       int    // bytes of the diff frames applied
	LastWasDiff     bool
	LastDeltas      map[string]string // the score changes of the last diff, by member ("+8", "−4.915 s")
	LastBetter      map[string]int
	LastPlacedNoRow []string // members the last diff moved without their markup
}

// Apply applies one frame, whole or diff.
func (m *LiveModel) Apply(frame string) error {
	if strings.HasPrefix(frame, "{") {
		m.DiffBytes += len(frame)
		return m.applyDiff(frame)
	}
	m.WholeBytes += len(frame)
	return m.applyWhole(frame)
}

func (m *LiveModel) applyWhole(frame string) error {
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(frame))
	if err != nil {
		return err
	}
	root := doc.Find("body > *").First()
	*m = LiveModel{Diffs: m.Diffs, Wholes: m.Wholes + 1, WholeBytes: m.WholeBytes, DiffBytes: m.DiffBytes}
	m.ID, _ = root.Attr("id")
	m.Period, _ = root.Attr("data-period")
	root.Find("tr[data-member]").Each(func(_ int, s *goquery.Selection) {
		id, _ := s.Attr("data-member")
		h, _ := goquery.OuterHtml(s)
		m.Members = append(m.Members, id)
		m.Rows = append(m.Rows, h)
	})
	m.Caption = root.Find("caption").Text()
	if table := root.Find("table").First(); table.Length() > 0 {
		m.TableAttrs = fmt.Sprintf("%v", table.Nodes[0].Attr)
	}
	m.Ticker = outer(root.Find(`[data-live-block="ticker"]`))
	return nil
}

func outer(s *goquery.Selection) string {
	if s.Length() == 0 {
		return ""
	}
	h, _ := goquery.OuterHtml(s)
	return h
}

// normRow is a row's markup parsed and written again.
func normRow(h string) string {
	doc, _ := goquery.NewDocumentFromReader(strings.NewReader("<table><tbody>" + h + "</tbody></table>"))
	return outer(doc.Find("tr").First())
}

// normBlock is a block's (or a span's) markup parsed and written again.
func normBlock(h string) string {
	doc, _ := goquery.NewDocumentFromReader(strings.NewReader("<div>" + h + "</div>"))
	out, _ := doc.Find("body > div").Html()
	return out
}

var (
	rankRE = regexp.MustCompile(`(data-live-rank="">)(-?\d+)(</span>)`)
	moveRE = regexp.MustCompile(`<span class="move [^"]*"[^>]*><span aria-hidden="true">[^<]*</span><span class="visually-hidden">[^<]*</span></span>`)
)

func setRank(row string, rank int64) string {
	return rankRE.ReplaceAllString(row, "${1}"+strconv.FormatInt(rank, 10)+"${3}")
}

func rankOf(row string) int64 {
	sm := rankRE.FindStringSubmatch(row)
	if sm == nil {
		return 0
	}
	n, _ := strconv.ParseInt(sm[2], 10, 64)
	return n
}

func setMove(row, mv string) string {
	mv = normBlock(mv)
	if moveRE.MatchString(row) {
		return moveRE.ReplaceAllLiteralString(row, mv)
	}
	loc := rankRE.FindStringIndex(row)
	if loc == nil {
		return row
	}
	// The rank's span is followed by a space, then the rank change.
	at := loc[1] + 1
	return row[:at] + mv + row[at:]
}

func (m *LiveModel) applyDiff(frame string) error {
	var d diffFrame
	if err := json.Unmarshal([]byte(frame), &d); err != nil {
		return err
	}
	if d.T != "diff" || d.ID != m.ID || d.Period != m.Period {
		return fmt.Errorf("diff for %s %s on %s %s", d.ID, d.Period, m.ID, m.Period)
	}
	m.Diffs++
	m.LastWasDiff = true
	m.LastDeltas, m.LastBetter, m.LastPlacedNoRow = map[string]string{}, map[string]int{}, nil
	gone := map[string]bool{}
	for _, g := range d.Gone {
		gone[g] = true
	}
	placed := map[string]bool{}
	for _, r := range d.Rows {
		placed[r.M] = true
	}
	at := map[string]int{}
	for i, id := range m.Members {
		at[id] = i
	}
	var rest []int
	for i, id := range m.Members {
		if !gone[id] && !placed[id] {
			rest = append(rest, i)
		}
	}
	members, rows := make([]string, d.N), make([]string, d.N)
	for _, r := range d.Rows {
		if r.I < 0 || r.I >= d.N || members[r.I] != "" {
			return fmt.Errorf("row %s at %d of %d", r.M, r.I, d.N)
		}
		members[r.I] = r.M
		if r.H != "" {
			rows[r.I] = normRow(r.H)
		} else {
			i, ok := at[r.M]
			if !ok {
				return fmt.Errorf("row %s moved but never shown", r.M)
			}
			rows[r.I] = setRank(m.Rows[i], r.R)
			if r.Move != nil {
				rows[r.I] = setMove(rows[r.I], *r.Move)
			}
			m.LastPlacedNoRow = append(m.LastPlacedNoRow, r.M)
		}
		if r.D != "" {
			m.LastDeltas[r.M], m.LastBetter[r.M] = r.D, r.B
		}
	}
	var deltas []int64
	for _, run := range d.Ranks {
		for range run[0] {
			deltas = append(deltas, run[1])
		}
	}
	if d.Ranks != nil && len(deltas) != len(rest) {
		return fmt.Errorf("%d rank changes for %d rows", len(deltas), len(rest))
	}
	k := 0
	for i := range members {
		if members[i] != "" {
			continue
		}
		if k >= len(rest) {
			return fmt.Errorf("position %d left empty", i)
		}
		j := rest[k]
		members[i], rows[i] = m.Members[j], m.Rows[j]
		if d.Ranks != nil && deltas[k] != 0 {
			rows[i] = setRank(rows[i], rankOf(rows[i])+deltas[k])
		}
		k++
	}
	if k != len(rest) {
		return fmt.Errorf("%d rows kept for %d places", len(rest), k)
	}
	m.Members, m.Rows = members, rows
	if d.Caption != "" {
		m.Caption = d.Caption
	}
	if d.Ticker != "" {
		m.Ticker = normBlock(d.Ticker)
	}
	return nil
}

// Same says how m differs from o (what a whole fragment shows), or "".
func (m *LiveModel) Same(o *LiveModel) string {
	switch {
	case m.ID != o.ID || m.Period != o.Period:
		return fmt.Sprintf("table %s %s, want %s %s", m.ID, m.Period, o.ID, o.Period)
	case strings.Join(m.Members, " ") != strings.Join(o.Members, " "):
		return fmt.Sprintf("members %v, want %v", m.Members, o.Members)
	case m.Caption != o.Caption:
		return fmt.Sprintf("caption %q, want %q", m.Caption, o.Caption)
	case m.TableAttrs != o.TableAttrs:
		return fmt.Sprintf("table %s, want %s", m.TableAttrs, o.TableAttrs)
	case m.Ticker != o.Ticker:
		return fmt.Sprintf("ticker %q, want %q", m.Ticker, o.Ticker)
	}
	for i := range m.Rows {
		if m.Rows[i] != o.Rows[i] {
			return fmt.Sprintf("row %d:\n%s\nwant\n%s", i, m.Rows[i], o.Rows[i])
		}
	}
	return ""
}

// Table is the model's rows as "rank member score", as tableRows reads a page.
func (m *LiveModel) Table() []string {
	var out []string
	for _, r := range m.Rows {
		doc, _ := goquery.NewDocumentFromReader(strings.NewReader("<table><tbody>" + r + "</tbody></table>"))
		out = append(out, strings.TrimSpace(doc.Find("[data-live-rank]").Text())+" "+mustAttr(doc.Find("tr"), "data-member")+" "+strings.TrimSpace(doc.Find("[data-live-score]").Text()))
	}
	return out
}

func mustAttr(s *goquery.Selection, name string) string {
	v, _ := s.Attr(name)
	return v
}
