package views

// View models: everything a component shows, already formatted by the web
// layer, so that components only lay out text and never compute.

// Layout is what every full page shares.
type Layout struct {
	Title      string // the page's own title; the site name is appended
	NotDurable bool   // the store is the embedded, in-memory Redis
	Live       *Live  // set when the page follows the live feed
	// Description is the page's meta description and link-preview text:
	// a plain sentence of what it shows.
	Description string
	// Image is the absolute URL of the page's 1200×630 preview image
	// (og:image), or "" for none.
	Image string
}

// Live says which live feed a page follows and which table it replaces.
type Live struct {
	URL     string // websocket path, e.g. /ws/points/week?limit=100
	TableID string
}

// Link is a navigation link; Current marks the one being shown.
type Link struct {
	Label   string
	URL     string
	Current bool
}

// IndexPage is GET /: every board with its views and its leaders.
type IndexPage struct {
	Layout
	Boards []BoardSummary
}

// BoardSummary is one board on the index.
type BoardSummary struct {
	ID          string
	Title       string
	Description string // what the board is for, in plain words
	URL         string // the board's most meaningful view
	Unit        string // what its scores count, e.g. "reads"; empty for plain scores
	TimeLeft    string // "Week ends in 2d 4h", for the view the card opens; empty for all time
	Views       []Link
	LeadersOf   string // label of the view the leaders come from
	Leaders     []Row
	Unavailable bool // the leaders could not be read
	// LeadersLabel heads the current leaders, e.g. "This week (so far)".
	LeadersLabel string
	// Winners is the podium of the board's latest recorded result, under
	// WinnersLabel (e.g. "Week of 9 Nov 2026 — winners"); empty when none.
	Winners      []Row
	WinnersLabel string
	WinnersURL   string // the result on the results page
	WinnersLine  string // "Won by Amara Okafor with 9,842"
	Provisional  bool   // the winners' period is not final yet
}

// Row is one row of a standings table.
type Row struct {
	Rank    int64
	Member  string
	Name    string // display name, or the member id when none is known
	Score   string
	CardURL string
	Self    bool // the member a rank card is about
	Move    Move // rank change against the previous period
	// Initials and Hue (0..11, from the member id) draw the avatar.
	Initials string
	Hue      int64
	// ZoneEnd is the title of the zone this row is the last of: a named
	// line is drawn after it. "" for none.
	ZoneEnd string
}

// Move is a row's rank change: shown as ▲2, ▼1 or "new", read out as
// Label ("up 2 places since last week"). The zero Move shows nothing.
type Move struct {
	Kind  string // "up", "down", "same", "new"; "" when unknown
	Text  string // ▲2, ▼1, –, new
	Label string
}

// Overtake is one line of the board page's live ticker.
type Overtake struct {
	Text string // "Leila passed Diego for #2"
	Ago  string // "2 min ago"
	// Member passed Passed for Rank; names and card links for each.
	Member, Name, CardURL         string
	Passed, PassedName, PassedURL string
	Rank                          int64
	Lead                          bool // the lead changed hands
}

// Table is a standings table: a whole fragment, as sent live.
type Table struct {
	ID      string
	Caption string
	Rows    []Row
	Period  string // the period shown; a live frame of another period means the page is stale
	Empty   string // shown when there are no rows
	// Ticker is the newest overtakes of the current period (board pages
	// only; nil shows no ticker), the ones that matter most first: the
	// first TickerOpen show, the rest collapse (ticker.templ).
	Ticker []Overtake
	// ScoreHeader heads the score column: the board's unit, or Score.
	ScoreHeader string
	// Podium is the top three, drawn above a board page's first page
	// (nil elsewhere).
	Podium []Row
}

// PeriodNav is the period navigation of a board or rank card.
type PeriodNav struct {
	Timeless   bool   // the all view: one period, nothing to navigate
	ID         string // the period id
	Label      string // e.g. "Week of 16 Nov 2026"
	Range      string // e.g. "16 Nov – 22 Nov 2026"; empty for all time
	Final      bool
	IsCurrent  bool
	Upcoming   bool   // a period that has not started: neither current nor closing
	PrevURL    string // empty when there is none
	NextURL    string
	CurrentURL string
}

// Pager is the 100-rows-a-page navigation.
type Pager struct {
	Page, Pages int
	From, To    int64
	Total       int64
	PrevURL     string
	NextURL     string
}

