package web

import (
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/standings/standings/ranking"
)

// boardJSON describes one board in GET /api/v1/boards.
type boardJSON struct {
	ID       string          `json:"id"`
	Title    string          `json:"title"`
	Order    ranking.Order   `json:"order"`
	Update   ranking.Update  `json:"update"`
	Ties     ranking.Ties    `json:"ties"`
	Decimals int             `json:"decimals"`
	MinScore json.RawMessage `json:"min_score"`
	MaxScore json.RawMessage `json:"max_score"`
	Views    []viewJSON      `json:"views"`
	Segments []string        `json:"segments"`
}

type viewJSON struct {
	View          string `json:"view"`
	TieResolution string `json:"tie_resolution,omitempty"` // absent for ties: shared
}

// handleListBoards serves GET /api/v1/boards.
func (s *Server) handleListBoards(c echo.Context) error {
	out := make([]boardJSON, 0, len(s.cfg.Boards))
	for _, b := range s.cfg.Boards {
		bj := boardJSON{
			ID: b.ID, Title: b.Title, Order: b.Order, Update: b.Update, Ties: b.Ties, Decimals: b.Decimals,
			MinScore: json.RawMessage(b.FormatScore(b.Min)), MaxScore: json.RawMessage(b.FormatScore(b.Max)),
			Views: make([]viewJSON, 0, len(b.Views)), Segments: append([]string{}, b.Segments...),
		}
		for _, v := range b.Views {
			bj.Views = append(bj.Views, viewJSON{View: v.Name, TieResolution: b.TieResolution(v.Name)})
		}
		out = append(out, bj)
	}
	return render(c, http.StatusOK, struct {
		Boards []boardJSON `json:"boards"`
	}{out})
}

// entryJSON is one row of a board.
type entryJSON struct {
	Rank   int64           `json:"rank"`
	Member string          `json:"member"`
	Name   *string         `json:"name"` // null when no name is known
	Score  json.RawMessage `json:"score"`
	// Zone is the title of the zone the rank falls in, or null; absent on
	// a board without zones, which answers as it did before zones.
	Zone json.RawMessage `json:"zone,omitempty"`
}

// pageEntryJSON is one row of a list read: an entry with its rank in the
// view's previous period (see ranking.Entry.PrevRank; null when new
// there, or not known).
type pageEntryJSON struct {
	entryJSON
	PreviousRank *int64 `json:"previous_rank"`
}

func pageEntriesJSON(b *ranking.Board, es []ranking.Entry) []pageEntryJSON {
	out := make([]pageEntryJSON, 0, len(es))
	for _, e := range es {
		pe := pageEntryJSON{entryJSON: entryOf(b, e)}
		if e.PrevRank > 0 {
			pe.PreviousRank = &e.PrevRank
		}
		out = append(out, pe)
	}
	return out
}

func entriesJSON(b *ranking.Board, es []ranking.Entry) []entryJSON {
	out := make([]entryJSON, 0, len(es))
	for _, e := range es {
		out = append(out, entryOf(b, e))
	}
	return out
}

func entryOf(b *ranking.Board, e ranking.Entry) entryJSON {
	return entryJSON{Rank: e.Rank, Member: e.Member, Name: nameOf(e.Name), Score: json.RawMessage(b.FormatScore(e.Score)), Zone: zoneJSON(b, e.Rank)}
}

// zoneJSON is an entry's "zone": nil (no field) on a board without zones,
// else the zone's title or null.
func zoneJSON(b *ranking.Board, rank int64) json.RawMessage {
	if len(b.Zones) == 0 {
		return nil
	}
	z, ok := b.ZoneOf(rank)
	if !ok {
		return json.RawMessage("null")
	}
	out, _ := json.Marshal(z.Title) // a string always encodes
	return out
}

func nameOf(n string) *string {
	if n == "" {
		return nil
	}
	return &n
}

// pageJSON is the answer of GET /api/v1/boards/{board}/{view}.
type pageJSON struct {
	Board   string          `json:"board"`
	View    string          `json:"view"`
	Segment *string         `json:"segment,omitempty"` // "NAME:VALUE" when one was asked for
	Period  string          `json:"period"`
	Start   *string         `json:"start"` // null for the all view
	End     *string         `json:"end"`
	Final   bool            `json:"final"`
	Total   int64           `json:"total"`
	Entries []pageEntryJSON `json:"entries"`
}

func instant(t time.Time, loc *time.Location) *string {
	if t.IsZero() {
		return nil
	}
	s := t.In(loc).Format(time.RFC3339)
	return &s
}

