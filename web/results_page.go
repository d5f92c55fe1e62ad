package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/standings/standings/ranking"
	"github.com/standings/standings/views"
)

// ResultsPageSize is how many results the results page lists at once.
const ResultsPageSize = 20

// podiumSize is how many entries of a result its podium shows.
const podiumSize = 3

// storedResult is a recorded result as stored. It is parsed here rather
// than into ranking.Result so that fields a newer recorder adds (such as
// amended_at) are read when present and tolerated when not.
type storedResult struct {
	Period    string                `json:"period"`
	Total     int64                 `json:"total"`
	AmendedAt string                `json:"amended_at"`
	Entries   []ranking.ResultEntry `json:"entries"`
}

func parseResult(raw json.RawMessage) (storedResult, error) {
	var r storedResult
	if err := json.Unmarshal(raw, &r); err != nil {
		return r, fmt.Errorf("stored result: %w", err)
	}
	return r, nil
}

// handleResultsPage serves GET /boards/{board}/{view}/results?before=: the
// recorded results of a view, newest first, ResultsPageSize at a time.
func (s *Server) handleResultsPage(c echo.Context) error {
	var store resultsReader = s.store
	b, view, err := s.boardView(c)
	if err != nil {
		return err
	}
	v, _ := b.View(view)
	before := c.QueryParam("before")
	ctx := c.Request().Context()
	// One more than shown tells whether there are older ones.
	list, err := store.Results(ctx, b.ID, view, before, ResultsPageSize+1)
	if err != nil {
		return err
	}
	p := views.ResultsPage{
		Layout:     s.layout("Results · " + b.Title + " · " + viewLabel(v)),
		BoardTitle: b.Title,
		ViewLabel:  viewLabel(v),
		BoardURL:   boardPath(b.ID, v.Name),
	}
	p.Description = resultsDescription(b, v)
	for _, ov := range b.Views {
		if ov.Kind != ranking.All {
			p.Tabs = append(p.Tabs, views.Link{Label: viewLabel(ov), URL: resultsPath(b.ID, ov.Name), Current: ov.Name == v.Name})
		}
	}
	if before != "" {
		p.NewestURL = resultsPath(b.ID, v.Name)
	}
	older := len(list) > ResultsPageSize
	if older {
		list = list[:ResultsPageSize]
	}
	if before == "" {
		// The period that just ended leads while late scores may arrive.
		lead, err := s.provisional(ctx, b, v)
		if err != nil {
			return err
		}
		if lead != nil {
			p.Results = append(p.Results, *lead)
		}
	}
	var items []views.ResultItem
	for _, raw := range list {
		item, err := s.resultItem(b, v, raw)
		if err != nil {
			return err
		}
		items = append(items, item)
	}
	p.Results = append(p.Results, collapseEmpty(v, items)...)
	if older {
		p.OlderURL = withQuery(resultsPath(b.ID, v.Name), "before", items[len(items)-1].ID)
	}
	if len(p.Results) == 0 {
		p.Empty, err = s.noResults(c, b, v, before)
		if err != nil {
			return err
		}
	}
	return s.renderPage(c, http.StatusOK, views.Results(p))
}

// resultItem lays out one stored result with its podium.
func (s *Server) resultItem(b *ranking.Board, v ranking.View, raw json.RawMessage) (views.ResultItem, error) {
	cal := s.cfg.Calendar
	r, err := parseResult(raw)
	if err != nil {
		return views.ResultItem{}, err
	}
	per, err := cal.ParsePeriod(v, r.Period)
	if err != nil {
		return views.ResultItem{}, err
	}
	item := views.ResultItem{
		ID:       r.Period,
		Label:    periodLabel(v, per, cal.Location()),
		Podium:   resultRows(b, v.Name, r, podiumSize),
		Total:    fmt.Sprintf("%d ranked", r.Total),
		RecapURL: recapPath(b.ID, v.Name, r.Period),
		BoardURL: withQuery(boardPath(b.ID, v.Name), "period", r.Period),
		CSVURL:   withQuery(boardPath(b.ID, v.Name)+".csv", "period", r.Period),
		JSONURL:  resultJSONPath(b.ID, v.Name, r.Period),
	}
	if t, err := time.Parse(time.RFC3339, r.AmendedAt); err == nil {
		loc := cal.Location()
		item.Amended = "amended " + t.In(loc).Format("2 Jan 2006 15:04") + " " + loc.String()
	}
	return item, nil
}

// resultRows turns a result's first n entries into rows; a tie shows as
// equal ranks, the way the result records it.
func resultRows(b *ranking.Board, view string, r storedResult, n int) []views.Row {
	es := r.Entries[:min(n, len(r.Entries))]
	out := make([]views.Row, 0, len(es))
	for _, e := range es {
		name := e.Member
		if e.Name != nil && *e.Name != "" {
			name = *e.Name
		}
		out = append(out, views.Row{
			Rank: e.Rank, Member: e.Member, Name: name, Score: withUnit(b, resultScore(b, e.Score)),
			CardURL:  withQuery(cardPath(b.ID, view, e.Member), "period", r.Period),
			Initials: initials(name), Hue: hue(e.Member),
		})
	}
	return out
}

