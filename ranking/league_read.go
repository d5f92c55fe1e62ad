package ranking

import (
	"context"
	_ "embed"
	"errors"
	"slices"
	"sync"
	"time"
)

// The cohort.lua protocol and the league reads built on it: a round's
// overview, one cohort, one member's cohort. Each is one call.

//go:embed scripts/cohort.lua
var cohortLua string

var cohortScript = newScript(cohortLua)

// MaxOverviewCohorts bounds the cohorts an overview lists per tier; a
// round of a million members has tens of thousands.
const MaxOverviewCohorts = 200

// MaxCohortNumber bounds a cohort number, so that it stays within its
// tier's range of placement numbers (2^32 per tier).
const MaxCohortNumber = 1<<31 - 1

// Zone names of a cohort member (contract 16).
const (
	ZonePromotion = "promotion"
	ZoneSafe      = "safe"
	ZoneDemotion  = "demotion"
)

// Outcomes of a decided cohort's members.
const (
	OutcomePromoted = "promoted"
	OutcomeStayed   = "stayed"
	OutcomeDemoted  = "demoted"
)

// LeagueRound is the overview of one round of a board's league.
type LeagueRound struct {
	Board  *Board
	Round  Period
	Closed bool      // the round's end has passed on Redis's clock
	Now    time.Time // Redis's clock at the read
	Tiers  []LeagueTier
}

// LeagueTier is one tier of a round.
type LeagueTier struct {
	Tier
	Level   int // 1 = lowest
	Members int // placed and not removed
	Seats   int // placements made (removals do not free a seat)
	// Cohorts lists the tier's first MaxOverviewCohorts cohorts; NCohorts
	// counts them all.
	Cohorts  []LeagueCohort
	NCohorts int
}

// LeagueCohort is one cohort in an overview.
type LeagueCohort struct {
	Number  int
	Members int
	Decided bool
}

// Cohort is one cohort of a round with its standings.
type Cohort struct {
	Board   *Board
	Round   Period
	Tier    Tier
	Level   int
	Number  int
	Closed  bool
	Decided bool
	Now     time.Time
	// Promote and Demote are the zone sizes for this cohort's members.
	Promote, Demote int
	Entries         []CohortEntry
}

// CohortEntry is one member of a cohort: its row, zone and, once the
// cohort is decided, its outcome ("" before).
type CohortEntry struct {
	Entry
	Zone    string
	Outcome string
}

// LeagueStanding is one member's place in a round.
type LeagueStanding struct {
	Cohort     *Cohort
	Tier       Tier
	Level      int
	Number     int // the cohort
	Rank       int64
	Score      int64
	CohortSize int    // members in the cohort
	Zone       string // ZonePromotion, ZoneSafe or ZoneDemotion
	Outcome    string // "" while undecided
	// NextTier is the tier the member plays next: by its outcome once
	// decided, else by its zone now.
	NextTier Tier
}

// leagueRound resolves a board's league and a round ("" = the round
// holding now by the estimate of Redis's clock).
func (s *Store) leagueRound(ctx context.Context, boardID, round string) (*Board, Period, error) {
	b, err := s.board(boardID)
	if err != nil {
		return nil, Period{}, err
	}
	l := b.League
	if l == nil {
		return nil, Period{}, Errorf(ENOTFOUND, "board %q has no league", boardID)
	}
	lv := l.leagueView()
	if round == "" {
		now, err := s.Now(ctx)
		if err != nil {
			return nil, Period{}, err
		}
		return b, s.cfg.Calendar.PeriodAt(lv, now), nil
	}
	p, err := s.cfg.Calendar.ParsePeriod(View{Name: l.Cycle.Name, Kind: l.Cycle.Kind}, round)
	if err != nil {
		return nil, Period{}, err
	}
	return b, p, nil
}

