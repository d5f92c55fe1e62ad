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
	// IDSnippetHeading names the embed builder's snippet section;
	// IDWidgetSnippet is the snippet its copy button copies.
	IDSnippetHeading = "h-snippet"
	IDWidgetSnippet  = "widget-snippet"
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
	TestTicker        = "ticker"
	TestPassed        = "card-passed"
	TestErrorWay      = "error-way"
	TestErrorBoards   = "error-boards"
	TestRankChart     = "rank-chart"
	TestChartNote     = "chart-note"
	TestCardNotRanked = "card-not-ranked"
	TestCardPastViews = "card-past-views"
	TestBoardPodium   = "board-podium"

	// The API page.
	TestAPISpec   = "api-spec"
	TestAPIOp     = "api-op"
	TestFooterAPI = "footer-api"
	// The compare table.
	TestCompare    = "compare"
	TestCompareRow = "compare-row"
	TestCompareAdd = "compare-add"
	// The search answer.
	TestMatches = "search-matches"
	TestNoMatch = "search-no-match"
	// The embed builder.
	TestWidgetForm    = "widget-form"
	TestWidgetPreview = "widget-preview"
	TestWidgetSnippet = "widget-snippet"
	TestWidgetCopy    = "widget-copy"
)
