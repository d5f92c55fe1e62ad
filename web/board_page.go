package web

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

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
// segment on its suffix). A current period's page, without a search or
// member list, is shared for a tick (answerCache).
func (s *Server) handleBoardPage(c echo.Context) error {
	if strings.HasSuffix(c.Param("view"), ".csv") {
		return s.handleCSV(c)
	}
	if key, ok := shareKey(c, "board", "page", "segment"); ok {
		return s.answers.serve(c, c.Param("board"), key, func() (*answer, error) {
			a, _, err := s.boardPage(c, s.answers.keeps())
			return a, err
		})
	}
	a, redirect, err := s.boardPage(c, false)
	if err != nil {
		return err
	}
	if redirect != "" {
		return c.Redirect(http.StatusSeeOther, redirect)
	}
	return serveAnswer(c, a)
}

// boardPage reads and renders a board page (keep: to be served again), or
// names where a member list's add form leads.
func (s *Server) boardPage(c echo.Context, keep bool) (a *answer, redirect string, err error) {
	var store pageReader = s.reads
	pageNo, err := intParam(c, "page", 1, 1, MaxOffset/PageSize+1)
	if err != nil {
		return nil, "", err
	}
	b, view, err := s.boardView(c)
	if err != nil {
		return nil, "", err
	}
	seg, err := segmentParam(c, b)
	if err != nil {
		return nil, "", err
	}
	v, _ := b.View(view)
	period := c.QueryParam("period")
	ctx := c.Request().Context()
	pg, err := store.Page(ctx, b.ID, view, ranking.PageQuery{Segment: seg, Period: period, Offset: (pageNo - 1) * PageSize, Limit: PageSize})
	if err != nil {
		return nil, "", err
	}
	if pageNo > 1 && int64((pageNo-1)*PageSize) >= pg.Total {
		a, err := s.pastLastPage(c, b, v, seg, period, pageNo, pg.Total)
		return a, "", err
	}
	p := s.boardPageModel(b, v, seg, pg, period, pageNo)
	if pageNo == 1 {
		p.Table.Podium = podium(p.Table.Rows)
	}
	if p.Live != nil && seg.IsZero() {
		if p.Table.Ticker, err = s.ticker(ctx, s.reads, b, v, pg.Now); err != nil {
			return nil, "", err
		}
	}
	if p.Picker, err = s.segmentPicker(ctx, b, v, seg, p.SearchIn, c.QueryParam("members")); err != nil {
		return nil, "", err
	}
	p.Query = c.QueryParam("q")
	if c.QueryParams().Has("members") || c.QueryParams().Has("add") {
		cmp, redirect, err := s.compareModel(c, b, v, seg, period)
		if err != nil || redirect != "" {
			return nil, redirect, err
		}
		p.Compare = cmp
	}
	if p.Ends, err = s.periodEnds(ctx, b, v, pg.Standing); err != nil {
		return nil, "", err
	}
	a, err = s.renderAnswer(c, http.StatusOK, views.Board(p), cacheControl(pg.Final), keep)
	return a, "", err
}

