package web

import (
	"context"
	"html/template"
	"net/http"
	"strings"
	"time"

	"github.com/a-h/templ"
	"github.com/coder/websocket"
	"github.com/labstack/echo/v4"
	"github.com/standings/standings/ranking"
	"github.com/standings/standings/views"
)

// MaxLiveLimit is the most rows a live feed carries (contract: 100).
const MaxLiveLimit = 100

// liveDeflateMin is the smallest live frame sent deflated: whole table
// fragments are larger, diff frames smaller.
const liveDeflateMin = 4 << 10

// handleLive serves GET /ws/{board}/{view}?limit=N (and &member=M for a
// rank card's headline; &segment=NAME:VALUE for a segment board): the live
// feed. The client gets the current fragment at once, then every change,
// at most one frame per tick.
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
	seg, err := segmentParam(c, b)
	if err != nil {
		return err
	}
	return s.serveLive(c, topicKey{board: b.ID, view: view, segment: seg, limit: limit, member: member})
}

// handleLiveCohort serves GET /ws/{board}/league/{tier}/{cohort}?round=R
// (and &widget=1 for the league widget's table): a league group's table
// live, as the group page (or the widget) shows it. The group must exist:
// its round is resolved here, so that a topic is one group of one round.
func (s *Server) handleLiveCohort(c echo.Context) error {
	var store leagueReader = s.store
	b, err := s.leagueBoard(c)
	if err != nil {
		return err
	}
	tier, number, _, err := cohortParams(c, false)
	if err != nil {
		return err
	}
	widget := false
	switch v := c.QueryParam("widget"); v {
	case "":
	case "1":
		widget = true
	default:
		return ranking.Errorf(ranking.EINVALID, "widget is 1 (the league widget's table) or absent, got %q", v)
	}
	ctx, cancel := context.WithTimeout(c.Request().Context(), StoreTimeout)
	co, err := store.Cohort(ctx, b.ID, c.QueryParam("round"), tier, number)
	cancel()
	if err != nil {
		return err
	}
	return s.serveLive(c, topicKey{board: b.ID, cohort: cohortAddr{round: co.Round.ID, tier: co.Tier.ID, number: co.Number, widget: widget}})
}

// serveLive admits a live connection, upgrades it and serves topic key
// until it ends.
func (s *Server) serveLive(c echo.Context, key topicKey) error {
	w, r := c.Response(), c.Request()
	addr := clientKey(c.RealIP())
	admitted, reason := s.hub.admit(addr)
	if admitted {
		defer s.hub.release(addr)
	} else {
		done, ok := s.hub.refuse()
		if !ok {
			// Refusals already waiting for their close handshakes: this
			// one gets a plain answer, cheaper than an upgrade.
			w.Header().Set("Retry-After", "30")
			return &apiError{Status: http.StatusTooManyRequests, Code: "rate_limited", Message: reason}
		}
		defer done()
	}
	// The server's read and write timeouts are for requests; a websocket
	// lives on, with deadlines of its own per frame.
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Time{})
	_ = rc.SetWriteDeadline(time.Time{})
	hw := &handshakeWriter{ResponseWriter: w}
	conn, err := websocket.Accept(hw, r, &websocket.AcceptOptions{
		// The feed is public, read-only data (like the pages and the
		// read API), so any site may follow it; nothing rides on cookies.
		InsecureSkipVerify: true,
		// permessage-deflate for whole fragments only: without context
		// takeover each compressed message resets a pooled 1.2 MB
		// compressor (~250 µs however small the message), and with it
		// every viewer keeps one of its own; a diff frame is a few
		// hundred bytes, cheaper sent as it is (BenchmarkLiveCompression).
		CompressionMode:      websocket.CompressionNoContextTakeover,
		CompressionThreshold: liveDeflateMin,
	})
	if err != nil {
		if hw.status == 0 {
			return nil // the connection was taken over and failed
		}
		// A refused handshake (426 without the upgrade headers, 400 on a
		// bad key or version): the contract's error, not the library's text.
		w.Header().Del(echo.HeaderContentType)
		code := ranking.EINVALID
		if hw.status >= 500 {
			code = ranking.EINTERNAL
		}
		msg := "not a websocket handshake: " + strings.TrimSpace(hw.message.String())
		if hw.status == http.StatusUpgradeRequired {
			msg = "this is the live feed, a websocket: connect with Connection: Upgrade and Upgrade: websocket"
		}
		return &apiError{Status: hw.status, Code: code, Message: msg}
	}
	if !admitted {
		// Over a limit: upgraded only to say why with a close status a
		// browser can read (a refused handshake reaches a page as a bare
		// 1006), so that app.js backs off for long rather than retrying.
		conn.Close(websocket.StatusTryAgainLater, reason)
		return nil
	}
	conn.SetReadLimit(1 << 10) // clients only send control frames
	base, ok := c.Get(baseContextKey).(context.Context)
	if !ok {
		base = r.Context()
	}
	s.hub.serve(context.WithoutCancel(base), conn, key, s.writeTimeout, s.pingInterval)
	return nil
}