// BoardPage is GET /boards/{board}/{view}.
type BoardPage struct {
	Layout
	BoardID    string
	BoardTitle string
	Segment    string // the segment board shown ("France", "Team: red"); empty for the whole board
	WholeURL   string // the whole board, from a segment board
	ViewLabel  string
	Tabs       []Link
	Period     PeriodNav
	Table      Table
	Pager      Pager
	Picker     *SegmentPicker // nil for a board without segments
	SearchURL  string         // GET form action of the member search
	SuggestURL string         // the name search API the search box suggests from
	Compare    *Compare       // the member list (?members=), when one is given
	SearchIn   string         // the period searched; empty for the current one
	SearchSeg  string         // the segment searched ("NAME:VALUE"); empty for the whole board
	SearchErr  string         // a member search that found nobody
	Query      string
	CSVURL     string
	APIURL     string
	EmbedURL   string
	ResultsURL string // the view's results page; empty for all time
	LeagueURL  string // the board's league page; empty for a board without one
	Ends       Ends
	Rollover   *Rollover // a live current calendar period: how its end is announced
	Me         MeBar     // what app.js needs to pin my row and list my friends
}

// Rollover is what a live board page needs to announce the winners when
// its period ends (static/app.js, announceRollover).
type Rollover struct {
	Board, View string
	API         string // the JSON standings of the view; ?period= is added
	Recap       string // the recap page; ?period= is added
	Next        string // the board's current period
	Format      string // "duration" or ""
	Unit        string
	Noun        string // "hour", "week"
	Late        bool   // late scores may still change the ended period
}

// MeBar is what app.js needs, on a board page, to show "me" (kept in the
// browser) when my row is out of view: where to read my standing and how
// to write a score as the board means it.
type MeBar struct {
	APIURL     string // the member API of this view, ending in "/members/"
	Query      string // its query: the period and segment shown, one neighbour ("?around=1&…")
	FriendsURL string // this board page, without a member list, for "You & friends"
	TableID    string // the standings table my row is looked for in
	PageSize   int
	Format     string // "duration" or "number"
	Decimals   int
	Order      string // "asc" (lower is better) or "desc"
}

// SegmentPicker is the board page's choice of segment board: a plain GET
// form (app.js submits it on change). Up to a few hundred values are a
// list; beyond that a text field takes NAME:VALUE and suggests values.
type SegmentPicker struct {
	FormURL     string
	Period      string // kept: the period shown, empty for the current one
	Members     string // kept: the compare list
	Current     string // "NAME:VALUE"; empty for the whole board
	Names       string // the board's segment names, for the field's hint
	Label       string // the field's label in words: "Country", or "Group" for several names
	Groups      []SegmentGroup
	Typed       bool     // too many values for a list
	SuggestURLs []string // the segment values API of each name (Typed)
}

// SegmentGroup is the values of one segment name.
type SegmentGroup struct {
	Name    string
	Options []Option
}

// Option is one choice of a select.
type Option struct {
	Value, Label string
	Selected     bool
}

// Ends says when the period shown ends, or how it ended.
type Ends struct {
	Countdown *Countdown // a current calendar period
	Rolling   string     // a current window, e.g. "rolling 7 days"
	Closing   string     // ended, not final yet: the late-scores sentence
	Final     *Final     // a final period
}

// Countdown is a live "Ends in 2d 4h 12m": rendered with the text the
// script would show, which then ticks it from the Redis clock it carries.
type Countdown struct {
	Text   string // e.g. "Ends in 2d 4h 12m"
	EndMS  int64  // the period's end, Unix ms
	NowMS  int64  // Redis's clock when the page was read, Unix ms
	Resets string // e.g. "resets Mon 00:00 Asia/Shanghai"
}

// Final links a final period to its recorded result.
type Final struct {
	Heading   string // e.g. "Final results — Week of 16 Nov 2026"
	Recorded  bool   // false: the result is being recorded
	Note      string // shown when there is no result to link
	JSONURL   string
	ResultURL string // the result on the results page
}

// ResultsPage is GET /boards/{board}/{view}/results.
type ResultsPage struct {
	Layout
	BoardTitle string
	ViewLabel  string
	BoardURL   string
	Tabs       []Link // the results pages of the views that have them
	Results    []ResultItem
	Empty      string // shown when there are no results
	OlderURL   string
	NewestURL  string
}