// boardPageModel lays out one page of a board's period (of the board or
// of one of its segment boards: every link keeps the segment).
func (s *Server) boardPageModel(b *ranking.Board, v ranking.View, seg ranking.Segment, pg *ranking.Page, period string, pageNo int) views.BoardPage {
	sg := seg.String()
	nav := s.periodNav(b, v, pg.Standing, func(p string) string {
		return withQuery(boardPath(b.ID, v.Name), "period", p, "segment", sg)
	})
	// Links name the period only when it is not the current one, so that
	// they stay live and keep following the current period.
	linkPeriod := pg.Period.ID
	if nav.IsCurrent {
		linkPeriod = ""
	}
	title := boardTitle(b, seg)
	p := views.BoardPage{
		Layout:     s.layout(title + " · " + viewLabel(v)),
		BoardID:    b.ID,
		BoardTitle: b.Title,
		Segment:    segmentShort(seg),
		ViewLabel:  viewLabel(v),
		Period:     nav,
		SearchURL:  findPath(b.ID, v.Name),
		SuggestURL: apiMembersPath(b.ID),
		SearchIn:   linkPeriod,
		SearchSeg:  sg,
		CSVURL:     withQuery(boardPath(b.ID, v.Name)+".csv", "period", linkPeriod, "segment", sg),
		APIURL:     withQuery(apiBoardPath(b.ID, v.Name), "period", linkPeriod, "segment", sg),
		EmbedURL:   withQuery(boardPath(b.ID, v.Name)+"/widget", "segment", sg),
	}
	p.Description = boardDescription(b, v, seg, pg, nav.IsCurrent, s.cfg.Calendar.Location())
	if !seg.IsZero() {
		p.WholeURL = withQuery(boardPath(b.ID, v.Name), "period", linkPeriod)
	}
	if v.Kind != ranking.All && b.ResultsKeep > 0 {
		p.ResultsURL = resultsPath(b.ID, v.Name)
	}
	if b.League != nil {
		p.LeagueURL = leaguePath(b.ID)
	}
	for _, ov := range b.Views {
		p.Tabs = append(p.Tabs, views.Link{Label: viewLabel(ov), URL: withQuery(boardPath(b.ID, ov.Name), "segment", sg), Current: ov.Name == v.Name})
	}
	p.Table = s.table(b, v, seg, pg, views.TableID(b.ID, v.Name, PageSize), linkPeriod)
	p.Me = meBar(b, v, seg, linkPeriod, p.Table.ID)
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
		return withQuery(boardPath(b.ID, v.Name), "period", linkPeriod, "segment", sg, "page", pageArg)
	}
	if pageNo > 1 {
		p.Pager.PrevURL = link(min(pageNo-1, max(pages, 1)))
	}
	if pageNo < pages {
		p.Pager.NextURL = link(pageNo + 1)
	}
	if nav.IsCurrent && pageNo == 1 {
		p.Live = &views.Live{URL: liveURL(b.ID, v.Name, seg, "limit", strconv.Itoa(PageSize)), TableID: p.Table.ID}
		if seg.IsZero() && v.Kind != ranking.All && v.Kind != ranking.Window {
			p.Rollover = &views.Rollover{
				Board: b.ID, View: v.Name, API: apiBoardPath(b.ID, v.Name), Recap: boardPath(b.ID, v.Name) + "/recap",
				Next: boardPath(b.ID, v.Name), Format: b.Format, Unit: b.Unit, Noun: periodNoun(v), Late: b.Lateness > 0,
			}
		}
	}
	return p
}

// meBar is what the board page's script needs to pin my row: the member
// API of the period and segment shown, and the board's way of writing
// scores.
func meBar(b *ranking.Board, v ranking.View, seg ranking.Segment, linkPeriod, tableID string) views.MeBar {
	m := views.MeBar{
		APIURL:     apiBoardPath(b.ID, v.Name) + "/members/",
		Query:      withQuery("", "around", "1", "period", linkPeriod, "segment", seg.String()),
		FriendsURL: withQuery(boardPath(b.ID, v.Name), "period", linkPeriod, "segment", seg.String()),
		TableID:    tableID,
		PageSize:   PageSize,
		Format:     "number",
		Decimals:   b.Decimals,
		Order:      "desc",
	}
	if b.Format == "duration" {
		m.Format = "duration"
	}
	if b.Order == ranking.Asc {
		m.Order = "asc"
	}
	return m
}

// table lays out a standings table. Board pages, embeds and live frames
// all use it, so a live frame is exactly what the page would show.
func (s *Server) table(b *ranking.Board, v ranking.View, seg ranking.Segment, pg *ranking.Page, id, linkPeriod string) views.Table {
	loc := s.cfg.Calendar.Location()
	t := views.Table{
		ID:          id,
		Period:      pg.Period.ID,
		Rows:        rows(b, v.Name, seg, linkPeriod, pg.Entries, ""),
		ScoreHeader: scoreHeader(b),
		Empty:       "No scores yet " + periodPhrase(v, pg.Period, true, loc) + ".",
	}
	t.Caption = fmt.Sprintf("%s, %s: ranks %d to %d of %d", boardTitle(b, seg), periodInline(v, pg.Period, loc), pg.Offset+1, pg.Offset+len(pg.Entries), pg.Total)
	return t
}

// boardTitle names a board or one of its segment boards:
// "Points — France".
func boardTitle(b *ranking.Board, seg ranking.Segment) string {
	if seg.IsZero() {
		return b.Title
	}
	return b.Title + " — " + segmentShort(seg)
}

// pickerMaxOptions is the most segment values the board page's picker
// offers as a list; beyond it the picker is a text field whose
// suggestions come from the segment values API.
const pickerMaxOptions = 200

