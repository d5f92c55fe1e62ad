package ranking

import (
	"context"
	"time"
	"unicode/utf8"
)

// Event is one score event for a board.
type Event struct {
	Member string
	Value  int64     // scaled by 10^Decimals (see Board.ParseScore)
	Name   string    // optional display name
	ID     string    // optional idempotency key
	At     time.Time // optional event instant; zero means Redis's now
	// Segments tags the event with at most one value per segment name of
	// the board (country: FR); it then also updates those segment boards.
	Segments map[string]string
}

// ViewScore is a member's standing in one period of one view.
type ViewScore struct {
	View   string
	Period string
	Score  int64 // scaled
	Rank   int64 // 1-based; 0 when the member is no longer there, or not asked for (ApplyOptions.NoRanks)
}

// WriteResult is the outcome of one event.
type WriteResult struct {
	Member    string
	Duplicate bool
	At        time.Time   // the event time used (Redis's now or the event's at); zero for a duplicate
	Views     []ViewScore // in the board's view order
	Err       error       // set when this event was refused; nothing changed
}

// MaxBatch is the most events one Apply call takes.
const MaxBatch = 1000

// ValidateMember checks a member id: 1..128 bytes of UTF-8 without control
// characters or bidirectional overrides.
func ValidateMember(m string) error {
	if len(m) == 0 || len(m) > 128 {
		return Errorf(EINVALID, "member must be 1 to 128 bytes, got %d", len(m))
	}
	return checkText("member", m)
}

// ValidateName checks a display name: 1..64 characters, same rules.
func ValidateName(n string) error {
	if c := utf8.RuneCountInString(n); c == 0 || c > 64 {
		return Errorf(EINVALID, "name must be 1 to 64 characters, got %d", c)
	}
	return checkText("name", n)
}

// ValidateEventID checks an idempotency id: 1..128 bytes.
func ValidateEventID(id string) error {
	if len(id) == 0 || len(id) > 128 {
		return Errorf(EINVALID, "id must be 1 to 128 bytes, got %d", len(id))
	}
	return checkText("id", id)
}

func checkText(field, s string) error {
	if !utf8.ValidString(s) {
		return Errorf(EINVALID, "%s must be valid UTF-8", field)
	}
	for _, r := range s {
		switch {
		case r < 0x20 || (r >= 0x7f && r < 0xa0):
			return Errorf(EINVALID, "%s must not contain control characters (found U+%04X)", field, r)
		case (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069):
			return Errorf(EINVALID, "%s must not contain bidirectional overrides (found U+%04X)", field, r)
		}
	}
	return nil
}

// validate checks what can be checked without Redis.
func (b *Board) validate(ev Event) error {
	if err := ValidateMember(ev.Member); err != nil {
		return err
	}
	if ev.Name != "" {
		if err := ValidateName(ev.Name); err != nil {
			return err
		}
	}
	if ev.ID != "" {
		if err := ValidateEventID(ev.ID); err != nil {
			return err
		}
	}
	if err := b.ValidateSegments(ev.Segments); err != nil {
		return err
	}
	if !ev.At.IsZero() && (ev.At.Before(minInstant) || !ev.At.Before(maxInstant)) {
		return Errorf(EINVALID, "at %s is outside the accepted range [now - lateness, now + 5s]", ev.At.Format(time.RFC3339))
	}
	switch b.Update {
	case Increment:
		if b.MaxStep > 0 && (ev.Value > b.MaxStep || ev.Value < -b.MaxStep) {
			return Errorf(EINVALID, "value %s exceeds board %q's max_step %s, the largest change one event may make", b.FormatScore(ev.Value), b.ID, b.FormatScore(b.MaxStep))
		}
		if span := b.Max - b.Min; ev.Value > span || ev.Value < -span {
			return Errorf(EINVALID, "value %s can never keep the score within [%s, %s]", b.FormatScore(ev.Value), b.FormatScore(b.Min), b.FormatScore(b.Max))
		}
	default:
		if ev.Value < b.Min || ev.Value > b.Max {
			return Errorf(EINVALID, "value %s is outside [%s, %s]", b.FormatScore(ev.Value), b.FormatScore(b.Min), b.FormatScore(b.Max))
		}
	}
	return nil
}

