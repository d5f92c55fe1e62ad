package ranking_test

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/standings/standings/ranking"
	"github.com/standings/standings/ranking/redistest"
)

// movesModel is the brute-force reference for overtakes on increment
// boards: a member that rose within the top MovesTop passed the member now
// right behind it (the first strictly worse in rank order).
type movesModel struct {
	shared bool
	unitMS int64
	score  map[string]int64
	at     map[string]int64 // time unit of the member's last change (ties: first)
	moves  []string         // newest last: "member passed rank"
}

type movesRow struct {
	m     string
	score int64
	at    int64
}

// less orders rows as the sorted set does: score desc, then (ties: first)
// who reached it first, then member id.
func (mm *movesModel) less(a, b movesRow) int {
	if c := cmp.Compare(b.score, a.score); c != 0 {
		return c
	}
	if !mm.shared {
		if c := cmp.Compare(a.at, b.at); c != 0 {
			return c
		}
	}
	return strings.Compare(a.m, b.m)
}

// key is a row's sort key without the member (the code).
func (mm *movesModel) better(a, b movesRow) bool {
	if a.score != b.score {
		return a.score > b.score
	}
	return !mm.shared && a.at < b.at
}

func (mm *movesModel) rows() []movesRow {
	var out []movesRow
	for m, s := range mm.score {
		out = append(out, movesRow{m, s, mm.at[m]})
	}
	slices.SortFunc(out, mm.less)
	return out
}

func (mm *movesModel) apply(member string, value, atMS int64) {
	old, had := movesRow{member, mm.score[member], mm.at[member]}, false
	if _, ok := mm.score[member]; ok {
		had = true
	}
	if value == 0 {
		return
	}
	mm.score[member] += value
	if u := atMS / mm.unitMS; u > mm.at[member] || !had {
		mm.at[member] = u
	}
	if !had {
		return
	}
	now := movesRow{member, mm.score[member], mm.at[member]}
	if !mm.better(now, old) {
		return
	}
	rows := mm.rows()
	rank, was, behind := int64(0), int64(0), ""
	for i, r := range rows {
		if r.m == member {
			rank = int64(i + 1)
			if mm.shared {
				rank = 1
				for _, o := range rows {
					if mm.better(o, now) {
						rank++
					}
				}
			}
		}
		if mm.better(r, old) || r.m == member {
			was++ // those better than its old place, itself included
		}
	}
	for _, r := range rows {
		if r.m != member && !mm.better(r, now) && !(r.score == now.score && (mm.shared || r.at == now.at)) {
			if !mm.better(old, r) { // it was not behind the member already
				behind = r.m
			}
			break
		}
	}
	if rank <= ranking.MovesTop && was > rank && behind != "" {
		mm.moves = append(mm.moves, fmt.Sprintf("%s passed %s for #%d", member, behind, rank))
	}
}

// movesBackend is a Redis to run the overtake tests on, and how to move
// its clock on between writes.
type movesBackend struct {
	Name   string
	Client func(t *testing.T) (redis.UniversalClient, func())
}

// movesBackends are miniredis (its clock stepped 700 ms per write) and
// real Redis.
func movesBackends() []movesBackend {
	return []movesBackend{
		{"miniredis", func(t *testing.T) (redis.UniversalClient, func()) {
			at := time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)
			m, rdb := MustMiniredis(t, at)
			return rdb, func() { at = at.Add(700 * time.Millisecond); m.SetTime(at) }
		}},
		{"redis", func(t *testing.T) (redis.UniversalClient, func()) { return redistest.Client(t), func() {} }},
	}
}

// newMovesModels is a model of each of the views day and all of b.
func newMovesModels(b *ranking.Board, ties string) map[string]*movesModel {
	models := map[string]*movesModel{}
	for _, v := range []string{"day", "all"} {
		unit := map[string]int64{"1ms": 1, "1s": 1000, "1min": 60000, "1h": 3600000, "": 1}[b.TieResolution(v)]
		models[v] = &movesModel{shared: ties == "shared", unitMS: unit, score: map[string]int64{}, at: map[string]int64{}}
	}
	return models
}

