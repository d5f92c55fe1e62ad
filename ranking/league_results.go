package ranking

import (
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/gowebpki/jcs"
	"github.com/redis/go-redis/v9"
)

// League results: once a round's cohorts are decided, the league recorder
// (Store.DecideLeagues) records each cohort's result exactly once, as the
// period results of section 9 are recorded: Go reads the cohort
// (cohort.lua), builds the result and its digest with recorded_at =
// Redis's now at that read, and leaguerecord.lua stores it only if the
// cohort is still as read; the count of recorded cohorts reaching the
// round's cohorts appends league.final to the board's outbox, which
// RelayResults takes to the results stream and the webhooks.
//
// On a sharded board each shard records its own cohorts (its result keys,
// listings and counters under its tag, the result's "cohort" the number
// the board shows) and marks its part of the round final; league.final,
// the tiers' counts summed over the shards, is then appended to the
// board's own outbox once, by one step on the board's tag (finalLeague).

//go:embed scripts/leaguerecord.lua
var leagueRecordLua string

var leagueRecordScript = newScript(leagueRecordLua)

// CohortResult is the recorded result of one closed cohort, in the field
// order it is served.
type CohortResult struct {
	Board      string              `json:"board"`
	Round      string              `json:"round"`
	Tier       string              `json:"tier"`
	Cohort     int                 `json:"cohort"`
	Start      string              `json:"start"`
	End        string              `json:"end"`
	RecordedAt string              `json:"recorded_at"`
	AmendedAt  string              `json:"amended_at,omitempty"` // set when a removal amended it
	Entries    []CohortResultEntry `json:"entries"`
	Digest     string              `json:"digest"`
}

// CohortResultEntry is one member of a recorded cohort.
type CohortResultEntry struct {
	Rank    int64           `json:"rank"`
	Member  string          `json:"member"`
	Name    *string         `json:"name"`
	Score   json.RawMessage `json:"score"`
	Outcome string          `json:"outcome"`
}

// Canonical returns the canonical JSON the digest covers: the object
// {"board","cohort","entries","round","tier"} in RFC 8785 (JCS) form, as
// Result.Canonical does for period results.
func (r *CohortResult) Canonical() []byte {
	c := struct {
		Board   string              `json:"board"`
		Cohort  int                 `json:"cohort"`
		Entries []CohortResultEntry `json:"entries"`
		Round   string              `json:"round"`
		Tier    string              `json:"tier"`
	}{r.Board, r.Cohort, r.Entries, r.Round, r.Tier}
	if c.Entries == nil {
		c.Entries = []CohortResultEntry{}
	}
	out, err := jcs.Transform(marshalNoHTML(c))
	if err != nil {
		panic(err) // valid JSON of strings and finite numbers only
	}
	return out
}

// ComputeDigest returns "sha256:" + the hex SHA-256 of Canonical().
func (r *CohortResult) ComputeDigest() string {
	sum := sha256.Sum256(r.Canonical())
	return "sha256:" + hex.EncodeToString(sum[:])
}

// leagueRecord.lua's answers.
const (
	leagueRecorded  = "recorded"
	leagueExists    = "exists"
	leagueUndecided = "undecided"
)

// leagueRecordRequest builds KEYS and ARGV for leaguerecord.lua on shard;
// cohort is the shard's own number, flat holds the (member, code) pairs
// read.
func (s *Store) leagueRecordRequest(b *Board, shard int, round Period, level, cohort int, readNowMS int64, result []byte, flat []any) (keys []string, args []any) {
	l, k, loc := b.League, s.shardKeys(b, shard), s.cfg.Calendar.Location()
	keys = []string{k.period(leagueViewName, round.ID), k.leaguePlaces(round.ID), k.leagueRound(round.ID),
		k.leagueResult(round.ID, level, cohort), k.outbox(), k.leagueRounds()}
	for i := 0; i+1 < len(flat); i += 2 {
		m, _ := flat[i].(string)
		keys = append(keys, k.leagueMemberResults(m))
	}
	for i := 0; i+1 < len(flat); i += 2 {
		m, _ := flat[i].(string)
		keys = append(keys, k.leagueMember(m))
	}
	args = []any{itoa(int64(level)), itoa(int64(cohort)), itoa(readNowMS), string(result),
		itoa(s.entry(b, l.leagueView(), round).expireAt), round.ID, round.Start.In(loc).Format(time.RFC3339),
		round.End.In(loc).Format(time.RFC3339), b.ID, itoa(int64(l.CohortSize)), itoa(int64(len(l.Tiers))), itoa(int64(len(flat) / 2)),
		boolArg(b.Sharded())}
	for _, t := range l.Tiers {
		args = append(args, t.ID)
	}
	return keys, append(args, flat...)
}

