package web

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"
	"github.com/standings/standings/ranking"
	"github.com/standings/standings/views"
)

// handleBoardRedirect serves GET /boards/{board}: its first view.
func (s *Server) handleBoardRedirect(c echo.Context) error {
	b, err := s.board(c)
	if err != nil {
		return err
	}
	return c.Redirect(http.StatusFound, boardPath(b.ID, b.Views[0].Name))
}

// handleBoardPage serves GET /boards/{board}/{view}?period=&page= and, for
// a view named "{view}.csv", the CSV export (the router cannot split a
// segment on its suffix).
func (s *Server) handleBoardPage(c echo.Context) error {
	if strings.HasSuffix(c.Param("view"), ".csv") {
		return s.handleCSV(c)
	}
	var store pageReader = s.reads
	pageNo, err := intParam(c, "page", 1, 1, MaxOffset/PageSize+1)
	if err != nil {
		return err
	}
	b, view, err := s.boardView(c)
	if err != nil {
		return err
	}
	v, _ := b.View(view)
	period := c.QueryParam("period")
	pg, err := store.Page(c.Request().Context(), b.ID, view, period, (pageNo-1)*PageSize, PageSize)
	if err != nil {
		return err
	}
	p := s.boardPageModel(b, v, pg, period, pageNo)
	p.Query = c.QueryParam("q")
	return s.renderPage(c, http.StatusOK, views.Board(p))
}

// boardPageModel lays out one page of a board's period.
func (s *Server) boardPageModel(b *ranking.Board, v ranking.View, pg *ranking.Page, period string, pageNo int) views.BoardPage {
	nav := s.periodNav(b, v, pg.Standing, func(p string) string { return withQuery(boardPath(b.ID, v.Name), "period", p) })
	// Links name the period only when it is not the current one, so that
	// they stay live and keep following the current period.
	linkPeriod := pg.Period.ID
	if nav.IsCurrent {
		linkPeriod = ""
	}
	p := views.BoardPage{
		Layout:     s.layout(b.Title + " · " + viewLabel(v)),
		BoardID:    b.ID,
		BoardTitle: b.Title,
		ViewLabel:  viewLabel(v),
		Period:     nav,
		SearchURL:  boardPath(b.ID, v.Name) + "/members",
		SearchIn:   linkPeriod,
		CSVURL:     withQuery(boardPath(b.ID, v.Name)+".csv", "period", linkPeriod),
		APIURL:     withQuery("/api/v1"+boardPath(b.ID, v.Name), "period", linkPeriod),
		EmbedURL:   "/embed/" + b.ID + "/" + v.Name,
	}
	for _, ov := range b.Views {
		p.Tabs = append(p.Tabs, views.Link{Label: viewLabel(ov), URL: boardPath(b.ID, ov.Name), Current: ov.Name == v.Name})
	}
	p.Table = s.table(b, v, pg, views.TableID(b.ID, v.Name, PageSize), linkPeriod)
	switch {
	case pg.Total > 0:
		p.Table.Empty = fmt.Sprintf("No rows on page %d: this period has %d members.", pageNo, pg.Total)
	case !nav.IsCurrent:
		p.Table.Empty = "No scores in this period."
	}
	pages := int((pg.Total + PageSize - 1) / PageSize)
	p.Pager = views.Pager{Page: pageNo, Pages: pages, Total: pg.Total,
		From: int64(pg.Offset) + 1, To: int64(pg.Offset + len(pg.Entries))}
	if len(pg.Entries) == 0 {
		p.Pager.From = 0
	}
	link := func(n int) string {
		pageArg := ""
		if n > 1 {
			pageArg = strconv.Itoa(n)
		}
		return withQuery(boardPath(b.ID, v.Name), "period", linkPeriod, "page", pageArg)
	}
	if pageNo > 1 {
		p.Pager.PrevURL = link(min(pageNo-1, max(pages, 1)))
	}
	if pageNo < pages {
		p.Pager.NextURL = link(pageNo + 1)
	}
	if nav.IsCurrent && pageNo == 1 {
		p.Live = &views.Live{URL: withQuery("/ws/"+b.ID+"/"+v.Name, "limit", strconv.Itoa(PageSize)), TableID: p.Table.ID}
	}
	return p
}

// table lays out a standings table. Board pages, embeds and live frames
// all use it, so a live frame is exactly what the page would show.
func (s *Server) table(b *ranking.Board, v ranking.View, pg *ranking.Page, id, linkPeriod string) views.Table {
	loc := s.cfg.Calendar.Location()
	t := views.Table{
		ID:     id,
		Period: pg.Period.ID,
		Rows:   rows(b, v.Name, linkPeriod, pg.Entries, ""),
		Empty:  "No scores yet " + periodPhrase(v, pg.Period, true, loc) + ".",
	}
	t.Caption = fmt.Sprintf("%s, %s: ranks %d to %d of %d", b.Title, periodInline(v, pg.Period, loc), pg.Offset+1, pg.Offset+len(pg.Entries), pg.Total)
	return t
}

// handleFindMember serves GET /boards/{board}/{view}/members?member=&period=:
// the member search form, which leads to the member's rank card.
func (s *Server) handleFindMember(c echo.Context) error {
	b, view, err := s.boardView(c)
	if err != nil {
		return err
	}
	member := strings.TrimSpace(c.QueryParam("member"))
	if member == "" {
		return ranking.Errorf(ranking.EINVALID, "type a member id to search for")
	}
	if err := ranking.ValidateMember(member); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, withQuery(cardPath(b.ID, view, member), "period", c.QueryParam("period")))
}