// handshakeWriter keeps the websocket library's error answers (a status of
// 400 or more and its text) from the client, for the error funnel to give
// in the contract's shape; the 101 of an accepted handshake goes through.
type handshakeWriter struct {
	http.ResponseWriter
	status  int
	message strings.Builder
}

func (w *handshakeWriter) WriteHeader(status int) {
	if status >= 400 {
		w.status = status
		return
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *handshakeWriter) Write(p []byte) (int, error) {
	if w.status != 0 {
		if w.message.Len() < 512 {
			w.message.Write(p)
		}
		return len(p), nil
	}
	return w.ResponseWriter.Write(p)
}

// Unwrap lets the library reach the connection to take it over.
func (w *handshakeWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// renderLive renders a live topic from a fresh read of the current period:
// the whole fragment and, for a table, what it shows for the next frame's
// diff (web/hub_diff.go).
func (s *Server) renderLive(ctx context.Context, key topicKey) (rendered, error) {
	b, ok := s.cfg.Board(key.board)
	if !ok {
		return rendered{}, ranking.Errorf(ranking.ENOTFOUND, "no board %q", key.board)
	}
	v, _ := b.View(key.view)
	var comp templ.Component
	out := rendered{ranked: true}
	switch {
	case key.isCohort():
		// A group is at most cohort_size rows: it goes whole, like a card.
		var err error
		if comp, err = s.liveCohort(ctx, b, key.cohort); err != nil {
			return rendered{}, err
		}
	case key.notRanked:
		// The same bytes for every member without a score: no read.
		comp = views.CardNotRanked(s.notRankedHeadline(b, v))
		out.ranked = false
	case key.member != "":
		// The whole card from one snapshot, as the page renders it. Cards
		// go whole: a headline is small and changes all at once.
		// The store keeps the chart's final points (ranking/chart_cache.go),
		// so a re-render reads only the current periods.
		rc, err := s.store.RankCard(ctx, b.ID, v.Name, key.member, ranking.RankCardQuery{Segment: key.segment, Around: cardAround, History: cardHistory})
		if ranking.ErrorCode(err) == ranking.ENOTFOUND {
			comp, out.ranked = views.CardNotRanked(s.notRankedHeadline(b, v)), false
			break
		}
		if err != nil {
			return rendered{}, err
		}
		p := s.cardModel(b, v, key.segment, rc)
		if p.Summary.Zone, err = s.zoneLine(ctx, b, v, key.segment, &rc.Card, p.Period.IsCurrent); err != nil {
			return rendered{}, err
		}
		comp = views.CardBody(p)
	default:
		pg, err := s.store.Page(ctx, b.ID, v.Name, ranking.PageQuery{Segment: key.segment, Limit: key.limit})
		if err != nil {
			return rendered{}, err
		}
		t := s.table(b, v, key.segment, pg, views.TableID(b.ID, v.Name, key.limit), "")
		if key.limit == PageSize {
			t.Podium = podium(t.Rows) // a board page's first page
		}
		if key.limit == PageSize && key.segment.IsZero() {
			// A board page's table (widgets show at most MaxEmbedLimit
			// rows) carries the overtakes ticker.
			if t.Ticker, err = s.ticker(ctx, s.store, b, v, pg.Now); err != nil {
				return rendered{}, err
			}
		}
		raw := make([]int64, len(pg.Entries))
		for i, e := range pg.Entries {
			raw[i] = e.Score
		}
		var ticker template.HTML
		if t.Ticker != nil {
			if ticker, err = templ.ToGoHTML(ctx, views.TableTicker(t.Ticker)); err != nil {
				return rendered{}, err
			}
		}
		out.table = tableStateOf(b, t, raw, string(ticker))
		comp = views.StandingsTable(t)
	}
	buf := templ.GetBuffer()
	defer templ.ReleaseBuffer(buf)
	if err := comp.Render(ctx, buf); err != nil {
		return rendered{}, err
	}
	out.frame = append([]byte(nil), buf.Bytes()...)
	return out, nil
}

// notRankedHeadline is the headline of any member without a score in the
// current period (rank 0): it names no member, so that every such viewer
// of a board view shares one topic.
func (s *Server) notRankedHeadline(b *ranking.Board, v ranking.View) (views.CardSummary, string) {
	return views.CardSummary{ID: views.CardID(b.ID, v.Name), Score: "–"}, periodPhrase(v, ranking.Period{}, true, s.cfg.Calendar.Location())
}