// recordCohort records the result of one decided cohort of shard (its
// own number) unless it is recorded already; it reports whether this call
// recorded it.
func (s *Store) recordCohort(ctx context.Context, b *Board, shard int, round Period, level, cohort int) (bool, error) {
	loc := s.cfg.Calendar.Location()
	for attempt := 0; attempt < recordAttempts; attempt++ {
		keys, args := s.cohortRequest(b, shard, round.ID, level, cohort, "")
		raw, err := cohortScript.Run(ctx, s.rdb, keys, args...).Slice()
		if err != nil {
			return false, wrapRedis(err)
		}
		c, err := s.decodeCohort(b, round, raw)
		if err != nil {
			return false, err
		}
		if !c.Decided {
			return false, nil
		}
		r := &CohortResult{Board: b.ID, Round: round.ID, Tier: c.Tier.ID, Cohort: cohortNumber(b, shard, cohort),
			Start: round.Start.In(loc).Format(time.RFC3339), End: round.End.In(loc).Format(time.RFC3339),
			RecordedAt: formatResultTime(asInt(raw[0])), Entries: []CohortResultEntry{}}
		flat := make([]any, 0, 2*len(c.Entries))
		for i, e := range c.Entries {
			var name *string
			if e.Name != "" {
				n := e.Name
				name = &n
			}
			r.Entries = append(r.Entries, CohortResultEntry{Rank: e.Rank, Member: e.Member, Name: name,
				Score: json.RawMessage(b.FormatScore(e.Score)), Outcome: e.Outcome})
			flat = append(flat, raw[4+4*i], raw[5+4*i])
		}
		r.Digest = r.ComputeDigest()
		keys, args = s.leagueRecordRequest(b, shard, round, level, cohort, asInt(raw[0]), marshalNoHTML(r), flat)
		ans, err := leagueRecordScript.Run(ctx, s.rdb, keys, args...).Text()
		if err != nil {
			return false, wrapRedis(err)
		}
		switch ans {
		case leagueRecorded:
			return true, nil
		case leagueExists, leagueUndecided:
			return false, nil
		case recordChanged, recordStale:
			continue
		default:
			return false, Errorf(EINTERNAL, "leaguerecord: unexpected reply %q", ans)
		}
	}
	return false, Errorf(EUNAVAILABLE, "cohort %d of round %s of board %q kept changing while its result was recorded", cohortNumber(b, shard, cohort), round.ID, b.ID)
}

// recordCohorts records the cohorts of a decided round on shard from its
// record cursor on, at most *budget of them; done when the shard's part
// of the round is final.
func (s *Store) recordCohorts(ctx context.Context, b *Board, shard int, round Period, budget *int) (done bool, err error) {
	l := b.League
	fields := []string{"final", "rc"}
	for level := range l.Tiers {
		fields = append(fields, "c:"+itoa(int64(level+1)))
	}
	got, err := s.rdb.HMGet(ctx, s.shardKeys(b, shard).leagueRound(round.ID), fields...).Result()
	if err != nil {
		return false, wrapRedis(err)
	}
	if got[0] != nil {
		return true, nil
	}
	level, cohort := 1, 1
	if rc, ok := got[1].(string); ok {
		if _, err := fmt.Sscanf(rc, "%d:%d", &level, &cohort); err != nil {
			return false, Errorf(EINTERNAL, "league round %s: record cursor %q", round.ID, rc)
		}
	}
	for ; level <= len(l.Tiers); level, cohort = level+1, 1 {
		seats := 0
		if v, ok := got[1+level].(string); ok {
			n, _ := parseInt(v)
			seats = int(n)
		}
		for ; cohort <= (seats+l.CohortSize-1)/l.CohortSize; cohort++ {
			if *budget <= 0 {
				return false, nil
			}
			*budget--
			if _, err := s.recordCohort(ctx, b, shard, round, level, cohort); err != nil {
				return false, err
			}
		}
	}
	return true, nil
}

