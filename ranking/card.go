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

//go:embed scripts/card.lua
var cardLua string

var cardScript = newScript(cardLua)

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
		keys, args := s.cardRequest(q, now)
		local := s.clock()
		raw, err := s.readsOf(q.b).run(ctx, cardScript, keys, args...).Slice()
		if err != nil {
			return nil, wrapRedis(err)
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

// cardRequest builds card.lua's KEYS and ARGV for q at the local estimate
// of Redis's clock. The periods, their keys and arguments are the same for
// every member's card of a view until a period turns, so they are made
// once (cardTemplate) and only the member's parts are added per card.
func (s *Store) cardRequest(q *cardQuery, now time.Time) ([]string, []any) {
	t := s.cardTemplate(q, now)
	q.periods, q.ncand, q.views = t.periods, t.ncand, t.views
	// The template's slices are shared: appends copy them (full slice
	// expressions), and ARGV gets its own copy to hold the member.
	keys := t.keys[:len(t.keys):len(t.keys)]
	args := make([]any, len(t.args), len(t.args)+1+len(q.segs)*(2+q.ncand)+3)
	copy(args, t.args)
	args[2] = q.member
	b, v := q.b, q.v
	k := s.keysOf(b)
	add := func(sg Segment, p Period) {
		check := v.Kind == Window && !q.unchecked[v.Name+sg.tag()+":"+p.ID]
		keys = append(keys, k.segPeriod(v, sg, p.ID))
		if check {
			keys = append(keys, k.segBuilt(v, sg, p.ID))
		}
		args = append(args, cardEntry(p, q.fixed != nil, check))
	}
	// Each of the member's segment boards at the headline's candidates.
	args = append(args, itoa(int64(len(q.segs))))
	for _, sg := range q.segs {
		args = append(args, sg.Name, sg.Value)
		for _, p := range q.periods[q.n-1:] {
			add(sg, p)
		}
	}
	// Who passed the member (a current card of the board itself), as
	// the view's overtakes read this tick say: its name is read here.
	mover := ""
	if q.passed != nil {
		mover = q.passed.Member
	}
	args = append(args, mover)
	// The member record the segment boards above come from, checked.
	if q.checkSegs {
		args = append(args, "1", q.segRec)
		keys = append(keys, k.memberSegments())
	} else {
		args = append(args, "0", "")
	}
	// The chart's points this store keeps, under the version they hold
	// for (chart_cache.go).
	q.keptPts, q.kept = s.charts.lookup(b, v, q.seg, q.versions, q.member, q.periods, now.Add(chartMargin).UnixMilli())
	mask := make([]byte, len(q.periods))
	for i, ok := range q.kept {
		mask[i] = '0'
		if ok {
			mask[i] = '1'
		}
	}
	args = append(args, string(mask), q.versions)
	keys = append(keys, k.finalVersion())
	return keys, args
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

// cardEntry is card.lua's entry of a period, "<check> <start_ms> <end_ms>
// <id>": check "1" when it is a window that must be built (its marker key
// follows its sorted set's). An explicit period, and the all period, is
// read whatever the time.
func cardEntry(p Period, explicit, check bool) string {
	start, end := int64(0), int64(math.MaxInt64/2)
	if !explicit && !p.IsAll() {
		start, end = p.Start.UnixMilli(), p.End.UnixMilli()
	}
	return boolArg(check) + " " + itoa(start) + " " + itoa(end) + " " + p.ID
}

// cardTemplate is a card request without the member's parts: its periods,
// KEYS and ARGV up to the member's segment boards (ARGV[3], the member, is
// empty), for cards read while now is in [from, until).
type cardTemplate struct {
	from, until time.Time
	periods     []Period
	ncand       int
	views       [][]Period
	keys        []string
	args        []any
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
	t.keys = []string{k.names()}
	t.args = []any{v.Name, string(b.Ties), "", itoa(int64(q.around)), itoa(int64(q.n)), itoa(int64(t.ncand)), itoa(int64(len(b.Views)))}
	add := func(ov View, p Period, explicit bool) {
		check := ov.Kind == Window && !q.unchecked[ov.Name+q.seg.tag()+":"+p.ID]
		t.keys = append(t.keys, k.segPeriod(ov, q.seg, p.ID))
		if check {
			t.keys = append(t.keys, k.segBuilt(ov, q.seg, p.ID))
		}
		t.args = append(t.args, cardEntry(p, explicit, check))
	}
	for _, p := range t.periods {
		add(v, p, q.fixed != nil)
	}
	for i, ov := range b.Views {
		t.args = append(t.args, ov.Name, itoa(int64(len(t.views[i]))))
		for _, p := range t.views[i] {
			add(ov, p, false)
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
