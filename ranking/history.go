package ranking

import "time"

// MaxHistory is the most periods a rank card's history covers.
const MaxHistory = 60

// HistoryPoint is a member's standing in one period.
type HistoryPoint struct {
	Period  Period
	Score   int64 // scaled
	Rank    int64 // 0 when absent
	Total   int64
	Present bool
}

// History is a member's standing over consecutive periods of one view, as
// RankCard reads it: periods that expired, or windows that were never
// built, read as absent.
type History struct {
	Board  *Board
	View   View
	Member string
	Now    time.Time      // Redis's clock
	Points []HistoryPoint // oldest first
}

// ViewStanding is a member's standing in the current period of one view.
type ViewStanding struct {
	View    View
	Period  Period
	Final   bool
	Total   int64
	Score   int64 // scaled
	Rank    int64 // 0 when absent
	Present bool
}