// Cohort numbers on a sharded board (contract 17): each shard fills its
// own cohorts, numbered 1, 2, ... per tier on the shard, and the number a
// cohort shows is (c-1)×shards + shard + 1 for shard's cohort c. Numbers
// never change once given (a placement on one shard moves no number of
// another) and stay dense: members spread evenly over the shards, so the
// shards' cohort counts differ by about one and the gaps are at the end of
// a tier's numbers. A number nobody was placed in reads as no cohort.

// cohortNumber is the number shard's cohort local shows.
func cohortNumber(b *Board, shard, local int) int {
	if !b.Sharded() || local < 1 {
		return local
	}
	return (local-1)*b.Shards + shard + 1
}

// cohortOnShard is the shard and the shard's own number of cohort number.
func cohortOnShard(b *Board, number int) (shard, local int) {
	if !b.Sharded() {
		return 0, number
	}
	return (number - 1) % b.Shards, (number-1)/b.Shards + 1
}

// cohortKeys are cohort.lua's KEYS for a round on one shard.
func (s *Store) cohortKeys(k boardKeys, round string) []string {
	return []string{k.period(leagueViewName, round), k.leaguePlaces(round), k.leagueRound(round), k.names()}
}

// cohortRequest builds cohort.lua's call for a cohort (member == "") or
// for a member's cohort, on shard (numbers are the shard's own).
func (s *Store) cohortRequest(b *Board, shard int, round string, level, number int, member string) (keys []string, args []any) {
	k := s.shardKeys(b, shard)
	if member != "" {
		return s.cohortKeys(k, round), []any{"m", member}
	}
	return s.cohortKeys(k, round), []any{"c", itoa(int64(level)), itoa(int64(number))}
}

// overviewRequest builds cohort.lua's overview call on shard.
func (s *Store) overviewRequest(b *Board, shard int, round string) (keys []string, args []any) {
	return s.cohortKeys(s.shardKeys(b, shard), round), []any{"o", itoa(int64(len(b.League.Tiers))), itoa(int64(b.League.CohortSize)), itoa(MaxOverviewCohorts)}
}

// League reads the overview of a round: "" is the current round; any
// period form of the cycle view names one. A sharded board's overview
// merges its shards' (one call each, at once): seats, members and
// cohorts summed, the first MaxOverviewCohorts cohorts by number.
func (s *Store) League(ctx context.Context, boardID, round string) (*LeagueRound, error) {
	b, p, err := s.leagueRound(ctx, boardID, round)
	if err != nil {
		return nil, err
	}
	overview := func(shard int) (*LeagueRound, error) {
		keys, args := s.overviewRequest(b, shard, p.ID)
		raw, err := s.readsOf(b).run(ctx, cohortScript, keys, args...).Slice()
		if err != nil {
			return nil, wrapRedis(err)
		}
		return decodeOverview(b, p, raw)
	}
	if !b.Sharded() {
		return overview(0)
	}
	parts := make([]*LeagueRound, b.Shards)
	errs := make([]error, b.Shards)
	var wg sync.WaitGroup
	for i := range parts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			parts[i], errs[i] = overview(i)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return mergeOverviews(b, parts), nil
}

// mergeOverviews merges the shards' overviews of a round, numbering each
// shard's cohorts as the board shows them.
func mergeOverviews(b *Board, parts []*LeagueRound) *LeagueRound {
	out := &LeagueRound{Board: b, Round: parts[0].Round, Now: parts[0].Now, Closed: parts[0].Closed}
	for li, t := range parts[0].Tiers {
		lt := LeagueTier{Tier: t.Tier, Level: t.Level}
		for sh, part := range parts {
			pt := part.Tiers[li]
			lt.Seats += pt.Seats
			lt.Members += pt.Members
			lt.NCohorts += pt.NCohorts
			for _, c := range pt.Cohorts {
				c.Number = cohortNumber(b, sh, c.Number)
				lt.Cohorts = append(lt.Cohorts, c)
			}
		}
		slices.SortFunc(lt.Cohorts, func(x, y LeagueCohort) int { return x.Number - y.Number })
		lt.Cohorts = lt.Cohorts[:min(len(lt.Cohorts), MaxOverviewCohorts)]
		out.Tiers = append(out.Tiers, lt)
	}
	return out
}