// Write applies one event, ranks answered; a refused event comes back as
// the error. Concurrent writes to a board share script calls (see
// writeGroup).
func (s *Store) Write(ctx context.Context, boardID string, ev Event) (WriteResult, error) {
	b, err := s.board(boardID)
	if err != nil {
		return WriteResult{}, err
	}
	if err := b.validate(ev); err != nil {
		return WriteResult{}, err // refused before it waits for anything
	}
	res, err := s.writeGroupOf(b, ev).write(ctx, ev)
	if err != nil {
		return WriteResult{}, err
	}
	if res.Err != nil {
		return WriteResult{}, res.Err
	}
	return res, nil
}

// ApplyOptions tune a batch write. The zero value answers ranks.
type ApplyOptions struct {
	// NoRanks leaves ranks out of the results (every ViewScore.Rank is 0;
	// periods and scores are still answered). Ranks cost Redis a lookup
	// per event and view, so writers that do not show them should set it.
	// Overtakes are recorded exactly either way.
	NoRanks bool
}

// Apply applies events in order, each to every view of the board atomically.
// The returned slice has one result per event; a refused event has Err set
// and changed nothing. The error is for the call as a whole (Redis
// unavailable, unknown board); an EUNAVAILABLE one carries the outcome of
// every event (ErrorOutcome: unknown, or not applied).
//
// Events go to Redis in script calls of at most 100. When a call fails and
// the events' outcomes differ (a call after the first, or a first call that
// may have been applied followed by others never sent), Apply answers per
// event instead: the events of the failed call get EUNAVAILABLE with the
// call's outcome, those never sent EUNAVAILABLE "not applied"; retrying
// them with the same idempotency ids is safe.
func (s *Store) Apply(ctx context.Context, boardID string, events []Event, opts ApplyOptions) ([]WriteResult, error) {
	b, err := s.board(boardID)
	if err != nil {
		return nil, err
	}
	if len(events) == 0 {
		return nil, nil
	}
	if len(events) > MaxBatch {
		return nil, Errorf(EINVALID, "a batch holds at most %d events, got %d", MaxBatch, len(events))
	}
	results := make([]WriteResult, len(events))
	valid := make([]int, 0, len(events)) // indexes of events sent to Redis
	for i, ev := range events {
		results[i].Member = ev.Member
		if err := b.validate(ev); err != nil {
			results[i].Err = err
			continue
		}
		valid = append(valid, i)
	}
	if len(valid) == 0 {
		return results, nil
	}
	chunks := writeChunks(b, events, valid)
	for c, ch := range chunks {
		err := s.applyChunk(ctx, b, ch.shard, events, ch.idx, results, opts)
		if err == nil {
			continue
		}
		outcome := ErrorOutcome(err)
		if c == 0 && (outcome != OutcomeUnknown || len(chunks) == 1) {
			return nil, err // one outcome for every event
		}
		if outcome == OutcomeNotApplied {
			markUnavailable(results, ch.idx, OutcomeNotApplied, "this event was not applied: Redis was unavailable; retry it")
		} else {
			markUnavailable(results, ch.idx, OutcomeUnknown, "Redis did not answer in time while this event was being applied, so whether it was applied is unknown (it may still be); retry it with the same id")
		}
		for _, later := range chunks[c+1:] {
			markUnavailable(results, later.idx, OutcomeNotApplied, "this event was not applied because Redis failed on an earlier part of the batch; retry it")
		}
		return results, nil
	}
	if b.Sharded() && !opts.NoRanks {
		if err := s.rankWrites(ctx, b, results); err != nil {
			return nil, err
		}
	}
	return results, nil
}

// writeChunk is one apply.lua call: events of one shard.
type writeChunk struct {
	shard int
	idx   []int
}

// writeChunks splits idx into script calls: by shard, then at most
// scriptChunk events each, every call keeping idx's order.
func writeChunks(b *Board, events []Event, idx []int) []writeChunk {
	var chunks []writeChunk
	shards, groups := byShard(b, events, idx)
	for g, sh := range shards {
		for rest := groups[g]; len(rest) > 0; {
			n := min(len(rest), scriptChunk)
			chunks = append(chunks, writeChunk{sh, rest[:n]})
			rest = rest[n:]
		}
	}
	return chunks
}

