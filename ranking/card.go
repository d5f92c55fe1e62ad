package ranking

import (
	"context"
	_ "embed"
	"errors"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

//go:embed scripts/cardhead.lua
var cardHeadLua string

var cardHeadScript = newScript(cardHeadLua)

// RankCard is everything a rank card shows, read as one snapshot.
type RankCard struct {
	Card                   // the member's row and neighbours in the chosen period
	History *History       // the periods of the view ending with the chosen one
	Views   []ViewStanding // the current period of every view, in board order
	// Segments are the member's standings, in the chosen period, in the
	// segment boards of its latest value of each segment name (board
	// order of names), where it has a score.
	Segments []SegmentRank
	// PassedBy is the newest overtake of the member in the current period
	// in the view's overtakes as read this tick (at most movesMaxAge old);
	// nil when there is none, and on cards of a segment board or of a
	// past period.
	PassedBy *Move
}

// Bounds on the rounds of one rank card read: a round may learn Redis's
// clock (when the local estimate missed the period) or build one window.
const (
	cardClockRetries = 3
	cardRounds       = 16
)

// RankCardQuery says which period a rank card shows and how much of it.
// Around and History are required; the zero Segment and Period are the
// board itself in the current period.
type RankCardQuery struct {
	// Segment is the segment board the headline, history and views are
	// read on; zero: the board itself. Segments lists the member's rank
	// in each segment board it belongs to either way.
	Segment Segment
	Period  string // as PageQuery.Period
	Around  int    // neighbours on each side, 0..MaxAround
	History int    // periods of the view ending with the chosen one, 1..MaxHistory (the all view has one)
}

// RankCard reads, in one script call and so one consistent snapshot (a
// sharded board: see rankCardMerged), a
// member's card in a period of a view with neighbours on each side, its
// standing in the periods of the view that end with that period, and its
// standing in the current period of every view of the board. A member
// without a score in the period is ENOTFOUND. Unbuilt windows are built
// for the chosen period and the current periods; past windows in the
// history that nobody built read as absent.
func (s *Store) RankCard(ctx context.Context, boardID, viewName, member string, rq RankCardQuery) (*RankCard, error) {
	seg, period, around, historyN := rq.Segment, rq.Period, rq.Around, rq.History
	if around < 0 || around > MaxAround {
		return nil, Errorf(EINVALID, "around must be from 0 to %d, got %d", MaxAround, around)
	}
	if historyN < 1 || historyN > MaxHistory {
		return nil, Errorf(EINVALID, "history must be from 1 to %d periods, got %d", MaxHistory, historyN)
	}
	if err := ValidateMember(member); err != nil {
		return nil, err
	}
	b, v, err := s.boardView(boardID, viewName)
	if err != nil {
		return nil, err
	}
	if err := b.ValidateSegment(seg); err != nil {
		return nil, err
	}
	cal := s.cfg.Calendar
	q := &cardQuery{b: b, v: v, seg: seg, member: member, around: around, n: historyN, unchecked: map[string]bool{}}
	if len(b.Segments) > 0 && !b.Sharded() {
		// The member's latest segment values, so that card.lua can declare
		// their keys; the ranks themselves are read in the card's snapshot.
		// The record as last read is a guess that card.lua checks in the
		// same snapshot: a member whose values did not change since gets
		// its card in one round trip.
		rec, ok := s.cardSegRecord(b, member)
		if !ok {
			rec, err = s.rdb.HGet(ctx, s.keysOf(b).memberSegments(), member).Result()
			if err != nil && !errors.Is(err, redis.Nil) {
				return nil, wrapRedis(err)
			}
			s.keepCardSegRecord(b, member, rec)
		}
		q.checkSegs, q.segRec, q.segs = true, rec, parseMemberSegments(rec)
	}
	if period != "" {
		p, err := cal.ParsePeriod(v, period)
		if err != nil {
			return nil, err
		}
		q.fixed = &p
	}
	if v.Kind == All {
		q.n = 1
	}
	q.versions = s.charts.version(b)
	var moves []Move
	if q.fixed == nil && seg.IsZero() {
		if moves, err = s.recentMoves(ctx, b, v); err != nil {
			return nil, err
		}
	}
	if b.Sharded() {
		return s.rankCardMerged(ctx, q, moves)
	}
	clockRetries := 0
	for round := 0; round < cardRounds; round++ {
		now, err := s.Now(ctx)
		if err != nil {
			return nil, err
		}
		q.passed = passedIn(moves, cal.PeriodAt(v, now).ID, member)
		x := s.cardTx(q, now)
		local := s.clock()
		if err := s.readsOf(q.b).runTx(ctx, q.b.ID, x.tx); err != nil {
			return nil, wrapRedis(err)
		}
		raw, err := x.raw()
		if err != nil {
			return nil, err
		}
		nowMS := asInt(raw[0])
		s.learnNow(nowMS, local)
		redisNow := time.UnixMilli(nowMS).In(cal.Location())
		switch asInt(raw[1]) {
		case 0:
			// No candidate contains Redis's now: the estimate is fresh now.
			if clockRetries < cardClockRetries {
				clockRetries++
				continue
			}
			return nil, Errorf(EINTERNAL, "could not agree on the current period with Redis")
		case -2:
			// A chosen window nobody built yet: build it if it can still be
			// built (not in the future, not past its retention), else read
			// it as it is; either way read everything again.
			wv, wseg, p, err := s.cardWindow(b, raw)
			if err != nil {
				return nil, err
			}
			if wseg.IsZero() {
				wseg = q.seg // the headline's and the views' windows are the card's board's
			}
			seen, err := s.segmentKnown(ctx, b, wseg)
			if err != nil {
				return nil, err
			}
			tomorrow := cal.Next(wv, cal.PeriodAt(wv, redisNow))
			if seen && round < cardRounds/2 && !p.End.After(tomorrow.End) && nowMS < s.entry(b, wv, p).expireAt {
				if err := s.ensureSegWindow(ctx, b, wv, wseg, p); err != nil {
					return nil, err
				}
			} else {
				q.unchecked[wv.Name+wseg.tag()+":"+p.ID] = true
			}
			continue
		case -3:
			// The member's segment values changed since they were last
			// read: declare the boards of the record read just now.
			if len(raw) < 3 {
				return nil, Errorf(EINTERNAL, "card: short answer (%d items)", len(raw))
			}
			rec, _ := raw[2].(string)
			s.keepCardSegRecord(b, member, rec)
			q.segRec, q.segs = rec, parseMemberSegments(rec)
			continue
		case -4:
			// The final periods changed (a removal) since the points
			// kept for this card: read again, with what is kept under
			// the version read just now.
			q.versions, _ = raw[2].(string)
			continue
		}
		return s.decodeCard(ctx, q, redisNow, raw)
	}
	return nil, Errorf(EINTERNAL, "card: windows of board %q kept needing a build", b.ID)
}

// cardQuery is what a rank card read asks for, and which windows it reads
// as they are (they could not be built).
type cardQuery struct {
	b         *Board
	v         View
	seg       Segment   // the segment board read (zero: the board)
	segs      []Segment // the member's segment boards, for Segments
	checkSegs bool      // the board has segments: card.lua checks segRec
	segRec    string    // the member record segs was parsed from ("" = none)
	fixed     *Period
	member    string
	around, n int
	unchecked map[string]bool // "view[@name=value]:period"

	// Set by cardRequest: the view's periods, oldest first (the last
	// ncand are the headline's candidates), and each view's candidates;
	// the points of those periods this store keeps (kept[i]) under the
	// board's final periods' version as last read (versions).
	periods  []Period
	ncand    int
	views    [][]Period
	versions string
	keptPts  []HistoryPoint
	kept     []bool
	passed   *Move // the member's newest overtake in the current period by the local clock, as last read
}

// candidateMargin is how far from its period's bounds the local estimate
// of Redis's clock must be for that period alone to be sent as the
// current one: the estimate is off by far less, even after the app
// server's clock steps by minutes (NTP), and a card whose period Redis
// does not find among its candidates is read again around Redis's now.
const candidateMargin = 15 * time.Minute

// candidates are the periods that may be the current one of v at now
// (the local estimate), and the span of estimates they hold for: the
// current period alone well inside it, else it and its neighbours.
func (s *Store) candidates(v View, now time.Time) (cands []Period, from, until time.Time) {
	cal := s.cfg.Calendar
	cur := cal.PeriodAt(v, now)
	if v.Kind == All {
		return []Period{cur}, time.Unix(0, 0), time.Unix(1<<62, 0)
	}
	inner, innerEnd := cur.Start.Add(candidateMargin), cur.End.Add(-candidateMargin)
	switch {
	case !now.Before(inner) && now.Before(innerEnd):
		return []Period{cur}, inner, innerEnd
	case now.Before(inner):
		return []Period{cal.Prev(v, cur), cur, cal.Next(v, cur)}, cur.Start, inner
	default:
		return []Period{cal.Prev(v, cur), cur, cal.Next(v, cur)}, innerEnd, cur.End
	}
}

// A rank card is read in one MULTI/EXEC transaction, so in one snapshot:
// cardhead.lua reads the headline (the period holding Redis's now among
// its candidates, the member's rank and its neighbours, which depend on
// what it reads), and plain commands read every other period the card
// shows, none depending on another: the standings of each view's
// candidates, of the chart's periods not kept by this store
// (chart_cache.go) and of the member's segment boards, the window markers, the
// final periods' version, the member record and the mover's name. Plain
// commands cost Redis a fraction of the same reads made by a script; a
// board with shared ties reads its other standings in the script too (a
// shared rank needs the member's code). cardTx lays the transaction out,
// cardTx.raw reads its replies into the answer decodeCard reads.

// cardSlot is one period a card may read.
type cardSlot struct {
	view   View
	seg    Segment // the segment board (zero: the board)
	p      Period
	z      string // its sorted set
	mark   string // its window marker, checked; "" = none
	always bool   // an explicit or the all period: holds any now
}

// holds reports whether the slot's period holds Redis's now.
func (sl *cardSlot) holds(nowMS int64) bool {
	return sl.always || (nowMS >= sl.p.Start.UnixMilli() && nowMS < sl.p.End.UnixMilli())
}

// entry is the slot's candidate entry in cardhead.lua's ARGV, its marker
// being the m-th marker declared.
func (sl *cardSlot) entry(m int) string {
	if sl.always {
		return strconv.Itoa(m)
	}
	return strconv.Itoa(m) + " " + itoa(sl.p.Start.UnixMilli()) + " " + itoa(sl.p.End.UnixMilli())
}

// cardReads are the plain commands reading a sorted set's standing.
type cardReads struct {
	card, rank *redis.IntCmd
	score      *redis.Cmd
}

// cardTx is one card read: its slots, what it reads, and the commands.
type cardTx struct {
	s *Store
	q *cardQuery
	// slots are the template's (q.periods, then each view's candidates)
	// and then, per segment board of the member, the headline's
	// candidates; vfirst[j] is view j's first, sfirst the first segment
	// board's.
	slots  []cardSlot
	vfirst []int
	sfirst int
	// Which slots are read: the sorted sets (the headline's single
	// candidate is the script's), the markers, the sets whose standing
	// the script reads (shared ties), and whether a kept period was left
	// out (then a changed version means reading again).
	zs      []string
	marks   []string
	stand   []string
	skipped bool
	// Commands of the transaction.
	head    *redis.Cmd
	version *redis.StringCmd
	segRec  *redis.StringCmd
	mover   *redis.StringCmd
	reads   map[string]cardReads
	built   map[string]*redis.IntCmd
}

// cardTx lays out q's card read at the local estimate of Redis's clock.
// The periods and their keys are the same for every member's card of a
// view until a period turns, so they are made once (cardTemplate) and
// only the member's parts are added per card.
func (s *Store) cardTx(q *cardQuery, now time.Time) *cardTx {
	t := s.cardTemplate(q, now)
	q.periods, q.ncand, q.views = t.periods, t.ncand, t.views
	b, v := q.b, q.v
	k := s.keysOf(b)
	x := &cardTx{s: s, q: q, vfirst: t.vfirst, sfirst: len(t.slots)}
	x.slots = t.slots[:len(t.slots):len(t.slots)]
	for _, sg := range q.segs {
		for _, p := range q.periods[q.n-1:] {
			x.slots = append(x.slots, newCardSlot(k, v, sg, p, q.fixed != nil, q.unchecked))
		}
	}
	// The chart's points this store keeps, under the version they hold
	// for (chart_cache.go).
	q.keptPts, q.kept = s.charts.lookup(b, v, q.seg, q.versions, q.member, q.periods, now.Add(chartMargin).UnixMilli())
	head := ""
	if q.ncand == 1 {
		head = x.slots[q.n-1].z
	}
	seen := map[string]bool{}
	read := func(sl *cardSlot) {
		if sl.mark != "" && !seen[sl.mark] {
			seen[sl.mark] = true
			x.marks = append(x.marks, sl.mark)
		}
		if sl.z != head && !seen[sl.z] {
			seen[sl.z] = true
			x.zs = append(x.zs, sl.z)
		}
	}
	for i := range q.periods {
		if q.kept[i] && !(q.ncand == 1 && i == q.n-1) {
			x.skipped = true
			continue
		}
		read(&x.slots[i])
	}
	for i := len(q.periods); i < len(x.slots); i++ {
		read(&x.slots[i])
	}
	if b.Ties == TiesShared {
		x.stand, x.zs = x.zs, nil
	}
	return x
}

// newCardSlot is the slot of period p of view v of segment board sg.
func newCardSlot(k boardKeys, v View, sg Segment, p Period, explicit bool, unchecked map[string]bool) cardSlot {
	sl := cardSlot{view: v, seg: sg, p: p, z: k.segPeriod(v, sg, p.ID), always: explicit || p.IsAll()}
	if v.Kind == Window && !unchecked[v.Name+sg.tag()+":"+p.ID] {
		sl.mark = k.segBuilt(v, sg, p.ID)
	}
	return sl
}

// tx queues the card's commands on pipe; eval sends cardhead.lua by EVAL
// (Redis did not have it when sent by EVALSHA). It reports through
// noscript whether the script was missing.
func (x *cardTx) tx(ctx context.Context, pipe redis.Pipeliner, eval bool) (noscript func() bool) {
	q, k := x.q, x.s.keysOf(x.q.b)
	cands := x.slots[q.n-1 : q.n-1+q.ncand]
	keys := []string{k.names()}
	args := []any{q.member, itoa(int64(q.around)), string(q.b.Ties), itoa(int64(q.ncand))}
	for i := range cands {
		keys = append(keys, cands[i].z)
	}
	m := 0
	for i := range cands {
		if cands[i].mark != "" {
			m++
			keys = append(keys, cands[i].mark)
			args = append(args, cands[i].entry(m))
		} else {
			args = append(args, cands[i].entry(0))
		}
	}
	if len(x.stand) > 0 {
		keys = append(keys, x.stand...)
		args = append(args, itoa(int64(len(x.stand))))
	}
	if eval {
		x.head = cardHeadScript.Eval(ctx, pipe, keys, args...)
	} else {
		x.head = cardHeadScript.EvalSha(ctx, pipe, keys, args...)
	}
	x.version = pipe.Get(ctx, k.finalVersion())
	x.segRec, x.mover = nil, nil
	if q.checkSegs {
		x.segRec = pipe.HGet(ctx, k.memberSegments(), q.member)
	}
	if q.passed != nil {
		x.mover = pipe.HGet(ctx, k.names(), q.passed.Member)
	}
	x.reads = make(map[string]cardReads, len(x.zs))
	for _, z := range x.zs {
		x.reads[z] = cardReads{card: pipe.ZCard(ctx, z), rank: pipe.ZRank(ctx, z, q.member), score: pipe.Do(ctx, "zscore", z, q.member)}
	}
	x.built = make(map[string]*redis.IntCmd, len(x.marks))
	for _, mk := range x.marks {
		x.built[mk] = pipe.Exists(ctx, mk)
	}
	return func() bool { return redis.HasErrorPrefix(x.head.Err(), "NOSCRIPT") }
}

// replyErr is a command's error, but for the nil reply.
func replyErr(c redis.Cmder) error {
	if err := c.Err(); err != nil && !errors.Is(err, redis.Nil) {
		return wrapRedis(err)
	}
	return nil
}

// raw reads the transaction's replies as decodeCard reads them: {now, 1,
// head, history, views, segments, passed, version}, with head {chosen,
// total, pos, code, first_rank, member, code, name, ...}, history,
// segments (total, rank, code) per point and views (chosen, total,
// rank, code) per view; rank 0 is absent, and a history point is (-1, 0,
// nil) when kept, (0, -1, nil) when a window nobody built. Else {now, 0}
// (no candidate holds Redis's now), {now, -2, view, period, segment name,
// segment value} (a chosen window to build), {now, -3, record} (the
// member record changed) or {now, -4, version} (the final periods
// changed since the points kept, which were not read).
func (x *cardTx) raw() ([]any, error) {
	q := x.q
	h, err := x.head.Slice()
	if err != nil {
		return nil, wrapRedis(err)
	}
	cmds := []redis.Cmder{x.version}
	if x.segRec != nil {
		cmds = append(cmds, x.segRec)
	}
	if x.mover != nil {
		cmds = append(cmds, x.mover)
	}
	for _, r := range x.reads {
		cmds = append(cmds, r.card, r.rank, r.score)
	}
	for _, c := range x.built {
		cmds = append(cmds, c)
	}
	for _, c := range cmds {
		if err := replyErr(c); err != nil {
			return nil, err
		}
	}
	if len(h) < 2 {
		return nil, Errorf(EINTERNAL, "card: short answer (%d items)", len(h))
	}
	now, c := h[0], int(asInt(h[1]))
	nowMS := asInt(now)
	if c == 0 {
		return []any{now, int64(0)}, nil
	}
	if c < 0 || c > q.ncand {
		if c == -2 && len(h) >= 3 {
			if c = int(asInt(h[2])); c >= 1 && c <= q.ncand {
				sl := &x.slots[q.n-1+c-1]
				return []any{now, int64(-2), sl.view.Name, sl.p.ID, "", ""}, nil
			}
		}
		return nil, Errorf(EINTERNAL, "card: headline answer %v", h[1])
	}
	// Each view's period: the candidate holding Redis's now.
	chosen := make([]int, len(q.views))
	for j := range q.views {
		for i := range q.views[j] {
			if x.slots[x.vfirst[j]+i].holds(nowMS) {
				chosen[j] = i + 1
				break
			}
		}
		if chosen[j] == 0 {
			return []any{now, int64(0)}, nil
		}
	}
	if x.segRec != nil {
		if rec := x.segRec.Val(); rec != q.segRec {
			return []any{now, int64(-3), rec}, nil
		}
	}
	version := x.version.Val()
	if version != q.versions && x.skipped {
		return []any{now, int64(-4), version}, nil
	}
	built := func(sl *cardSlot) bool {
		return sl.mark == "" || x.built[sl.mark] == nil || x.built[sl.mark].Val() == 1
	}
	for j := range q.views {
		if sl := &x.slots[x.vfirst[j]+chosen[j]-1]; !built(sl) {
			return []any{now, int64(-2), sl.view.Name, sl.p.ID, "", ""}, nil
		}
	}
	for g := range q.segs {
		if sl := &x.slots[x.sfirst+g*q.ncand+c-1]; !built(sl) {
			return []any{now, int64(-2), sl.view.Name, sl.p.ID, sl.seg.Name, sl.seg.Value}, nil
		}
	}
	hs := h[3:]
	if len(hs) < 2 {
		return nil, Errorf(EINTERNAL, "card: short headline (%d items)", len(hs))
	}
	headRow := []any{int64(c), hs[0], hs[1]}
	if asInt(hs[1]) == 0 {
		return []any{now, int64(1), headRow, []any{}, []any{}, []any{}, []any{}, version}, nil
	}
	if len(hs) < 5 {
		return nil, Errorf(EINTERNAL, "card: short headline (%d items)", len(hs))
	}
	headRow = append(append(headRow, hs[2], hs[4]), hs[5:]...)
	// The standings read, by sorted set: the headline's, then the
	// script's (shared ties) or the plain commands'.
	headZ := x.slots[q.n-1+c-1].z
	standings := map[string][]any{headZ: {hs[0], hs[3], hs[2]}}
	if sts, _ := h[2].([]any); len(sts) == 3*len(x.stand) {
		for i, z := range x.stand {
			if _, ok := standings[z]; !ok {
				standings[z] = sts[3*i : 3*i+3]
			}
		}
	} else if len(x.stand) > 0 {
		return nil, Errorf(EINTERNAL, "card: %d standings for %d periods", len(sts), len(x.stand))
	}
	standing := func(sl *cardSlot) []any {
		if !built(sl) {
			return []any{int64(0), int64(-1), nil}
		}
		if st, ok := standings[sl.z]; ok {
			return st
		}
		r, ok := x.reads[sl.z]
		if !ok {
			return nil
		}
		st := []any{r.card.Val(), int64(0), nil}
		if rank, err := r.rank.Result(); err == nil && st[0].(int64) > 0 {
			st[1], st[2] = rank+1, r.score.Val()
		}
		return st
	}
	head := q.n - 1 + c - 1
	history := make([]any, 0, 3*q.n)
	for j := c - 1; j <= head; j++ {
		if j != head && q.kept[j] {
			history = append(history, int64(-1), int64(0), nil)
			continue
		}
		st := standing(&x.slots[j])
		if st == nil {
			return nil, Errorf(EINTERNAL, "card: period %s was not read", x.slots[j].p.ID)
		}
		history = append(history, st...)
	}
	views := make([]any, 0, 4*len(q.views))
	for j := range q.views {
		st := standing(&x.slots[x.vfirst[j]+chosen[j]-1])
		if st == nil {
			return nil, Errorf(EINTERNAL, "card: view %s was not read", q.b.Views[j].Name)
		}
		views = append(append(views, int64(chosen[j])), st...)
	}
	segs := make([]any, 0, 3*len(q.segs))
	for g := range q.segs {
		st := standing(&x.slots[x.sfirst+g*q.ncand+c-1])
		if st == nil {
			return nil, Errorf(EINTERNAL, "card: segment board %s was not read", q.segs[g])
		}
		segs = append(segs, st...)
	}
	passed := []any{}
	if x.mover != nil {
		if name, err := x.mover.Result(); err == nil {
			passed = []any{name}
		} else {
			passed = []any{nil}
		}
	}
	return []any{now, int64(1), headRow, history, views, segs, passed, version}, nil
}

// maxCardSegRecords bounds the member records kept for rank cards.
const maxCardSegRecords = 4096

// cardSegRecord is the member's segment record as a rank card last read
// it, if kept.
func (s *Store) cardSegRecord(b *Board, member string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec, ok := s.segRecs[b.ID+"\x00"+member]
	return rec, ok
}

// keepCardSegRecord keeps a member's segment record for its next card;
// all are dropped when maxCardSegRecords are kept (a wrong one costs one
// more round trip, never a wrong card).
func (s *Store) keepCardSegRecord(b *Board, member, rec string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.segRecs) >= maxCardSegRecords {
		clear(s.segRecs)
	}
	s.segRecs[b.ID+"\x00"+member] = rec
}