// TestMovesReferenceModel: random increments with many ties, one event per
// write; the overtakes read back equal the brute-force model's, newest
// first, on miniredis and real Redis, for ties first and shared.
func TestMovesReferenceModel(t *testing.T) {
	ranking.GuardKeys(t)
	for _, be := range movesBackends() {
		for _, ties := range []string{"first", "shared"} {
			t.Run(be.Name+"/"+ties, func(t *testing.T) {
				ctx := context.Background()
				rdb, step := be.Client(t)
				cfg := MustConfig(t, "boards: [{id: g, ties: "+ties+", views: [day, all]}]\n")
				b, _ := cfg.Board("g")
				s := newStore(t, rdb, cfg, nil)
				models := newMovesModels(b, ties)
				r := rand.New(rand.NewPCG(5, 6))
				for range 400 {
					m := fmt.Sprintf("m%02d", r.IntN(25))
					val := int64(r.IntN(4))
					res, err := s.Write(ctx, "g", ranking.Event{Member: m, Value: val, Name: "N" + m})
					if err != nil {
						t.Fatal(err)
					}
					for _, mm := range models {
						mm.apply(m, val, res.At.UnixMilli())
					}
					step()
				}
				for v, mm := range models {
					got, p, err := s.Moves(ctx, "g", v, ranking.MaxMoves)
					if err != nil {
						t.Fatal(err)
					}
					var lines []string
					for _, mv := range got {
						lines = append(lines, fmt.Sprintf("%s passed %s for #%d", mv.Member, mv.Passed, mv.Rank))
						if mv.Name != "N"+mv.Member || mv.PassedName != "N"+mv.Passed || mv.Period != p.ID {
							t.Fatalf("%s: names or period %+v", v, mv)
						}
					}
					want := slices.Clone(mm.moves)
					slices.Reverse(want)
					want = want[:min(len(want), ranking.MaxMoves)]
					if strings.Join(lines, "\n") != strings.Join(want, "\n") {
						t.Fatalf("%s: %d moves\n%s\nmodel %d\n%s", v, len(lines), strings.Join(lines, "\n"), len(want), strings.Join(want, "\n"))
					}
					// PassedBy finds the newest move that passed a member.
					for _, mv := range got[:min(5, len(got))] {
						pb, err := s.PassedBy(ctx, "g", v, mv.Passed)
						if err != nil {
							t.Fatal(err)
						}
						var first ranking.Move
						for _, o := range got {
							if o.Passed == mv.Passed {
								first = o
								break
							}
						}
						if pb == nil || *pb != first {
							t.Fatalf("%s: PassedBy(%s) = %+v, want %+v", v, mv.Passed, pb, first)
						}
						// The rank card reads the same in its snapshot.
						rc, err := s.RankCard(ctx, "g", v, mv.Passed, ranking.RankCardQuery{Around: 1, History: 2})
						if err != nil {
							t.Fatal(err)
						}
						if rc.PassedBy == nil || *rc.PassedBy != first {
							t.Fatalf("%s: RankCard(%s).PassedBy = %+v, want %+v", v, mv.Passed, rc.PassedBy, first)
						}
					}
					if pb, err := s.PassedBy(ctx, "g", v, "nobody"); err != nil || pb != nil {
						t.Fatalf("%s: PassedBy(nobody) = %v, %v", v, pb, err)
					}
					if len(want) < 20 {
						t.Fatalf("%s: only %d moves: the workload does not exercise them", v, len(want))
					}
				}
				if _, _, err := s.Moves(ctx, "g", "day", 0); ranking.ErrorCode(err) != ranking.EINVALID {
					t.Errorf("limit 0: %v", err)
				}
			})
		}
	}
}