// markUnavailable sets an EUNAVAILABLE error with an outcome on the
// results of idx.
func markUnavailable(results []WriteResult, idx []int, outcome, msg string) {
	for _, i := range idx {
		results[i] = WriteResult{Member: results[i].Member, Err: &Error{Code: EUNAVAILABLE, Outcome: outcome, Message: msg}}
	}
}

// scriptChunk is the most events one script call applies. A call blocks
// Redis while it runs (tens of microseconds per event), so a large batch is
// sent as several calls and other clients are served in between.
const scriptChunk = 100

// applyRetries bounds the calls after the first: each of the four stop
// replies that list or prepare something (unbuilt windows, originals,
// rounds, cohorts) is answered once in the usual case, whatever the order.
const applyRetries = 4

// applyChunk runs apply.lua for events[idx...] and stores their results.
func (s *Store) applyChunk(ctx context.Context, b *Board, shard int, events []Event, idx []int, results []WriteResult, opts ApplyOptions) error {
	if b.Sharded() {
		opts.NoRanks = true // a shard knows its own ranks only: Apply ranks on all shards after
	}
	var rounds []string        // league rounds apply.lua asked for
	var originals []viewPeriod // duplicates' original periods it asked for
	for attempt := 0; ; attempt++ {
		now, err := s.Now(ctx)
		if err != nil {
			return NotApplied(err)
		}
		keys, args := s.applyRequest(b, shard, events, idx, now, opts, rounds, originals)
		local := s.clock()
		script := applyScript
		if s.applyOverride != nil {
			script = s.applyOverride
		}
		val, err := s.runWrite(ctx, script, allKeyed(events, idx), keys, args...)
		if err != nil {
			return err
		}
		raw, ok := val.([]any)
		if !ok {
			return Errorf(EINTERNAL, "apply.lua answered %T", val)
		}
		rep, err := decodeApply(b, events, idx, raw, !opts.NoRanks)
		if err != nil {
			return err
		}
		s.learnNow(rep.nowMS, local)
		if rep.status == applyUnbuilt && attempt < applyRetries {
			// Today's window (of the board or of a segment board) was never
			// prepared: build them, then apply.
			for _, u := range rep.unbuilt {
				if err := s.ensureWindowID(ctx, b, u.view, u.seg, u.window); err != nil {
					return NotApplied(err) // the unbuilt answer applied nothing
				}
			}
			continue
		}
		if rep.status == applyOriginals && attempt < applyRetries {
			// A duplicate answered, the first time, periods no longer
			// around now (its id outlived them): list them too.
			originals = append(originals, rep.origs...)
			continue
		}
		if rep.status == applyRounds && attempt < applyRetries {
			// A member's last round, whose outcome sets its tier, was not
			// listed: list it too.
			rounds = append(rounds, rep.rounds...)
			continue
		}
		if rep.status == applyCohorts && attempt < applyRetries {
			// A member's last cohort, whose outcome sets its tier, is not
			// decided yet: decide it in bounded calls, then apply.
			if err := s.decideCohorts(ctx, b, shard, rep.cohorts); err != nil {
				return NotApplied(err)
			}
			continue
		}
		switch {
		case rep.status == applyDone:
		case attempt < applyRetries:
			continue // the clock estimate was off; periods around Redis's now next time
		case rep.status == applyOriginals:
			return &Error{Code: EUNAVAILABLE, Outcome: OutcomeNotApplied, Message: "a repeated event's original periods kept changing; these events were not applied; try again"}
		default:
			return Errorf(EINTERNAL, "could not agree on the current period with Redis")
		}
		for j, i := range idx {
			results[i] = rep.results[j]
		}
		return nil
	}
}

// allKeyed reports whether every event of idx carries an idempotency id,
// so that sending their call twice cannot count any of them twice.
func allKeyed(events []Event, idx []int) bool {
	for _, i := range idx {
		if events[i].ID == "" {
			return false
		}
	}
	return true
}

// nowMargin is how far from a period's boundary the estimate of Redis's now
// must be for a call to list that period alone: the estimate is learned
// from the last reply, so it is off by about a call's duration. Nearer a
// boundary the neighbour is listed too; an estimate off by more costs a
// retry (apply.lua answers -1 and Redis's now).
const nowMargin = 30 * time.Second