// decodeOverview decodes cohort.lua's overview reply.
func decodeOverview(b *Board, p Period, raw []any) (*LeagueRound, error) {
	bad := func() (*LeagueRound, error) { return nil, Errorf(EINTERNAL, "cohort.lua: malformed overview %v", raw) }
	if len(raw) < 1 {
		return bad()
	}
	now := time.UnixMilli(asInt(raw[0]))
	r := &LeagueRound{Board: b, Round: p, Now: now, Closed: !now.Before(p.End)}
	k := 1
	for i, t := range b.League.Tiers {
		if k+2 >= len(raw) {
			return bad()
		}
		lt := LeagueTier{Tier: t, Level: i + 1, Seats: int(asInt(raw[k])), Members: int(asInt(raw[k+1]))}
		lt.NCohorts = (lt.Seats + b.League.CohortSize - 1) / b.League.CohortSize
		listed := int(asInt(raw[k+2]))
		k += 3
		if k+2*listed > len(raw) {
			return bad()
		}
		for c := 1; c <= listed; c++ {
			lt.Cohorts = append(lt.Cohorts, LeagueCohort{Number: c, Members: int(asInt(raw[k])), Decided: asInt(raw[k+1]) == 1})
			k += 2
		}
		r.Tiers = append(r.Tiers, lt)
	}
	return r, nil
}

// leagueCohort resolves a cohort's address: its board, round ("" =
// current) and tier level, the number checked.
func (s *Store) leagueCohort(ctx context.Context, boardID, round, tierID string, number int) (*Board, Period, int, error) {
	b, p, err := s.leagueRound(ctx, boardID, round)
	if err != nil {
		return nil, Period{}, 0, err
	}
	_, level, ok := b.League.Tier(tierID)
	if !ok {
		return nil, Period{}, 0, Errorf(ENOTFOUND, "board %q has no tier %q", boardID, tierID)
	}
	if number < 1 || number > MaxCohortNumber {
		return nil, Period{}, 0, Errorf(EINVALID, "a cohort number is from 1 to %d, got %d", MaxCohortNumber, number)
	}
	return b, p, level, nil
}

// Cohort reads cohort number of tier tierID in a round ("" = current),
// with each member's zone and, once decided, outcome. A cohort nobody was
// placed in is ENOTFOUND.
func (s *Store) Cohort(ctx context.Context, boardID, round, tierID string, number int) (*Cohort, error) {
	b, p, level, err := s.leagueCohort(ctx, boardID, round, tierID, number)
	if err != nil {
		return nil, err
	}
	shard, local := cohortOnShard(b, number)
	c, err := s.readCohort(ctx, b, shard, p, level, local, "")
	if err != nil {
		return nil, err
	}
	if len(c.Entries) == 0 {
		return nil, Errorf(ENOTFOUND, "round %s of board %q has no cohort %d in tier %s", p.ID, boardID, number, tierID)
	}
	return c, nil
}

// readCohort runs one cohort.lua read on shard: the shard's cohort number
// of tier level, or (level 0) the cohort member played in; the cohort
// read carries the number the board shows.
func (s *Store) readCohort(ctx context.Context, b *Board, shard int, p Period, level, number int, member string) (*Cohort, error) {
	keys, args := s.cohortRequest(b, shard, p.ID, level, number, member)
	raw, err := s.readsOf(b).run(ctx, cohortScript, keys, args...).Slice()
	if err != nil {
		return nil, wrapRedis(err)
	}
	c, err := s.decodeCohort(b, p, raw)
	if err == nil {
		c.Number = cohortNumber(b, shard, c.Number)
	}
	return c, err
}