// segmentPicker lays out the board page's segment picker: a plain GET form
// that keeps the period and the member list; nil for a board without
// segments.
func (s *Server) segmentPicker(ctx context.Context, b *ranking.Board, v ranking.View, seg ranking.Segment, period, members string) (*views.SegmentPicker, error) {
	if len(b.Segments) == 0 {
		return nil, nil
	}
	var store segmentChooser = s.reads // shared for a tick, like the page read
	values, err := store.SegmentChoices(ctx, b.ID, pickerMaxOptions+1)
	if err != nil {
		return nil, err
	}
	p := &views.SegmentPicker{
		FormURL: boardPath(b.ID, v.Name), Period: period, Members: members,
		Current: seg.String(), Names: strings.Join(b.Segments, ", "),
		Label: "Group",
	}
	if len(b.Segments) == 1 {
		p.Label = segmentName(b.Segments[0])
	}
	n := 0
	for _, vals := range values {
		n += len(vals)
	}
	if n > pickerMaxOptions {
		p.Typed = true
		for _, name := range b.Segments {
			p.SuggestURLs = append(p.SuggestURLs, apiSegmentPath(b.ID, name))
		}
		return p, nil
	}
	for i, name := range b.Segments {
		g := views.SegmentGroup{Name: segmentName(name)}
		for _, val := range values[i] {
			sv := ranking.Segment{Name: name, Value: val}.String()
			g.Options = append(g.Options, views.Option{Value: sv, Label: segmentValue(name, val), Selected: sv == p.Current})
		}
		// People look for a country by its name, not its code.
		slices.SortStableFunc(g.Options, func(a, b views.Option) int { return strings.Compare(a.Label, b.Label) })
		p.Groups = append(p.Groups, g)
	}
	return p, nil
}

// resultDelay is how long after a period becomes final its result may
// still be being recorded (contract: within 2 minutes).
const resultDelay = 2 * time.Minute

// periodEnds says when the period shown ends: a countdown for a current
// calendar period, "rolling" for a current window, the late-scores
// sentence while a period closes, and the link to its result once final.
func (s *Server) periodEnds(ctx context.Context, b *ranking.Board, v ranking.View, st ranking.Standing) (views.Ends, error) {
	var store resultsReader = s.store
	cal := s.cfg.Calendar
	loc := cal.Location()
	p := st.Period
	switch {
	case v.Kind == ranking.All:
		return views.Ends{}, nil
	case st.Final:
		f := &views.Final{Heading: "Final results — " + periodLabel(v, p, loc)}
		if b.ResultsKeep == 0 {
			return views.Ends{Final: f}, nil
		}
		raw, err := store.Result(ctx, b.ID, v.Name, p.ID)
		if st.Total == 0 && !recordedScores(raw, err) {
			// The table says nobody scored: no results heading over nothing.
			return views.Ends{}, nil
		}
		switch {
		case err == nil:
			f.Recorded = true
			f.JSONURL = resultJSONPath(b.ID, v.Name, p.ID)
			f.ResultURL = s.resultAnchor(b, v, p, st.Now)
		case ranking.ErrorCode(err) != ranking.ENOTFOUND:
			return views.Ends{}, err
		case st.Now.Before(p.End.Add(b.Lateness + resultDelay)):
			f.Note = "The result is being recorded."
		default:
			f.Note = "No result is kept for this period."
		}
		return views.Ends{Final: f}, nil
	case cal.PeriodAt(v, st.Now).ID == p.ID:
		if v.Kind == ranking.Window {
			return views.Ends{Rolling: rollingText(v)}, nil
		}
		return views.Ends{Countdown: s.countdown(v, p, st.Now)}, nil
	case !st.Now.Before(p.End):
		return views.Ends{Closing: fmt.Sprintf("%s has ended. Late scores may still arrive until %s; the standings are final after that.",
			capitalize(periodInline(v, p, loc)), zoned(p.End.Add(b.Lateness), loc, "Mon 2 Jan 15:04"))}, nil
	}
	return views.Ends{}, nil // a future period
}

// recordedScores reports a recorded result that lists somebody.
func recordedScores(raw []byte, err error) bool {
	if err != nil {
		return false
	}
	r, err := parseResult(raw)
	return err == nil && r.Total > 0
}

