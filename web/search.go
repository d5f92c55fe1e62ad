package web

import (
	"context"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/labstack/echo/v4"
	"github.com/standings/standings/ranking"
	"github.com/standings/standings/views"
)

// memberSearcher finds members by a prefix of their name or id (GET
// /api/v1/boards/{board}/members?q=).
type memberSearcher interface {
	SearchMembers(ctx context.Context, boardID, q string) ([]ranking.MemberName, error)
}

// handleSearchMembers serves GET /api/v1/boards/{board}/members?q=PREFIX.
func (s *Server) handleSearchMembers(c echo.Context) error {
	var store memberSearcher = s.store
	if err := ranking.ValidateSearch(c.QueryParam("q")); err != nil {
		return err // before the board is looked up, as every query parameter
	}
	b, err := s.board(c)
	if err != nil {
		return err
	}
	found, err := store.SearchMembers(c.Request().Context(), b.ID, c.QueryParam("q"))
	if err != nil {
		return err
	}
	type match struct {
		Member string  `json:"member"`
		Name   *string `json:"name"`
	}
	out := make([]match, len(found))
	for i, m := range found {
		out[i] = match{m.Member, nameOf(m.Name)}
	}
	return render(c, http.StatusOK, struct {
		Members []match `json:"members"`
	}{out})
}

// handleFindMember serves GET /boards/{board}/{view}/members?member=&id=&period=:
// the member search form, which leads to the member's rank card. A
// suggestion chosen in the form puts the name in the field and the id in
// id=; without script the name alone is searched.
func (s *Server) handleFindMember(c echo.Context) error {
	var store interface {
		memberSearcher
		segmentPageReader
	} = s.store
	b, view, err := s.boardView(c)
	if err != nil {
		return err
	}
	text := strings.TrimSpace(c.QueryParam("member"))
	id := c.QueryParam("id")
	if text == "" && id == "" {
		return ranking.Errorf(ranking.EINVALID, "type a name or member id to search for")
	}
	seg, err := segmentParam(c, b)
	if err != nil {
		return err
	}
	sg := seg.String()
	period := c.QueryParam("period")
	card := func(member string) error {
		return c.Redirect(http.StatusSeeOther, withQuery(cardPath(b.ID, view, member), "period", period, "segment", sg))
	}
	if id != "" {
		// A suggestion picked by its name: the id says which member.
		if err := ranking.ValidateMember(id); err != nil {
			return err
		}
		return card(id)
	}
	if err := ranking.ValidateMember(text); err != nil {
		return err
	}
	if utf8.RuneCountInString(text) > 64 {
		return card(text) // too long to search: an id
	}
	found, err := store.SearchMembers(c.Request().Context(), b.ID, text)
	if err != nil {
		return err
	}
	for _, m := range found {
		if m.Member == text {
			return card(text) // the exact id
		}
	}
	if len(found) == 1 {
		return card(found[0].Member)
	}
	v, _ := b.View(view)
	p := views.MemberMatches{
		Layout:     s.layout("Find a member · " + b.Title),
		BoardTitle: boardTitle(b, seg), BoardURL: withQuery(boardPath(b.ID, view), "period", period, "segment", sg), Query: text,
		SearchURL: findPath(b.ID, view), SuggestURL: apiMembersPath(b.ID), Period: period, Segment: sg,
		ScoreHeader: scoreHeader(b),
	}
	if len(found) > 0 {
		// Each match's rank and score in the period searched from, so
		// that namesakes can be told apart.
		ids := make([]string, len(found))
		for i, m := range found {
			ids[i] = m.Member
		}
		pg, err := store.Members(c.Request().Context(), b.ID, view, ids, ranking.MembersQuery{Segment: seg, Period: period})
		if err != nil {
			return err
		}
		p.When = periodPhrase(v, pg.Period, period == "" || v.Kind == ranking.All, s.cfg.Calendar.Location())
		ranked := map[string]bool{}
		for _, r := range rows(b, view, seg, period, pg.Entries, "") {
			ranked[r.Member] = true
			p.Matches = append(p.Matches, views.MemberMatch{Row: r, Total: pg.Total})
		}
		for _, m := range found {
			if ranked[m.Member] {
				continue
			}
			name := m.Name
			if name == "" {
				name = m.Member
			}
			p.Matches = append(p.Matches, views.MemberMatch{Row: views.Row{
				Member: m.Member, Name: name, Initials: initials(name), Hue: hue(m.Member),
				CardURL: withQuery(cardPath(b.ID, view, m.Member), "period", period, "segment", sg),
			}})
		}
	}
	p.Layout.Description = searchDescription(b, text, len(found))
	status := http.StatusOK
	if len(found) == 0 {
		status = http.StatusNotFound
	}
	return s.renderPage(c, status, views.Matches(p))
}
