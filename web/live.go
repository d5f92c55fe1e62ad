package web

import (
	"context"
	"net/http"
	"time"

	"github.com/a-h/templ"
	"github.com/coder/websocket"
	"github.com/labstack/echo/v4"
	"github.com/standings/standings/ranking"
	"github.com/standings/standings/views"
)

// MaxLiveLimit is the most rows a live feed carries (contract: 100).
const MaxLiveLimit = 100

// handleLive serves GET /ws/{board}/{view}?limit=N (and &member=M for a
// rank card's headline): the live feed. The client gets the current
// fragment at once, then every change, at most one frame per tick.
func (s *Server) handleLive(c echo.Context) error {
	limit, err := intParam(c, "limit", 10, 1, MaxLiveLimit)
	if err != nil {
		return err
	}
	member := c.QueryParam("member")
	if member != "" {
		if err := ranking.ValidateMember(member); err != nil {
			return err
		}
		limit = 0
	}
	b, view, err := s.boardView(c)
	if err != nil {
		return err
	}
	w, r := c.Response(), c.Request()
	// The server's read and write timeouts are for requests; a websocket
	// lives on, with deadlines of its own per frame.
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Time{})
	_ = rc.SetWriteDeadline(time.Time{})
	conn, err := websocket.Accept(w, r, &websocket.AcceptOptions{
		// The feed is public, read-only data (like the pages and the
		// read API), so any site may follow it; nothing rides on cookies.
		InsecureSkipVerify: true,
		CompressionMode:    websocket.CompressionDisabled,
	})
	if err != nil {
		return nil // Accept has answered the client
	}
	conn.SetReadLimit(1 << 10) // clients only send control frames
	base, ok := c.Get(baseContextKey).(context.Context)
	if !ok {
		base = r.Context()
	}
	s.hub.serve(context.WithoutCancel(base), conn, topicKey{board: b.ID, view: view, limit: limit, member: member}, s.writeTimeout, s.pingInterval)
	return nil
}

// renderLive renders a live topic from a fresh read of the current period.
func (s *Server) renderLive(ctx context.Context, key topicKey) ([]byte, error) {
	b, ok := s.cfg.Board(key.board)
	if !ok {
		return nil, ranking.Errorf(ranking.ENOTFOUND, "no board %q", key.board)
	}
	v, _ := b.View(key.view)
	var comp templ.Component
	if key.member == "" {
		pg, err := s.store.Page(ctx, b.ID, v.Name, "", 0, key.limit)
		if err != nil {
			return nil, err
		}
		comp = views.StandingsTable(s.table(b, v, pg, views.TableID(b.ID, v.Name, key.limit), ""))
	} else {
		sum, label, err := s.liveHeadline(ctx, b, v, key.member)
		if err != nil {
			return nil, err
		}
		comp = views.CardHeadline(sum, label)
	}
	buf := templ.GetBuffer()
	defer templ.ReleaseBuffer(buf)
	if err := comp.Render(ctx, buf); err != nil {
		return nil, err
	}
	return append([]byte(nil), buf.Bytes()...), nil
}

// liveHeadline reads a member's card headline in the current period; a
// member with no score there (removed, or a new period) reads as rank 0.
func (s *Server) liveHeadline(ctx context.Context, b *ranking.Board, v ranking.View, member string) (views.CardSummary, string, error) {
	loc := s.cfg.Calendar.Location()
	card, err := s.store.Member(ctx, b.ID, v.Name, "", member, cardAround)
	if ranking.ErrorCode(err) == ranking.ENOTFOUND {
		return views.CardSummary{ID: views.CardID(b.ID, v.Name), Score: "–", TopPercent: "–"}, periodPhrase(v, ranking.Period{}, true, loc), nil
	}
	if err != nil {
		return views.CardSummary{}, "", err
	}
	return s.cardSummary(b, v, card, &ranking.History{}, true), periodPhrase(v, card.Period, true, loc), nil
}