// resultAnchor links a final period to its result on the results page:
// the first page when the result is surely on it, else the page that
// starts with it (before= the next period).
func (s *Server) resultAnchor(b *ranking.Board, v ranking.View, p ranking.Period, now time.Time) string {
	cal := s.cfg.Calendar
	cur := cal.PeriodAt(v, now)
	// Only final periods have results, so a period n periods before the
	// current one is at most the n-th newest result.
	n, q := 0, p
	for q.ID != cur.ID && n <= ResultsPageSize {
		q = cal.Next(v, q)
		n++
	}
	if n <= ResultsPageSize {
		return resultsPath(b.ID, v.Name) + "#" + p.ID
	}
	return withQuery(resultsPath(b.ID, v.Name), "before", cal.Next(v, p).ID) + "#" + p.ID
}

// countdown is the "Ends in …" of a current calendar period, read at now
// on Redis's clock.
func (s *Server) countdown(v ranking.View, p ranking.Period, now time.Time) *views.Countdown {
	layout := "Mon 15:04"
	if v.Kind == ranking.Month {
		layout = "2 Jan 15:04"
	}
	return &views.Countdown{
		Text:   countdownText(p.End.Sub(now)),
		EndMS:  p.End.UnixMilli(),
		NowMS:  now.UnixMilli(),
		Resets: "resets " + zoned(p.End, s.cfg.Calendar.Location(), layout),
	}
}

// countdownText is "Ends in 2d 4h 12m", with seconds once under a day,
// and "Ended" at zero. static/app.js computes the same text as it ticks.
func countdownText(d time.Duration) string {
	secs := int64(d / time.Second)
	if secs <= 0 {
		return "Ended"
	}
	days, h, m, sec := secs/86400, secs%86400/3600, secs%3600/60, secs%60
	switch {
	case days > 0:
		return fmt.Sprintf("Ends in %dd %dh %dm", days, h, m)
	case h > 0:
		return fmt.Sprintf("Ends in %dh %dm %ds", h, m, sec)
	}
	return fmt.Sprintf("Ends in %dm %ds", m, sec)
}

// rollingText describes a window, which never ends: "rolling 7 days".
func rollingText(v ranking.View) string {
	if v.Days == 1 {
		return "rolling 1 day"
	}
	return fmt.Sprintf("rolling %d days", v.Days)
}

// zoned formats an instant in the board's zone, naming the zone.
func zoned(t time.Time, loc *time.Location, layout string) string {
	return t.In(loc).Format(layout) + " " + loc.String()
}

// currentName names a view's current period at the start of a sentence.
func currentName(v ranking.View) string {
	switch v.Kind {
	case ranking.Window:
		return fmt.Sprintf("The %d days to today", v.Days)
	case ranking.All:
		return "All time"
	}
	return capitalize(periodPhrase(v, ranking.Period{}, true, nil))
}

// capitalize upper-cases the first letter of an ASCII phrase.
func capitalize(s string) string {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}