// ResultItem is one recorded period result with its podium.
type ResultItem struct {
	ID       string // the period id, also the element id
	Label    string // e.g. "Week of 16 Nov 2026"
	Podium   []Row
	Total    string // e.g. "37 ranked"
	Amended  string // e.g. "amended 2026-11-24 10:00 UTC"; empty when never
	BoardURL string
	CSVURL   string
	JSONURL  string
	Recorded string
	RecapURL string
	// Provisional says a period that ended is not final yet: "Leading
	// when the hour closed; late scores may still arrive until …".
	Provisional string
	// Gap, when set, stands for a run of results nobody scored in:
	// "12 weeks with no scores" (ID is the newest of them).
	Gap      string
	GapRange string // e.g. "Week of 7 Sep 2026 – week of 30 Nov 2026"
}

// RecapPage is GET /boards/{board}/{view}/recap?period=: how one period
// went.
type RecapPage struct {
	Layout
	BoardTitle  string
	ViewLabel   string
	BoardURL    string // the period on the board
	ResultsURL  string
	PeriodLabel string // e.g. "Week of 16 Nov 2026"
	Status      string // "Final results", or the provisional sentence
	Final       bool
	Winner      string // "Won by Amara Okafor with 9,842 points"
	Podium      []Row
	Climbers    []Climber
	ClimbSince  string // "against the week of 9 Nov 2026"
	Race        string // the closest race in the top 10, in a sentence
	Total       string // "135 members · 4,210 points in all"
	PrevURL     string // the recap of the period before; empty when none
	NextURL     string
}

// Climber is one of a recap's biggest climbers.
type Climber struct {
	Row
	Text string // "up 12 places, from #19"
}

// CardPage is GET /boards/{board}/{view}/members/{member}.
type CardPage struct {
	Layout
	BoardID    string
	BoardTitle string
	BoardURL   string
	Segment    string // the segment board of the card ("Country: France"); empty for the whole board
	WholeURL   string // the same card on the whole board, from a segment board
	ViewLabel  string
	Tabs       []Link // the same card in each view
	Period     PeriodNav
	Member     string
	Name       string
	Summary    CardSummary
	Neighbours Table
	Views      []CardView
	NowURL     string        // a finished period's card: the current card (its views are current)
	Segments   []CardSegment // the member's rank in each segment board it belongs to
	Chart      Chart         // the score over recent periods
	ChartLabel string        // its heading: the board's unit, or Score
	RankChart  Chart         // the rank over the same periods, #1 at the top
	Lines      []string
	MemberID   string      // the member's id, said quietly when it has a name
	ChartFew   string      // why no chart is drawn ("-": say nothing); "" when they are
	NotPlayed  string      // a period without the member's score: "Ana didn't play …"
	League     *CardLeague // the member's current league round; nil when none
}

// CardSummary is the headline of a rank card (live-updated as a whole).
type CardSummary struct {
	ID         string
	Rank       int64
	Score      string
	Total      int64
	Gap        string // e.g. "12 to pass #4"; empty for #1
	Passed     string // who last passed the member: "Leila passed you for #2 · 3 min ago"
	ScoreLabel string // the board's unit, or Score
	GapLabel   string // "Result" for a finished period, "Provisional" while late scores may come; else Next rank
	Late       string // a provisional headline's note on late scores
	Zone       string // how far the next zone up is: "12 points to reach Prize"; "" for none
}

// CardSegment is the member's standing in one segment board of the
// card's view and period.
type CardSegment struct {
	Label   string // "Country: France"
	URL     string // the card on that segment board
	Rank    int64
	Total   int64
	Score   string
	Current bool // the segment board the card shows
}

// CardView is the member's standing in one view's current period.
type CardView struct {
	Label   string
	Period  string
	Rank    int64 // 0: no score there
	Score   string
	Total   int64
	URL     string
	Current bool
}

// EmbedPage is GET /embed/{board}/{view}.
type EmbedPage struct {
	Live       *Live
	Title      string
	ViewLabel  string
	Theme      string // light or dark
	Table      Table
	BoardURL   string
	NotDurable bool
	Countdown  *Countdown // nil for windows and all time
	Me         string     // the member highlighted for the host site (?me=); "" for none
	// Description is the widget's meta description (as Layout's).
	Description string
}