// cardTemplate is a card read without the member's parts: its periods
// and their slots (q.periods', then each view's candidates; vfirst[j] is
// view j's first), for cards read while now is in [from, until).
type cardTemplate struct {
	from, until time.Time
	periods     []Period
	ncand       int
	views       [][]Period
	slots       []cardSlot
	vfirst      []int
}

// maxCardTemplates bounds the kept templates (one per view, segment board
// and explicit period asked for).
const maxCardTemplates = 1024

// cardTemplate returns the template of q at now, made and kept when none
// is kept for that moment. A query with windows read as they are is rare
// (a window that could not be built) and gets one of its own.
func (s *Store) cardTemplate(q *cardQuery, now time.Time) *cardTemplate {
	key := ""
	if len(q.unchecked) == 0 {
		key = q.b.ID + "\x00" + q.v.Name + "\x00" + q.seg.String() + "\x00" + strconv.Itoa(q.n) + "\x00" + strconv.Itoa(q.around)
		if q.fixed != nil {
			key += "\x00" + q.fixed.ID
		}
		s.mu.Lock()
		t := s.cards[key]
		s.mu.Unlock()
		if t != nil && !now.Before(t.from) && now.Before(t.until) {
			return t
		}
	}
	t := s.makeCardTemplate(q, now)
	if key != "" {
		s.mu.Lock()
		if len(s.cards) >= maxCardTemplates {
			clear(s.cards)
		}
		s.cards[key] = t
		s.mu.Unlock()
	}
	return t
}