// TestMovesWithoutRanks: batches written without ranks still record every
// overtake exactly. With more members than MovesTop, most writes land
// below the top, where the script skips the rank; those that reach it
// must still be found, in the same order as the per-event model.
func TestMovesWithoutRanks(t *testing.T) {
	ranking.GuardKeys(t)
	for _, be := range movesBackends() {
		for _, ties := range []string{"first", "shared"} {
			t.Run(be.Name+"/"+ties, func(t *testing.T) {
				ctx := context.Background()
				rdb, step := be.Client(t)
				cfg := MustConfig(t, "boards: [{id: g, ties: "+ties+", min_score: -1000, views: [day, all]}]\n")
				b, _ := cfg.Board("g")
				s := newStore(t, rdb, cfg, nil)
				models := newMovesModels(b, ties)
				r := rand.New(rand.NewPCG(8, 9))
				for round := range 40 {
					batch := make([]ranking.Event, 1+r.IntN(100))
					for i := range batch {
						// 140 members, most of them rarely: the top 100 boundary
						// moves both ways (scores also fall), and writes land on
						// both sides of it.
						m := fmt.Sprintf("m%03d", r.IntN(140))
						if r.IntN(2) == 0 {
							m = fmt.Sprintf("m%03d", r.IntN(40))
						}
						batch[i] = ranking.Event{Member: m, Value: int64(r.IntN(6) - 2), Name: "N" + m}
					}
					res, err := s.Apply(ctx, "g", batch, ranking.ApplyOptions{NoRanks: true})
					if err != nil {
						t.Fatal(err)
					}
					for i, ev := range batch {
						if res[i].Err != nil {
							t.Fatal(res[i].Err)
						}
						for _, vs := range res[i].Views {
							if vs.Rank != 0 {
								t.Fatalf("a rank without ranks: %+v", res[i])
							}
						}
						for _, mm := range models {
							mm.apply(ev.Member, ev.Value, res[i].At.UnixMilli())
						}
					}
					step()
					if round%8 != 7 {
						continue
					}
					for v, mm := range models {
						got, _, err := s.Moves(ctx, "g", v, ranking.MaxMoves)
						if err != nil {
							t.Fatal(err)
						}
						var lines []string
						for _, mv := range got {
							lines = append(lines, fmt.Sprintf("%s passed %s for #%d", mv.Member, mv.Passed, mv.Rank))
						}
						want := slices.Clone(mm.moves)
						slices.Reverse(want)
						want = want[:min(len(want), ranking.MaxMoves)]
						if strings.Join(lines, "\n") != strings.Join(want, "\n") {
							t.Fatalf("round %d %s: %d moves\n%s\nmodel %d\n%s", round, v, len(lines), strings.Join(lines, "\n"), len(want), strings.Join(want, "\n"))
						}
					}
				}
				for v, mm := range models {
					if len(mm.moves) < 50 {
						t.Fatalf("%s: only %d moves: the workload does not exercise them", v, len(mm.moves))
					}
					if len(mm.score) <= ranking.MovesTop {
						t.Fatalf("%s: %d members, not more than the top", v, len(mm.score))
					}
				}
			})
		}
	}
}

// TestMovesWithoutRanksTopShrinks: within one unranked batch, a member of
// the top 100 falls out of it, so the score at rank 100 gets worse; a
// member then rising to just above the new rank 100 passed someone, and
// the script must see the new boundary, not the one it read first.
func TestMovesWithoutRanksTopShrinks(t *testing.T) {
	ranking.GuardKeys(t)
	for _, be := range backends() {
		for _, ties := range []string{"first", "shared"} {
			t.Run(be.Name+"/"+ties, func(t *testing.T) {
				ctx := context.Background()
				rdb := be.Client(t)
				cfg := MustConfig(t, "boards: [{id: g, ties: "+ties+", views: [all]}]\n")
				s := newStore(t, rdb, cfg, nil)
				// a000 .. a100 at 1000, 1002, ..., 1200 (rank 100 is a001 at
				// 1002), and x at 50.
				var setup []ranking.Event
				for i := range 101 {
					setup = append(setup, ranking.Event{Member: fmt.Sprintf("a%03d", i), Value: 1000 + 2*int64(i)})
				}
				setup = append(setup, ranking.Event{Member: "x", Value: 50})
				if _, err := s.Apply(ctx, "g", setup, ranking.ApplyOptions{NoRanks: true}); err != nil {
					t.Fatal(err)
				}
				res, err := s.Apply(ctx, "g", []ranking.Event{
					{Member: "a050", Value: 1},    // rises within the top: the script reads rank 100's score
					{Member: "a100", Value: -300}, // leaves the top: a000 (1000) is now rank 100
					{Member: "x", Value: 951},     // 1001: rank 100, passing a000
				}, ranking.ApplyOptions{NoRanks: true})
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range res {
					if r.Err != nil {
						t.Fatal(r.Err)
					}
				}
				got, _, err := s.Moves(ctx, "g", "all", ranking.MaxMoves)
				if err != nil {
					t.Fatal(err)
				}
				if len(got) != 1 || got[0].Member != "x" || got[0].Passed != "a000" || got[0].Rank != 100 {
					t.Fatalf("moves %+v, want x passed a000 for #100", got)
				}
			})
		}
	}
}