// LeagueMember reads a member's place in a round ("" = current):
// ENOTFOUND when it did not play that round.
func (s *Store) LeagueMember(ctx context.Context, boardID, round, member string) (*LeagueStanding, error) {
	if err := ValidateMember(member); err != nil {
		return nil, err
	}
	b, p, err := s.leagueRound(ctx, boardID, round)
	if err != nil {
		return nil, err
	}
	c, err := s.readCohort(ctx, b, ShardOf(member, b.Shards), p, 0, 0, member)
	if err != nil {
		return nil, err
	}
	for _, e := range c.Entries {
		if e.Member != member {
			continue
		}
		st := &LeagueStanding{Cohort: c, Tier: c.Tier, Level: c.Level, Number: c.Number, Rank: e.Rank, Score: e.Score,
			CohortSize: len(c.Entries), Zone: e.Zone, Outcome: e.Outcome}
		next := c.Level
		switch {
		case e.Outcome == OutcomePromoted || (e.Outcome == "" && e.Zone == ZonePromotion):
			next++
		case e.Outcome == OutcomeDemoted || (e.Outcome == "" && e.Zone == ZoneDemotion):
			next--
		}
		st.NextTier = b.League.Tiers[next-1]
		return st, nil
	}
	return nil, Errorf(ENOTFOUND, "member %q did not play round %s of board %q", member, p.ID, b.ID)
}

// decodeCohort decodes cohort.lua's cohort reply, ranking its entries and
// drawing the zones.
func (s *Store) decodeCohort(b *Board, p Period, raw []any) (*Cohort, error) {
	if len(raw) < 4 || (len(raw)-4)%4 != 0 {
		return nil, Errorf(EINTERNAL, "cohort.lua: malformed reply %v", raw)
	}
	l := b.League
	now := time.UnixMilli(asInt(raw[0]))
	c := &Cohort{Board: b, Round: p, Level: int(asInt(raw[1])), Number: int(asInt(raw[2])), Decided: asInt(raw[3]) == 1,
		Now: now, Closed: !now.Before(p.End)}
	if c.Level < 1 {
		return c, nil
	}
	c.Level = min(c.Level, len(l.Tiers))
	c.Tier = l.Tiers[c.Level-1]
	flat := make([]any, 0, (len(raw)-4)/4*3)
	var outcomes []string
	for k := 4; k+3 < len(raw); k += 4 {
		flat = append(flat, raw[k], raw[k+1], raw[k+2])
		o, _ := raw[k+3].(string)
		outcomes = append(outcomes, o)
	}
	entries, err := s.entries(b, l.leagueView(), int64(1), 0, flat)
	if err != nil {
		return nil, Errorf(EINTERNAL, "cohort.lua: %v", err)
	}
	n := len(entries)
	c.Promote, c.Demote = l.Zones(c.Level, n)
	for i, e := range entries {
		ce := CohortEntry{Entry: e, Zone: ZoneSafe}
		switch {
		case e.Rank <= int64(c.Promote):
			ce.Zone = ZonePromotion
		case e.Rank > int64(n-c.Demote):
			ce.Zone = ZoneDemotion
		}
		// A decided member's zone is the one its outcome was decided in:
		// a removal since then moves ranks, not outcomes.
		switch outcomes[i] {
		case "1":
			ce.Outcome, ce.Zone = OutcomePromoted, ZonePromotion
		case "0":
			ce.Outcome, ce.Zone = OutcomeStayed, ZoneSafe
		case "-1":
			ce.Outcome, ce.Zone = OutcomeDemoted, ZoneDemotion
		case "":
		default:
			return nil, Errorf(EINTERNAL, "cohort.lua: outcome %q", outcomes[i])
		}
		c.Entries = append(c.Entries, ce)
	}
	return c, nil
}