// makeCardTemplate lays out the periods of a card read at now: the
// history of the view ending with its candidates, and every view's
// candidates; the template holds while every view's candidates would be
// the same.
func (s *Store) makeCardTemplate(q *cardQuery, now time.Time) *cardTemplate {
	cal := s.cfg.Calendar
	b, v := q.b, q.v
	t := &cardTemplate{from: time.Unix(0, 0), until: time.Unix(1<<62, 0)}
	candidates := func(ov View) []Period {
		cands, from, until := s.candidates(ov, now)
		if from.After(t.from) {
			t.from = from
		}
		if until.Before(t.until) {
			t.until = until
		}
		return cands
	}
	var cands []Period
	if q.fixed != nil {
		cands = []Period{*q.fixed}
	} else {
		cands = candidates(v)
	}
	t.ncand = len(cands)
	t.periods = make([]Period, q.n-1, q.n-1+len(cands))
	prev := cands[0]
	for i := q.n - 2; i >= 0; i-- {
		prev = cal.Prev(v, prev)
		t.periods[i] = prev
	}
	t.periods = append(t.periods, cands...)
	for _, ov := range b.Views {
		t.views = append(t.views, candidates(ov))
	}

	k := s.keysOf(b)
	for _, p := range t.periods {
		t.slots = append(t.slots, newCardSlot(k, v, q.seg, p, q.fixed != nil, q.unchecked))
	}
	for i, ov := range b.Views {
		t.vfirst = append(t.vfirst, len(t.slots))
		for _, p := range t.views[i] {
			t.slots = append(t.slots, newCardSlot(k, ov, q.seg, p, false, q.unchecked))
		}
	}
	return t
}