// periodRows lists the candidate current periods of a calendar view around
// now (the current one, and its neighbour within nowMargin of a boundary)
// and the periods of every explicit event time.
func (s *Store) periodRows(b *Board, v View, events []Event, idx []int, now time.Time) []periodEntry {
	cal := s.cfg.Calendar
	var rows []periodEntry
	seen := map[string]bool{}
	add := func(p Period) {
		if !seen[p.ID] {
			seen[p.ID] = true
			rows = append(rows, s.entry(b, v, p))
		}
	}
	cur := cal.PeriodAt(v, now)
	add(cur)
	if v.Kind != All {
		if now.Sub(cur.Start) < nowMargin {
			add(cal.Prev(v, cur))
		}
		if cur.End.Sub(now) < nowMargin {
			add(cal.Next(v, cur))
		}
	}
events:
	for _, i := range idx {
		at := events[i].At
		if at.IsZero() {
			continue
		}
		ms := at.UnixMilli()
		for _, r := range rows {
			if ms >= r.startMS && ms < r.endMS {
				continue events
			}
		}
		add(cal.PeriodAt(v, at))
	}
	return rows
}

// windowRows lists consecutive windows, by their last day, from the earliest
// event's day (or yesterday) to the day after tomorrow by the estimate of
// Redis's clock, so the script finds today's and tomorrow's windows and
// every window an event's day belongs to.
func (s *Store) windowRows(b *Board, v View, events []Event, idx []int, now time.Time) []periodEntry {
	cal := s.cfg.Calendar
	cur, first := s.firstWindow(v, events, idx, now)
	last := cal.Shift(v, cur, 2)
	var rows []periodEntry
	for p := first; !p.End.After(last.End); p = cal.Next(v, p) {
		rows = append(rows, s.entry(b, v, p))
	}
	return rows
}

// firstWindow answers the window of view v holding now (by the estimate
// of Redis's clock) and the earliest window the batch reaches: yesterday's,
// or the window ending on the earliest explicit event day before it.
func (s *Store) firstWindow(v View, events []Event, idx []int, now time.Time) (cur, first Period) {
	cal := s.cfg.Calendar
	cur = cal.PeriodAt(v, now)
	first = cal.Prev(v, cur)
	for _, i := range idx {
		if at := events[i].At; !at.IsZero() && at.Before(first.End) {
			if w := cal.PeriodAt(v, at); w.End.Before(first.End) {
				first = w
			}
		}
	}
	return cur, first
}

// dayRows lists the day totals around now and of every explicit event
// time, and those apply.lua reads to check the windows an event's day is
// in that are not built (see derive there): for each rolling view of N
// days, from the earliest event's day or yesterday d to the day after
// tomorrow T+2, and the days d-N+1 .. T-N+2 that leave the windows in
// between; every day from d-N+1 when 0 is outside [min, max].
func (s *Store) dayRows(b *Board, events []Event, idx []int, now time.Time) []periodEntry {
	rows := s.periodRows(b, dayTotals, events, idx, now)
	cal := s.cfg.Calendar
	seen := make(map[string]bool, len(rows))
	for _, r := range rows {
		seen[r.period.ID] = true
	}
	days := func(from, to Period) {
		for p := from; !p.Start.After(to.Start); p = cal.Next(dayTotals, p) {
			if !seen[p.ID] {
				seen[p.ID] = true
				rows = append(rows, s.entry(b, dayTotals, p))
			}
		}
	}
	dayOf := func(t time.Time) Period { return cal.PeriodAt(dayTotals, t) }
	for _, v := range b.Views {
		if v.Kind != Window {
			continue
		}
		cur, first := s.firstWindow(v, events, idx, now)
		last := cal.Shift(dayTotals, dayOf(cur.End.Add(-time.Millisecond)), 2)
		days(dayOf(first.End.Add(-time.Millisecond)), last)
		if b.Min > 0 || b.Max < 0 {
			days(dayOf(first.Start), last)
		} else {
			days(dayOf(first.Start), cal.Next(dayTotals, dayOf(cur.Start)))
		}
	}
	return rows
}

// asInt reads an integer reply (Lua numbers arrive as integers).
func asInt(v any) int64 {
	switch x := v.(type) {
	case int64:
		return x
	case string:
		n, _ := parseInt(x)
		return n
	}
	return 0
}
