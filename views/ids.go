package views

import "strconv"

// DOM ids, script hooks and data-testid values are API: pages, websocket
// frames, static/app.js and tests all use these names, so they are defined
// here once (ids_test.go checks app.js and the templates against them).
const (
	// IDMain is the main landmark, target of the skip link.
	IDMain = "main"
	// IDLiveStatus is the element that says whether a page is live.
	IDLiveStatus = "live-status"
	// IDSearch is the member search input; "/" focuses it.
	IDSearch = "member-search"
	// IDMemberSuggestions is the member search's list of suggestions.
	IDMemberSuggestions = "member-suggestions"
	// IDSegment is the segment picker's field; IDSegmentValues its list
	// of suggestions.
	IDSegment       = "segment-pick"
	IDSegmentValues = "segment-values"
	// IDChart is the rank card's score chart; IDRankChart its rank chart.
	IDChart     = "score-chart"
	IDRankChart = "rank-chart"
	// Headings of the rank card's sections, which name them.
	IDNeighboursHeading = "h-neighbours"
	IDViewsHeading      = "h-views"
	IDSegmentsHeading   = "h-segments"
	IDChartHeading      = "h-chart"
	// IDCompareTitle names the compare section; IDCompareAdd is its field.
	IDCompareTitle = "compare-title"
	IDCompareAdd   = "compare-add"
	// IDCompareLive is the compare table's box, which app.js refreshes.
	IDCompareLive = "compare-live"
	// IDSnippetHeading names the embed builder's snippet section;
	// IDWidgetSnippet is the snippet its copy button copies.
	IDSnippetHeading = "h-snippet"
	IDWidgetSnippet  = "widget-snippet"
	// IDRollover is a live board page's announcement of its period's end.
	IDRollover = "rollover"
	// Headings of the recap's sections, which name them.
	IDRecapPodium   = "recap-podium"
	IDRecapClimbers = "recap-climbers"
	IDRecapRace     = "recap-race"
	// IDWidgetPreview is the builder's preview frame, IDWidgetFit its
	// "rows fit" note and IDWidgetMeHint the hint of its member field:
	// app.js updates the first two as the controls change.
	IDWidgetPreview = "widget-preview-frame"
	IDWidgetFit     = "widget-fit"
	IDWidgetMeHint  = "widget-me-hint"
	// IDLeagueMember is the league page's "find my league" field;
	// IDCohortLive the group's table box, the live feed's fragment;
	// IDLeaguePlace the league widget's sentence about its member;
	// IDLeagueHeading names the rank card's league section.
	IDLeagueMember  = "league-member"
	IDCohortLive    = "cohort-live"
	IDLeaguePlace   = "league-me-place"
	IDLeagueHeading = "h-league"
)