// parseMemberSegments reads a member record of apply.lua: "name=value"
// lines.
func parseMemberSegments(rec string) []Segment {
	var out []Segment
	for _, line := range strings.Split(rec, "\n") {
		if name, value, ok := strings.Cut(line, "="); ok {
			out = append(out, Segment{Name: name, Value: value})
		}
	}
	return out
}

// cardWindow decodes a "needs build" answer: the view, the segment board
// (zero: the board) and the period.
func (s *Store) cardWindow(b *Board, raw []any) (View, Segment, Period, error) {
	if len(raw) < 6 {
		return View{}, Segment{}, Period{}, Errorf(EINTERNAL, "card: short answer (%d items)", len(raw))
	}
	name, _ := raw[2].(string)
	id, _ := raw[3].(string)
	var seg Segment
	seg.Name, _ = raw[4].(string)
	seg.Value, _ = raw[5].(string)
	v, ok := b.View(name)
	if !ok || v.Kind != Window {
		return View{}, seg, Period{}, Errorf(EINTERNAL, "card: no rolling view %q on board %q", name, b.ID)
	}
	p, err := s.cfg.Calendar.ParsePeriod(v, id)
	return v, seg, p, err
}

// decodeCard turns card.lua's answer into a RankCard.
func (s *Store) decodeCard(ctx context.Context, q *cardQuery, now time.Time, raw []any) (*RankCard, error) {
	b, v := q.b, q.v
	if len(raw) < 8 {
		return nil, Errorf(EINTERNAL, "card: short answer (%d items)", len(raw))
	}
	head, _ := raw[2].([]any)
	hist, _ := raw[3].([]any)
	vs, _ := raw[4].([]any)
	if len(head) < 3 {
		return nil, Errorf(EINTERNAL, "card: short headline (%d items)", len(head))
	}
	chosen := int(asInt(head[0]))
	if chosen < 1 || chosen > q.ncand {
		return nil, Errorf(EINTERNAL, "card: chose candidate %d of %d", chosen, q.ncand)
	}
	last := q.n - 1 + chosen - 1 // index of the chosen period in q.periods
	p := q.periods[last]
	st := Standing{Board: b, View: v, Period: p, Final: b.Final(p, now), Total: asInt(head[1]), Now: now}
	pos := asInt(head[2]) - 1
	if pos < 0 {
		return nil, Errorf(ENOTFOUND, "member %q has no score in %s %s of board %q", q.member, v.Name, p.ID, b.ID)
	}
	sgs, _ := raw[5].([]any)
	if len(head) < 5 || len(hist) != 3*q.n || len(vs) != 4*len(b.Views) || len(sgs) != 3*len(q.segs) {
		return nil, Errorf(EINTERNAL, "card: malformed answer (%d, %d, %d items)", len(head), len(hist), len(vs))
	}
	code, err := parseCode(head[3])
	if err != nil {
		return nil, err
	}
	rc := &RankCard{Card: Card{Standing: st}}
	c := &rc.Card
	c.Member = q.member
	c.Score, _ = b.decode(v.Name, code)
	start := max(pos-int64(q.around), 0)
	c.Around, err = s.entries(b, v, head[4], int(start), head[5:])
	if err != nil {
		return nil, err
	}
	if pos-start >= int64(len(c.Around)) || c.Around[pos-start].Member != q.member {
		return nil, Errorf(EINTERNAL, "card: the member is not among its neighbours")
	}
	c.Rank, c.Name = c.Around[pos-start].Rank, c.Around[pos-start].Name
	c.TopPercent = math.Round(10000*float64(c.Rank)/float64(c.Total)) / 100

	rc.History = &History{Board: b, View: v, Member: q.member, Now: now, Points: make([]HistoryPoint, q.n)}
	version, _ := raw[7].(string)
	var keep []keptPoint
	for i := range q.n {
		j := last - (q.n - 1) + i // the point's index in q.periods
		p := q.periods[j]
		if asInt(hist[3*i]) == -1 {
			if !q.kept[j] {
				return nil, Errorf(EINTERNAL, "card: a point answered as kept that is not")
			}
			rc.History.Points[i] = q.keptPts[j]
			continue
		}
		built := asInt(hist[3*i+1]) != -1
		if !built {
			hist[3*i+1] = int64(0)
		}
		pt, err := s.cardPoint(b, v.Name, hist[3*i:3*i+3])
		if err != nil {
			return nil, err
		}
		pt.Period = p
		rc.History.Points[i] = pt
		var code float64
		if pt.Present {
			code, _ = parseCode(hist[3*i+2])
		}
		keep = s.appendKept(keep, q, p, now, built, pt, code)
	}
	s.keepChart(ctx, b, v, q.seg, q.member, version, []string{version}, keep)
	rc.Views = make([]ViewStanding, len(b.Views))
	for i, ov := range b.Views {
		row := vs[4*i : 4*i+4]
		k := int(asInt(row[0]))
		if k < 1 || k > len(q.views[i]) {
			return nil, Errorf(EINTERNAL, "card: view %s chose candidate %d", ov.Name, k)
		}
		pt, err := s.cardPoint(b, ov.Name, row[1:])
		if err != nil {
			return nil, err
		}
		vp := q.views[i][k-1]
		rc.Views[i] = ViewStanding{View: ov, Period: vp, Final: b.Final(vp, now), Total: pt.Total,
			Score: pt.Score, Rank: pt.Rank, Present: pt.Present}
	}
	for i, sg := range q.segs {
		pt, err := s.cardPoint(b, v.Name, sgs[3*i:3*i+3])
		if err != nil {
			return nil, err
		}
		if pt.Present {
			rc.Segments = append(rc.Segments, SegmentRank{Segment: sg, Total: pt.Total, Rank: pt.Rank, Score: pt.Score})
		}
	}
	if passed, _ := raw[6].([]any); len(passed) == 1 && q.passed.Period == p.ID {
		m := *q.passed
		m.Name, _ = passed[0].(string)
		m.PassedName = c.Name
		rc.PassedBy = &m
	}
	return rc, nil
}

// cardPoint decodes one (total, rank, code) standing of view.
func (s *Store) cardPoint(b *Board, view string, row []any) (HistoryPoint, error) {
	pt := HistoryPoint{Total: asInt(row[0]), Rank: asInt(row[1])}
	if pt.Rank == 0 {
		return pt, nil
	}
	code, err := parseCode(row[2])
	if err != nil {
		return pt, err
	}
	pt.Score, _ = b.decode(view, code)
	pt.Present = true
	return pt, nil
}