// ErrorPage is an HTML error.
type ErrorPage struct {
	Layout
	Status   int
	Heading  string
	Message  string
	RetryURL string // set when trying again may help
	HomeURL  string
	Ways     []Link // where to go from here: the page one probably meant
	Boards   []Link // the boards that exist (not-found pages)
}

// LeaguePage is GET /boards/{board}/league: one round of a board's
// league, its tiers (highest first) and their groups.
type LeaguePage struct {
	Layout
	BoardTitle string
	BoardURL   string
	Round      PeriodNav
	Countdown  *Countdown // a current round
	Status     string     // a closed round: whether its outcomes are decided
	Rules      string     // "Groups of up to 30 · the top 7 move up a tier, the bottom 5 move down"
	Tiers      []LeagueTierBox
	FindURL    string // GET form action of "find my league"
	FindRound  string // kept: the round shown, empty for the current one
	Query      string
	FindErr    string // a member who did not play the round
	APIURL     string
}

// LeagueTierBox is one tier of a round with links to its groups.
type LeagueTierBox struct {
	Title   string
	Members string // "47 players in 2 groups"
	Groups  []Link // Label "Group 1 · 30 players"
	More    string // "and 1,200 more groups": beyond those listed
}

// CohortPage is GET /boards/{board}/league/{tier}/{cohort}: one group's
// standings with its zones, and outcomes once decided.
type CohortPage struct {
	Layout
	BoardTitle  string
	LeagueURL   string
	Heading     string // "Silver league · group 3"
	Round       PeriodNav
	Countdown   *Countdown // a current round
	Status      string     // a closed round: decided or being decided
	Zones       []string   // the zones in words: "Top 7 move up to Gold"
	ScoreHeader string
	Rows        []CohortRow
	// Live says the group is not decided yet: its table follows the live
	// feed (Layout.Live) until the frame that brings the outcomes.
	Live   bool
	CSVURL string
	APIURL string
}

// CohortRow is a row of a group's standings: its zone, the line drawn
// after it, and its outcome once decided.
type CohortRow struct {
	Row
	Zone     string // "promotion", "safe" or "demotion"
	ZoneText string // what the zone means for this member: "Moves up", "Stays", "Moves down"
	Outcome  string // "Promoted to Gold"; empty until decided
	// LineAfter names the zone line drawn below the row: "promotion" after
	// the last of the promotion zone, "demotion" before the first of the
	// demotion zone.
	LineAfter string
	// Place is the league widget's sentence about the row's member, after
	// its name: "is #3 of 7: moves up to Gold league if the round ends
	// like this." (app.js keeps the widget's sentence to its member's row).
	Place string
}

// CohortTable is a group's table as the group page (or, Widget, the
// league widget) shows it, and as the live feed sends it: the same bytes
// for every viewer, so no row is marked as the viewer's (app.js marks
// ?me= and the browser's own me and friends). Final marks a decided
// group's table, the last frame the feed sends for it.
type CohortTable struct {
	Heading     string
	ScoreHeader string
	Status      string // a closed round: decided or being decided (the page's only)
	Rows        []CohortRow
	Final       bool
}

// LeagueEmbedPage is GET /embed/{board}/league: one member's group in
// the current round, for iframes.
type LeagueEmbedPage struct {
	Title       string // "Quiz · League"
	Theme       string // light, dark or auto
	Description string
	Me          string
	Absent      string // set when Me has not played this round: the widget says so
	LeagueURL   string
	Heading     string // "Silver league · group 3"
	Place       string // "Alice is #3 of 7: moves up to Gold league if the round ends like this."
	Countdown   *Countdown
	Status      string
	Zones       []string
	ScoreHeader string
	Rows        []CohortRow
	Live        *Live // the group's live feed while it is not decided; nil after
	GroupURL    string
	NotDurable  bool
}

// CardLeague is a rank card's league section: the member's place in the
// current round.
type CardLeague struct {
	Heading string // "League · Week of 16 Nov 2026"
	Tier    string // "Silver league"
	Place   string // "#3 of 30 in group 2"
	Zone    string // "In the promotion zone: moves up to Gold if the round ended now"
	URL     string // the group's page with the member highlighted
}