// compareModel builds the board page's member list (?members=a,b,c): the
// ranked ones among them with their ranks on the whole board, the others
// named as not ranked. ?add= adds an id or a name: an exact id or a single
// match is added (a redirect to the new list), several matches are offered
// as choices, none is said.
func (s *Server) compareModel(c echo.Context, b *ranking.Board, v ranking.View, seg ranking.Segment, period string) (*views.Compare, string, error) {
	var store interface {
		memberSearcher
		segmentPageReader
	} = s.store
	ctx := c.Request().Context()
	var members []string
	seen := map[string]bool{}
	for _, m := range strings.Split(c.QueryParam("members"), ",") {
		if m = strings.TrimSpace(m); m != "" && !seen[m] {
			if err := ranking.ValidateMember(m); err != nil {
				return nil, "", err
			}
			seen[m] = true
			members = append(members, m)
		}
	}
	if len(members) > ranking.MaxMembersList {
		return nil, "", ranking.Errorf(ranking.EINVALID, "members must list 1 to %d member ids, got %d", ranking.MaxMembersList, len(members))
	}
	base := boardPath(b.ID, v.Name)
	sg := seg.String()
	listURL := func(ms []string) string {
		return withQuery(base, "period", period, "segment", sg, "members", strings.Join(ms, ","))
	}
	cmp := &views.Compare{FormURL: base, Period: period, Segment: sg, Members: strings.Join(members, ","), ClearURL: withQuery(base, "period", period, "segment", sg)}
	if !seg.IsZero() {
		cmp.Scope = segmentLabel(seg)
	}
	if add := strings.TrimSpace(c.QueryParam("add")); add != "" {
		if err := ranking.ValidateMember(add); err != nil {
			return nil, "", err
		}
		pick := ""
		if utf8.RuneCountInString(add) > 64 {
			pick = add
		} else {
			found, err := store.SearchMembers(ctx, b.ID, add)
			if err != nil {
				return nil, "", err
			}
			for _, m := range found {
				if m.Member == add {
					pick = add
				}
			}
			switch {
			case pick != "":
			case len(found) == 1:
				pick = found[0].Member
			case len(found) == 0:
				cmp.Notice = "Nobody on " + b.Title + " has a name or id starting with “" + add + "”."
			default:
				cmp.Notice = "“" + add + "” matches several members; pick one:"
				for _, m := range found {
					label := m.Member
					if m.Name != "" {
						label = m.Name + " (" + m.Member + ")"
					}
					cmp.Choices = append(cmp.Choices, views.Link{Label: label, URL: listURL(append(append([]string{}, members...), m.Member))})
				}
			}
		}
		if pick != "" {
			if !seen[pick] {
				members = append(members, pick)
			}
			if len(members) > ranking.MaxMembersList {
				return nil, "", ranking.Errorf(ranking.EINVALID, "a list holds at most %d members", ranking.MaxMembersList)
			}
			return nil, listURL(members), nil
		}
	}
	if len(members) == 0 {
		return cmp, "", nil
	}
	pg, err := store.Members(ctx, b.ID, v.Name, members, ranking.MembersQuery{Segment: seg, Period: period})
	if err != nil {
		return nil, "", err
	}
	cmp.ScoreHeader = scoreHeader(b)
	ranked := map[string]bool{}
	es := slices.Clone(pg.Entries)
	slices.SortStableFunc(es, func(x, y ranking.Entry) int { return int(x.Rank - y.Rank) })
	for i, r := range rows(b, v.Name, seg, period, es, "") {
		ranked[r.Member] = true
		row := views.CompareRow{Row: r}
		if i > 0 {
			above := es[i-1]
			row.Gap = gapText(b, abs64(above.Score-es[i].Score))
			row.GapLabel = row.Gap + " behind " + displayName(above.Name, above.Member)
		}
		cmp.Rows = append(cmp.Rows, row)
	}
	for _, m := range members {
		if !ranked[m] {
			cmp.Unranked = append(cmp.Unranked, m)
		}
	}
	return cmp, "", nil
}

// pastLastPage answers a page number past the end of the period: a 404
// page that says so and links to the last page.
func (s *Server) pastLastPage(c echo.Context, b *ranking.Board, v ranking.View, seg ranking.Segment, period string, pageNo int, total int64) (*answer, error) {
	last := max(int((total+PageSize-1)/PageSize), 1)
	pageArg := ""
	if last > 1 {
		pageArg = strconv.Itoa(last)
	}
	msg := fmt.Sprintf("Page %d is past the end: this period has %s on %d %s.", pageNo, count(total, "member", "members"), last, either(int64(last), "page", "pages"))
	if total == 0 {
		msg = fmt.Sprintf("Page %d is past the end: nobody has a score in this period yet.", pageNo)
	}
	p := views.ErrorPage{
		Layout: s.layout("Page not found · " + b.Title), Status: http.StatusNotFound, HomeURL: "/",
		Heading: "Past the last page", Message: msg,
		Ways: []views.Link{{Label: fmt.Sprintf("Go to the last page (%d)", last), URL: withQuery(boardPath(b.ID, v.Name), "period", period, "segment", seg.String(), "page", pageArg)}},
	}
	p.Description = errorDescription(p)
	return s.renderAnswer(c, http.StatusNotFound, views.Error(p), "", false)
}

// count is "1 member" or "235 members".
func count(n int64, one, many string) string {
	return strconv.FormatInt(n, 10) + " " + either(n, one, many)
}

// either is one for n = 1, else many.
func either(n int64, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// podium is the top three of a first page, for the podium above it: none
// when fewer than three are ranked.
func podium(rows []views.Row) []views.Row {
	if len(rows) < 3 || rows[0].Rank != 1 {
		return nil
	}
	return rows[:3]
}