// LeagueCohortResult returns one cohort's recorded result as stored;
// ENOTFOUND before it is recorded (or once its round's keys expired).
func (s *Store) LeagueCohortResult(ctx context.Context, boardID, round, tierID string, cohort int) (json.RawMessage, error) {
	b, p, level, err := s.leagueCohort(ctx, boardID, round, tierID, cohort)
	if err != nil {
		return nil, err
	}
	shard, local := cohortOnShard(b, cohort)
	val, err := s.rdb.Get(ctx, s.shardKeys(b, shard).leagueResult(p.ID, level, local)).Result()
	if errors.Is(err, redis.Nil) {
		return nil, Errorf(ENOTFOUND, "no result recorded for cohort %d of tier %s in round %s of board %q", cohort, tierID, p.ID, b.ID)
	}
	if err != nil {
		return nil, wrapRedis(err)
	}
	return json.RawMessage(val), nil
}

// leagueFinal is a round's league.final, as leaguerecord.lua writes it on
// a board of one shard.
type leagueFinal struct {
	Board string            `json:"board"`
	Round string            `json:"round"`
	Start string            `json:"start"`
	End   string            `json:"end"`
	Tiers []leagueFinalTier `json:"tiers"`
}

type leagueFinalTier struct {
	Tier     string `json:"tier"`
	Cohorts  int64  `json:"cohorts"`
	Members  int64  `json:"members"`
	Promoted int64  `json:"promoted"`
	Demoted  int64  `json:"demoted"`
}

// finalLeague appends a sharded board's league.final for round to the
// board's own outbox once every shard's part of the round is recorded,
// exactly once (leaguerecord.lua's final step on the board's tag), then
// drops the round from every shard's lr. It reports whether the round is
// final; a shard nobody played on has no part.
func (s *Store) finalLeague(ctx context.Context, b *Board, round Period) (bool, error) {
	l, loc := b.League, s.cfg.Calendar.Location()
	fields := []string{"final"}
	for level := range l.Tiers {
		lv := itoa(int64(level + 1))
		fields = append(fields, "c:"+lv, "nm:"+lv, "np:"+lv, "nd:"+lv)
	}
	f := leagueFinal{Board: b.ID, Round: round.ID, Start: round.Start.In(loc).Format(time.RFC3339), End: round.End.In(loc).Format(time.RFC3339),
		Tiers: make([]leagueFinalTier, len(l.Tiers))}
	for level, t := range l.Tiers {
		f.Tiers[level].Tier = t.ID
	}
	anyone := false
	for i := range b.Shards {
		got, err := s.rdb.HMGet(ctx, s.shardKeys(b, i).leagueRound(round.ID), fields...).Result()
		if err != nil {
			return false, wrapRedis(err)
		}
		played := false
		for level := range l.Tiers {
			c := got[1+4*level : 5+4*level]
			if c[0] != nil {
				played = true
			}
			n := func(v any) int64 {
				x, _ := v.(string)
				k, _ := parseInt(x)
				return k
			}
			ft := &f.Tiers[level]
			ft.Cohorts += (n(c[0]) + int64(l.CohortSize) - 1) / int64(l.CohortSize)
			ft.Members += n(c[1])
			ft.Promoted += n(c[2])
			ft.Demoted += n(c[3])
		}
		if played && got[0] == nil {
			return false, nil // this shard still records its cohorts
		}
		anyone = anyone || played
	}
	// A round nobody's keys hold any more (they expired before the round
	// left lr) has no league.final to write: its own went out before.
	if anyone {
		k := s.keysOf(b)
		keys := []string{k.leagueRound(round.ID), k.outbox()}
		args := []any{"final", round.ID, string(marshalNoHTML(f)), itoa(s.entry(b, l.leagueView(), round).expireAt)}
		if err := leagueRecordScript.Run(ctx, s.rdb, keys, args...).Err(); err != nil {
			return false, wrapRedis(err)
		}
	}
	for i := range b.Shards {
		if err := s.rdb.ZRem(ctx, s.shardKeys(b, i).leagueRounds(), round.ID).Err(); err != nil {
			return false, wrapRedis(err)
		}
	}
	return true, nil
}
