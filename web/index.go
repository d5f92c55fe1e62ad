package web

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/standings/standings/ranking"
	"github.com/standings/standings/views"
)

// leadersShown is how many leaders the index shows per board.
const leadersShown = 3

// handleIndex serves GET /: every board with its views and current leaders.
func (s *Server) handleIndex(c echo.Context) error {
	var store pageReader = s.reads
	ctx := c.Request().Context()
	p := views.IndexPage{Layout: s.layout("Leaderboards")}
	p.Description = indexDescription(s.cfg)
	for _, b := range s.cfg.Boards {
		v := mainView(b)
		sum := views.BoardSummary{ID: b.ID, Title: b.Title, Description: describe(b), URL: boardPath(b.ID, v.Name), Unit: b.Unit}
		for _, v := range b.Views {
			sum.Views = append(sum.Views, views.Link{Label: viewLabel(v), URL: boardPath(b.ID, v.Name)})
		}
		sum.LeadersOf = periodPhrase(v, ranking.Period{}, true, nil)
		sum.LeadersLabel = leadersLabel(v)
		pg, err := store.Page(ctx, b.ID, v.Name, ranking.PageQuery{Limit: leadersShown})
		switch {
		case err == nil:
			sum.Leaders = withUnits(b, rows(b, v.Name, ranking.Segment{}, "", pg.Entries, ""))
			if v.Kind != ranking.All && v.Kind != ranking.Window {
				sum.TimeLeft = capitalize(periodNoun(v)) + " " + strings.ToLower(countdownText(pg.Period.End.Sub(pg.Now)))
			}
		case unavailable(ctx, err):
			// The rest of the page is still useful without Redis.
			sum.Unavailable = true
		default:
			return err
		}
		if !sum.Unavailable {
			if err := s.winners(ctx, b, v, &sum); err != nil && !unavailable(ctx, err) {
				return err
			}
		}
		p.Boards = append(p.Boards, sum)
	}
	return s.renderPage(c, http.StatusOK, views.Index(p))
}

// unavailable reports a read that failed for want of Redis.
func unavailable(ctx context.Context, err error) bool {
	return ranking.ErrorCode(err) == ranking.EUNAVAILABLE || ctx.Err() == context.DeadlineExceeded
}

// leadersLabel heads the current leaders of a view: "This week (so far)".
func leadersLabel(v ranking.View) string {
	switch v.Kind {
	case ranking.All:
		return "All time"
	case ranking.Window:
		return viewLabel(v)
	}
	return currentName(v) + " (so far)"
}

// mainView is the view a board's card opens and takes its winners from:
// the first that is not an hour (too volatile to say what a board is about).
func mainView(b *ranking.Board) ranking.View {
	for _, v := range b.Views {
		if v.Kind != ranking.Hour {
			return v
		}
	}
	return b.Views[0]
}

// winners adds the podium of the latest recorded result of the board's
// main view (its latest finished period); nothing when there is none yet.
func (s *Server) winners(ctx context.Context, b *ranking.Board, main ranking.View, sum *views.BoardSummary) error {
	if b.ResultsKeep == 0 {
		return nil
	}
	for _, v := range []ranking.View{main} {
		if v.Kind == ranking.All {
			continue
		}
		raw, err := s.latest.Latest(ctx, b.ID, v.Name)
		if err != nil || raw == nil {
			return err
		}
		r, err := parseResult(raw)
		if err != nil {
			return err
		}
		per, err := s.cfg.Calendar.ParsePeriod(v, r.Period)
		if err != nil {
			return err
		}
		sum.Winners = resultRows(b, v.Name, r, leadersShown)
		if len(sum.Winners) > 0 {
			sum.WinnersLine = "Won by " + sum.Winners[0].Name + " with " + sum.Winners[0].Score
		}
		sum.WinnersLabel = periodLabel(v, per, s.cfg.Calendar.Location()) + " — winners"
		sum.WinnersURL = resultsPath(b.ID, v.Name) + "#" + r.Period
		return nil
	}
	return nil
}

// latestResults shares reads of each view's latest result between index
// requests for a tick, as pageCache does for leaders: a result changes
// once a period, so a tick-old one is as good as new.
type latestResults struct {
	store resultsReader
	tick  time.Duration

	mu      sync.Mutex
	entries map[string]latestEntry
}

type latestEntry struct {
	raw     json.RawMessage // nil: no result yet
	expires time.Time
}

func newLatestResults(store resultsReader, tick time.Duration) *latestResults {
	return &latestResults{store: store, tick: tick, entries: map[string]latestEntry{}}
}

// Latest returns the newest recorded result of a view, or nil when none.
func (l *latestResults) Latest(ctx context.Context, boardID, viewName string) (json.RawMessage, error) {
	key := boardID + "\x00" + viewName
	now := time.Now()
	l.mu.Lock()
	e, ok := l.entries[key]
	l.mu.Unlock()
	if ok && now.Before(e.expires) {
		return e.raw, nil
	}
	list, err := l.store.Results(ctx, boardID, viewName, "", 1)
	if err != nil {
		return nil, err
	}
	e = latestEntry{expires: now.Add(l.tick)}
	if len(list) > 0 {
		e.raw = list[0]
	}
	if l.tick > 0 {
		l.mu.Lock()
		l.entries[key] = e // one entry per board view: bounded by the config
		l.mu.Unlock()
	}
	return e.raw, nil
}

// describe says in plain words what a board is for.
func describe(b *ranking.Board) string {
	what := "score"
	if b.Unit != "" {
		what = b.Unit
	}
	switch {
	case b.Update == ranking.Increment && b.Order == ranking.Desc:
		return "Who gathers the most " + plural(what) + "."
	case b.Update == ranking.Best && b.Format == "duration" && b.Order == ranking.Asc:
		return "Who sets the fastest time."
	case b.Update == ranking.Best && b.Order == ranking.Desc:
		return "Who sets the best " + what + "."
	case b.Update == ranking.Latest:
		return "Where everyone's current " + what + " stands."
	}
	return rules(b)
}

// plural is "points" for a board without a unit, else its unit.
func plural(what string) string {
	if what == "score" {
		return "points"
	}
	return what
}

// rules says in a few words how a board ranks.
func rules(b *ranking.Board) string {
	var parts []string
	if b.Order == ranking.Desc {
		parts = append(parts, "Highest first")
	} else {
		parts = append(parts, "Lowest first")
	}
	switch b.Update {
	case ranking.Increment:
		parts = append(parts, "scores add up")
	case ranking.Best:
		parts = append(parts, "best score counts")
	case ranking.Latest:
		parts = append(parts, "latest score counts")
	}
	if b.Ties == ranking.TiesShared {
		parts = append(parts, "equal scores share a rank")
	} else {
		parts = append(parts, "ties go to who got there first")
	}
	return strings.Join(parts, " · ")
}