// Hooks are the data- attributes static/app.js reads. Templates write them
// as literal attribute names (templ has no other way); these constants are
// their one list, checked against app.js and the templates.
const (
	// HookWS is the live status element's websocket path.
	HookWS = "data-ws"
	// HookState is the live status element's state, shown by the CSS.
	HookState = "data-state"
	// HookPeriod is the period a table shows: a frame of another period
	// reloads the page.
	HookPeriod = "data-period"
	// HookMember is a standings row's member id.
	HookMember = "data-member"
	// HookLiveRank and HookLiveScore mark a row's rank and score, which
	// a frame compares to show what moved.
	HookLiveRank  = "data-live-rank"
	HookLiveScore = "data-live-score"
	// HookLiveBlock names a block of a live table (ticker, podium) that a
	// frame replaces whole when it changed.
	HookLiveBlock = "data-live-block"
	// HookCountdownEnd and HookCountdownNow are a countdown's end and the
	// server's clock at the read, in Unix ms.
	HookCountdownEnd = "data-countdown-end"
	HookCountdownNow = "data-countdown-now"
	// HookSuggest is the member search's suggestion API URL.
	HookSuggest = "data-suggest"
	// HookAutosubmit marks the segment picker, submitted on a choice.
	HookAutosubmit = "data-autosubmit"
	// HookSegmentValues is the segment field's value API URLs.
	HookSegmentValues = "data-segment-values"
	// HookLiveIndex marks the index's board list, which follows its boards;
	// HookBoard is each board's id in it.
	HookLiveIndex = "data-live-index"
	HookBoard     = "data-board"
	// HookCopy is a copy button's source element id.
	HookCopy = "data-copy"
	// HookRollover carries a live board page's results API and recap
	// URLs (with {period} for the period that ended), read when its
	// period ends to announce the winners; HookFormat and HookUnit say how
	// it shows their scores, HookNext its way on to the new period.
	HookRollover = "data-rollover-api"
	HookRecap    = "data-rollover-recap"
	HookFormat   = "data-score-format"
	HookUnit     = "data-score-unit"
	HookNext     = "data-rollover-next"
	HookLate     = "data-rollover-late"
	HookNoun     = "data-rollover-noun"
	HookView     = "data-view"
	// HookSubmit marks a form's submit button that app.js hides where the
	// form follows its controls by itself.
	HookSubmit = "data-submit"
	// HookMe is the member a widget highlights (?me=), re-marked after
	// each live frame.
	HookMe = "data-me"
	// HookFinal marks the rows of a decided league group, the last frame of
	// its live feed; HookPlace is a widget row's sentence about its member.
	HookFinal = "data-final"
	HookPlace = "data-place"
	// HookBuilder marks the embed builder's form, which updates its
	// preview and snippet as its controls change.
	HookBuilder = "data-builder"
	// HookTicker marks the overtakes ticker; HookMover and HookPassed name
	// the two members of each entry, so that entries about me and my
	// friends can be brought out.
	HookTicker = "data-ticker"
	HookMover  = "data-mover"
	HookPassed = "data-passed"
	// Me and friends (kept in the browser): HookMeControls is a rank
	// card's member, whose HookMeToggle and HookFriendToggle buttons mark
	// it; HookFriendsLink is the board page's "You & friends" link, a
	// board page URL the script adds members= to.
	HookMeControls   = "data-me-controls"
	HookMeToggle     = "data-me-toggle"
	HookFriendToggle = "data-friend-toggle"
	HookMeNote       = "data-me-note"
	HookFriendsLink  = "data-friends-link"
	// The pinned "You: #412" bar: HookMeBar is the member API URL (ending
	// in /members/), HookMeQuery its query, HookMeTable the table my row
	// is looked for in, HookPageSize its rows a page; HookScoreFormat
	// ("duration" or "number"), HookDecimals and HookOrder ("asc" or
	// "desc") write scores and gaps as the board means them; HookMeText
	// and HookMeJump are its text and "Jump to me".
	HookMeBar       = "data-me-bar"
	HookMeQuery     = "data-me-query"
	HookMeTable     = "data-me-table"
	HookPageSize    = "data-page-size"
	HookScoreFormat = "data-score-format"
	HookDecimals    = "data-decimals"
	HookOrder       = "data-order"
	HookMeText      = "data-me-text"
	HookMeJump      = "data-me-jump"
)

// TableID is the id of the top-N table of one board view shown with limit
// rows (board pages use the page size). A live frame replaces the element
// with this id whole, so its id names everything that decides its content.
func TableID(board, view string, limit int) string {
	return "standings-" + board + "-" + view + "-" + strconv.Itoa(limit)
}

// CardID is the id of the live part of a rank card (all of it below the
// period navigation).
func CardID(board, view string) string { return "card-" + board + "-" + view }

