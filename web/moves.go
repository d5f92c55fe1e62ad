package web

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/standings/standings/ranking"
	"github.com/standings/standings/views"
)

// movesReader reads a view's recent overtakes (the moves API, the board
// page's ticker and the rank card's "passed you" line).
type movesReader interface {
	Moves(ctx context.Context, boardID, viewName string, limit int) ([]ranking.Move, ranking.Period, error)
}

// tickerRead is how many of the newest overtakes the board page's ticker
// ranks; views.TickerOpen of them show, the rest collapse.
const tickerRead = 20

type moveJSON struct {
	Member     string  `json:"member"`
	Name       *string `json:"name"`
	Passed     string  `json:"passed"`
	PassedName *string `json:"passed_name"`
	Rank       int64   `json:"rank"`
	At         string  `json:"at"`
}

// handleMoves serves GET /api/v1/boards/{board}/{view}/moves?limit=20: the
// current period's newest overtakes, newest first.
func (s *Server) handleMoves(c echo.Context) error {
	var store movesReader = s.store
	limit, err := intParam(c, "limit", 20, 1, ranking.MaxMoves)
	if err != nil {
		return err
	}
	b, view, err := s.boardView(c)
	if err != nil {
		return err
	}
	moves, p, err := store.Moves(c.Request().Context(), b.ID, view, limit)
	if err != nil {
		return err
	}
	out := struct {
		Board  string     `json:"board"`
		View   string     `json:"view"`
		Period string     `json:"period"`
		Moves  []moveJSON `json:"moves"`
	}{Board: b.ID, View: view, Period: p.ID, Moves: make([]moveJSON, 0, len(moves))}
	for _, m := range moves {
		out.Moves = append(out.Moves, moveJSON{
			Member: m.Member, Name: nameOf(m.Name), Passed: m.Passed, PassedName: nameOf(m.PassedName),
			Rank: m.Rank, At: m.At.UTC().Format("2006-01-02T15:04:05.000Z07:00"),
		})
	}
	return render(c, http.StatusOK, out)
}

// ticker lays out the newest overtakes for a board page's table, read
// from store: the page cache for pages (shared for a tick, like the page
// read), the store itself for live frames (fresh, like theirs). The ones
// that matter most come first (tickerOrder).
func (s *Server) ticker(ctx context.Context, store movesReader, b *ranking.Board, v ranking.View, now time.Time) ([]views.Overtake, error) {
	moves, _, err := store.Moves(ctx, b.ID, v.Name, tickerRead)
	if err != nil {
		return nil, err
	}
	// The page cache hands the same list to every page of the tick: sort a
	// copy.
	moves = slices.Clone(moves)
	tickerOrder(moves)
	out := make([]views.Overtake, 0, len(moves))
	for _, m := range moves {
		name, passed := displayName(m.Name, m.Member), displayName(m.PassedName, m.Passed)
		out = append(out, views.Overtake{
			Text:       fmt.Sprintf("%s passed %s for #%d", name, passed, m.Rank),
			Ago:        ago(now.Sub(m.At)),
			Member:     m.Member,
			Name:       name,
			CardURL:    cardPath(b.ID, v.Name, m.Member),
			Passed:     m.Passed,
			PassedName: passed,
			PassedURL:  cardPath(b.ID, v.Name, m.Passed),
			Rank:       m.Rank,
			Lead:       m.Rank == 1,
		})
	}
	return out, nil
}

// tickerOrder sorts overtakes, newest first, by what they mean to the
// board: the lead changing hands, then the podium, the top 10, the rest;
// newest first within each.
func tickerOrder(moves []ranking.Move) {
	weight := func(rank int64) int {
		switch {
		case rank == 1:
			return 0
		case rank <= 3:
			return 1
		case rank <= 10:
			return 2
		}
		return 3
	}
	slices.SortStableFunc(moves, func(a, b ranking.Move) int { return weight(a.Rank) - weight(b.Rank) })
}

func displayName(name, member string) string {
	if name == "" {
		return member
	}
	return name
}

// ago is a short "how long ago": "just now", "5 s ago", "3 min ago",
// "2 h ago", "4 d ago".
func ago(d time.Duration) string {
	switch {
	case d < 2*time.Second:
		return "just now"
	case d < time.Minute:
		return fmt.Sprintf("%d s ago", int(d/time.Second))
	case d < time.Hour:
		return fmt.Sprintf("%d min ago", int(d/time.Minute))
	case d < 48*time.Hour:
		return fmt.Sprintf("%d h ago", int(d/time.Hour))
	}
	return fmt.Sprintf("%d d ago", int(d/(24*time.Hour)))
}

// moveOf is a row's rank change against the previous period of its view.
func moveOf(v ranking.View, e ranking.Entry) views.Move {
	since := sinceText(v)
	switch {
	case e.PrevRank == ranking.PrevNew:
		return views.Move{Kind: "new", Text: "new", Label: "new " + since}
	case e.PrevRank <= 0:
		return views.Move{}
	case e.PrevRank > e.Rank:
		n := e.PrevRank - e.Rank
		return views.Move{Kind: "up", Text: fmt.Sprintf("▲%d", n), Label: fmt.Sprintf("up %s %s", places(n), since)}
	case e.PrevRank < e.Rank:
		n := e.Rank - e.PrevRank
		return views.Move{Kind: "down", Text: fmt.Sprintf("▼%d", n), Label: fmt.Sprintf("down %s %s", places(n), since)}
	}
	return views.Move{Kind: "same", Text: "–", Label: "same rank " + since}
}

func places(n int64) string {
	if n == 1 {
		return "1 place"
	}
	return fmt.Sprintf("%d places", n)
}

// sinceText names what a view's rank change compares with.
func sinceText(v ranking.View) string {
	switch v.Kind {
	case ranking.Hour:
		return "since the hour before"
	case ranking.Day:
		return "since the day before"
	case ranking.Week:
		return "since the week before"
	case ranking.Month:
		return "since the month before"
	case ranking.Window:
		return "since yesterday"
	}
	return "since midnight"
}