// handlePage serves GET /api/v1/boards/{board}/{view}?period=&offset=&limit=.
func (s *Server) handlePage(c echo.Context) error {
	var store segmentPageReader = s.store
	offset, err := intParam(c, "offset", 0, 0, MaxOffset)
	if err != nil {
		return err
	}
	limit, err := intParam(c, "limit", 100, 1, ranking.MaxLimit)
	if err != nil {
		return err
	}
	b, view, err := s.boardView(c)
	if err != nil {
		return err
	}
	seg, err := segmentParam(c, b)
	if err != nil {
		return err
	}
	var pg *ranking.Page
	if c.QueryParams().Has("members") {
		// A member list: the ranked ones among them, with their ranks on
		// the whole board; offset and limit do not apply.
		if c.QueryParam("offset") != "" || c.QueryParam("limit") != "" {
			return ranking.Errorf(ranking.EINVALID, "members cannot be combined with offset or limit")
		}
		ids := strings.Split(c.QueryParam("members"), ",")
		if c.QueryParam("members") == "" {
			ids = nil
		}
		pg, err = store.Members(c.Request().Context(), b.ID, view, ids, ranking.MembersQuery{Segment: seg, Period: c.QueryParam("period")})
	} else {
		pg, err = store.Page(c.Request().Context(), b.ID, view, ranking.PageQuery{Segment: seg, Period: c.QueryParam("period"), Offset: offset, Limit: limit})
	}
	if err != nil {
		return err
	}
	loc := s.cfg.Calendar.Location()
	cacheFor(c, pg.Final)
	return render(c, http.StatusOK, pageJSON{
		Board: b.ID, View: view, Segment: segmentOf(seg), Period: pg.Period.ID,
		Start: instant(pg.Period.Start, loc), End: instant(pg.Period.End, loc),
		Final: pg.Final, Total: pg.Total, Entries: pageEntriesJSON(b, pg.Entries),
	})
}

// cardJSON is the answer of GET /api/v1/boards/{board}/{view}/members/{member}.
type cardJSON struct {
	Board      string          `json:"board"`
	View       string          `json:"view"`
	Segment    *string         `json:"segment,omitempty"` // "NAME:VALUE" when one was asked for
	Period     string          `json:"period"`
	Member     string          `json:"member"`
	Name       *string         `json:"name"`
	Rank       int64           `json:"rank"`
	Score      json.RawMessage `json:"score"`
	Total      int64           `json:"total"`
	TopPercent float64         `json:"top_percent"`
	Around     []entryJSON     `json:"around"`
}

// handleMember serves GET /api/v1/boards/{board}/{view}/members/{member}?period=&around=.
func (s *Server) handleMember(c echo.Context) error {
	var store memberReader = s.store
	around, err := intParam(c, "around", 5, 0, ranking.MaxAround)
	if err != nil {
		return err
	}
	b, view, member, seg, err := s.memberPath(c)
	if err != nil {
		return err
	}
	card, err := store.Member(c.Request().Context(), b.ID, view, member, ranking.MemberQuery{Segment: seg, Period: c.QueryParam("period"), Around: around})
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, cardJSON{
		Board: b.ID, View: view, Segment: segmentOf(seg), Period: card.Period.ID, Member: card.Member, Name: nameOf(card.Name),
		Rank: card.Rank, Score: json.RawMessage(b.FormatScore(card.Score)), Total: card.Total,
		TopPercent: card.TopPercent, Around: entriesJSON(b, card.Around),
	})
}

// handleRemoveMember serves DELETE /api/v1/boards/{board}/members/{member}.
func (s *Server) handleRemoveMember(c echo.Context) error {
	var store memberRemover = s.store
	b, err := s.board(c)
	if err != nil {
		return err
	}
	member, err := pathParam(c, "member")
	if err != nil {
		return err
	}
	removed, err := store.RemoveMember(c.Request().Context(), b.ID, member)
	if err != nil {
		return err
	}
	if !removed {
		return ranking.Errorf(ranking.ENOTFOUND, "member %q is on no view of board %q", member, b.ID)
	}
	return render(c, http.StatusOK, struct {
		Removed bool `json:"removed"`
	}{true})
}

// boardView looks up the board and view named in the path.
func (s *Server) boardView(c echo.Context) (*ranking.Board, string, error) {
	b, err := s.board(c)
	if err != nil {
		return nil, "", err
	}
	view, err := pathParam(c, "view")
	if err != nil {
		return nil, "", err
	}
	if _, ok := b.View(view); !ok {
		return nil, "", ranking.Errorf(ranking.ENOTFOUND, "board %q has no view %q", b.ID, view)
	}
	return b, view, nil
}

// memberPath looks up the board, view and member named in the path (a
// valid member id) and the segment asked for: what every read of one
// member's standing starts with.
func (s *Server) memberPath(c echo.Context) (b *ranking.Board, view, member string, seg ranking.Segment, err error) {
	if b, view, err = s.boardView(c); err != nil {
		return
	}
	if member, err = pathParam(c, "member"); err != nil {
		return
	}
	if err = ranking.ValidateMember(member); err != nil {
		return
	}
	seg, err = segmentParam(c, b)
	return
}

// segmentOf is a read's segment as answered: nil for the whole board.
func segmentOf(seg ranking.Segment) *string {
	if seg.IsZero() {
		return nil
	}
	str := seg.String()
	return &str
}

// handleSegmentValues serves GET /api/v1/boards/{board}/segments/{name}:
// the values of a segment name seen on the board, sorted.
func (s *Server) handleSegmentValues(c echo.Context) error {
	var store segmentLister = s.store
	b, err := s.board(c)
	if err != nil {
		return err
	}
	name, err := pathParam(c, "name")
	if err != nil {
		return err
	}
	values, err := store.SegmentValues(c.Request().Context(), b.ID, name)
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, struct {
		Segment string   `json:"segment"`
		Values  []string `json:"values"`
	}{name, values})
}