// data-testid values: for tests only; the script never reads them.
const (
	TestBoardList     = "board-list"
	TestBoardItem     = "board-item"
	TestViewTabs      = "view-tabs"
	TestTable         = "standings-table"
	TestRow           = "standings-row"
	TestRank          = "rank"
	TestMember        = "member"
	TestScore         = "score"
	TestPeriod        = "period"
	TestPeriodPrev    = "period-prev"
	TestPeriodNext    = "period-next"
	TestPeriodNow     = "period-current"
	TestFinal         = "final-badge"
	TestPagePrev      = "page-prev"
	TestPageNext      = "page-next"
	TestCSV           = "csv-link"
	TestSearch        = "member-search"
	TestEmpty         = "empty"
	TestNotDurable    = "not-durable"
	TestCardRank      = "card-rank"
	TestCardScore     = "card-score"
	TestCardOf        = "card-of"
	TestCardGap       = "card-gap"
	TestCardViews     = "card-views"
	TestCardLine      = "card-line"
	TestNeighbours    = "neighbours"
	TestChart         = "score-chart"
	TestErrorStatus   = "error-status"
	TestRetry         = "retry"
	TestEmbed         = "embed"
	TestCountdown     = "countdown"
	TestResets        = "resets"
	TestRolling       = "rolling"
	TestClosing       = "closing"
	TestFinalTitle    = "final-title"
	TestResultLink    = "result-link"
	TestResultJSON    = "result-json"
	TestRecording     = "result-recording"
	TestResultsLink   = "results-link"
	TestResult        = "result"
	TestPodium        = "podium"
	TestPodiumRow     = "podium-row"
	TestResultTotal   = "result-total"
	TestResultBoard   = "result-board"
	TestResultCSV     = "result-csv"
	TestOlder         = "results-older"
	TestNewest        = "results-newest"
	TestWinners       = "winners"
	TestLeaders       = "leaders"
	TestSegmentTitle  = "segment-title"
	TestSegmentPicker = "segment-picker"
	TestSegmentSelect = "segment-select"
	TestSegmentWhole  = "segment-whole"
	TestCardSegments  = "card-segments"
	TestMove          = "move"
	TestZoneLine      = "zone-line"
	TestTicker        = "ticker"
	TestTickerTop     = "ticker-top"
	TestTickerMore    = "ticker-more"
	TestTickerItem    = "ticker-item"
	TestPassed        = "card-passed"
	TestCardZone      = "card-zone"
	TestErrorWay      = "error-way"
	TestErrorBoards   = "error-boards"
	TestRankChart     = "rank-chart"
	TestChartNote     = "chart-note"
	TestCardNotRanked = "card-not-ranked"
	TestCardPastViews = "card-past-views"
	TestBoardPodium   = "board-podium"
	TestMore          = "more"
	TestDevLinks      = "dev-links"
	TestJSON          = "json-link"
	TestFullBoard     = "full-board"
	TestLiveNoScript  = "live-noscript"

	// The API page.
	TestAPISpec    = "api-spec"
	TestAPIOp      = "api-op"
	TestFooterAPI  = "footer-api"
	TestAPIVersion = "api-version"
	TestAPIExample = "api-example"
	TestAPIAnswer  = "api-answer"
	// The compare table.
	TestCompare    = "compare"
	TestCompareRow = "compare-row"
	TestCompareAdd = "compare-add"
	TestCompareGap = "compare-gap"
	// Me and friends.
	TestMeBar        = "me-bar"
	TestMeJump       = "me-jump"
	TestMeControls   = "me-controls"
	TestMeToggle     = "me-toggle"
	TestFriendToggle = "friend-toggle"
	// The search answer.
	TestMatches    = "search-matches"
	TestNoMatch    = "search-no-match"
	TestMatchID    = "match-id"
	TestMatchRank  = "match-rank"
	TestMatchScore = "match-score"
	// The rank card's plain-words states.
	TestCardMemberID  = "card-member-id"
	TestCardNotPlayed = "card-not-played"
	TestChartFew      = "chart-few"
	TestCardLate      = "card-late"
	// The embed builder.
	TestWidgetForm    = "widget-form"
	TestWidgetPreview = "widget-preview"
	TestWidgetSnippet = "widget-snippet"
	TestWidgetCopy    = "widget-copy"
	// The period's end: results, recap and the rollover announcement.
	TestResultGap         = "result-gap"
	TestResultRecap       = "result-recap"
	TestProvisional       = "provisional"
	TestRecap             = "recap"
	TestRecapStatus       = "recap-status"
	TestRecapClimbers     = "recap-climbers"
	TestRecapRace         = "recap-race"
	TestRecapTotal        = "recap-total"
	TestWinnersLine       = "winners-line"
	TestTimeLeft          = "time-left"
	TestRolloverAnnounced = "rollover"
	TestUpcoming          = "upcoming"
	TestWidgetView        = "widget-view"
	TestWidgetSegment     = "widget-segment"
	TestWidgetMe          = "widget-me"
	// Leagues.
	TestLeagueRules   = "league-rules"
	TestLeagueFind    = "league-find"
	TestLeagueFindErr = "league-find-error"
	TestLeagueTier    = "league-tier"
	TestLeagueGroup   = "league-group"
	TestRoundStatus   = "round-status"
	TestZoneRules     = "zone-rules"
	TestCohortTable   = "cohort-table"
	TestCohortZone    = "cohort-zone"
	TestOutcome       = "outcome"
	TestCardLeague    = "card-league"
	TestLeagueLink    = "league-link"
	TestFullGroup     = "full-group"
	TestLeaguePlace   = "league-place"
	TestLeagueAbsent  = "league-absent"
)