// noResults says why a results page is empty: nothing before the period
// asked for, or no period has finished yet and when the current one will.
func (s *Server) noResults(c echo.Context, b *ranking.Board, v ranking.View, before string) (string, error) {
	if b.ResultsKeep == 0 {
		return "This board records no results.", nil
	}
	if before != "" {
		return "No results recorded before this one.", nil
	}
	var store pageReader = s.reads
	pg, err := store.Page(c.Request().Context(), b.ID, v.Name, ranking.PageQuery{Limit: 1})
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("No %s has finished yet. %s becomes final on %s.",
		periodNoun(v), currentName(v), zoned(pg.Period.End.Add(b.Lateness), s.cfg.Calendar.Location(), "Mon 2 Jan 15:04")), nil
}

// periodNoun names one period of a view: "week", "7-day window".
func periodNoun(v ranking.View) string {
	switch v.Kind {
	case ranking.Hour:
		return "hour"
	case ranking.Day:
		return "day"
	case ranking.Week:
		return "week"
	case ranking.Month:
		return "month"
	}
	return fmt.Sprintf("%d-day window", v.Days)
}

// collapseEmpty folds each run of results nobody scored in into one line,
// "12 weeks with no scores", so that the periods before a board was used
// do not bury the ones that matter.
func collapseEmpty(v ranking.View, items []views.ResultItem) []views.ResultItem {
	out := make([]views.ResultItem, 0, len(items))
	for i := 0; i < len(items); {
		if len(items[i].Podium) > 0 {
			out = append(out, items[i])
			i++
			continue
		}
		j := i
		for j < len(items) && len(items[j].Podium) == 0 {
			j++
		}
		n := int64(j - i)
		gap := views.ResultItem{ID: items[i].ID, Gap: fmt.Sprintf("%d %s with no scores", n, either(n, periodNoun(v), periodNouns(v)))}
		if n == 1 {
			gap.GapRange = items[i].Label
		} else {
			gap.GapRange = items[j-1].Label + " – " + items[i].Label
		}
		out = append(out, gap)
		i = j
	}
	return out
}

// periodNouns is periodNoun's plural: "weeks", "7-day windows".
func periodNouns(v ranking.View) string { return periodNoun(v) + "s" }

// provisional is the period that ended last while it is not final yet:
// who leads it, and until when late scores may change that; nil once it
// is final (its result follows) or when nobody scored in it.
func (s *Server) provisional(ctx context.Context, b *ranking.Board, v ranking.View) (*views.ResultItem, error) {
	var store pageReader = s.reads
	cal := s.cfg.Calendar
	cur, err := store.Page(ctx, b.ID, v.Name, ranking.PageQuery{Limit: 1, NoPrevRanks: true})
	if err != nil {
		return nil, err
	}
	prev := cal.Prev(v, cur.Period)
	if b.Final(prev, cur.Now) {
		return nil, nil
	}
	pg, err := store.Page(ctx, b.ID, v.Name, ranking.PageQuery{Period: prev.ID, Limit: podiumSize, NoPrevRanks: true})
	if err != nil || pg.Total == 0 {
		return nil, err
	}
	loc := cal.Location()
	item := &views.ResultItem{
		ID:          prev.ID,
		Label:       periodLabel(v, prev, loc),
		Podium:      withUnits(b, rows(b, v.Name, ranking.Segment{}, prev.ID, pg.Entries, "")),
		Total:       fmt.Sprintf("%d ranked so far", pg.Total),
		BoardURL:    withQuery(boardPath(b.ID, v.Name), "period", prev.ID),
		RecapURL:    recapPath(b.ID, v.Name, prev.ID),
		Provisional: provisionalText(b, v, prev, loc),
	}
	return item, nil
}

// provisionalText says who leads a period that ended and is not final:
// "Leading when the hour closed; late scores may still arrive until …".
func provisionalText(b *ranking.Board, v ranking.View, p ranking.Period, loc *time.Location) string {
	return fmt.Sprintf("Leading when %s closed; late scores may still arrive until %s.",
		closedNoun(v), zoned(p.End.Add(b.Lateness), loc, "Mon 2 Jan 15:04"))
}

// closedNoun names a period that closed: "the hour", "the 7 days".
func closedNoun(v ranking.View) string {
	if v.Kind == ranking.Window {
		return fmt.Sprintf("the %d days", v.Days)
	}
	return "the " + periodNoun(v)
}

// withUnits adds the board's unit to rows' scores.
func withUnits(b *ranking.Board, rs []views.Row) []views.Row {
	for i := range rs {
		rs[i].Score = withUnit(b, rs[i].Score)
	}
	return rs
}
