package views

import "strconv"

// DOM ids and data-testid values are API: pages, websocket frames and
// tests all use these names, so they are defined here once.
const (
	// IDMain is the main landmark, target of the skip link.
	IDMain = "main"
	// IDLiveStatus is the element that says whether a page is live.
	IDLiveStatus = "live-status"
	// IDSearch is the member search input.
	IDSearch = "member-search"
	// IDSegment is the segment picker's field.
	IDSegment = "segment-pick"
	// IDChart is the rank card's score chart; IDRankChart its rank chart.
	IDChart     = "score-chart"
	IDRankChart = "rank-chart"
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

// data-testid values.
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
)
