package ranking_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/standings/standings/ranking"
)

// Scored agrees with a Member read (the reference: ENOTFOUND or not) for
// every member of a random workload, in every view, removals included.
func TestScoredAgreesWithMemberReads(t *testing.T) {
	cfg := MustConfig(t, `
boards:
  - id: b
    min_score: -100
    max_score: 100
    views: [hour, day, all, 3d]
`)
	for _, be := range backends() {
		t.Run(be.Name, func(t *testing.T) {
			ctx := context.Background()
			s := newStore(t, be.Client(t), cfg, time.Now)
			rng := rand.New(rand.NewPCG(7, 9))
			var members []string
			for i := range 40 {
				members = append(members, fmt.Sprintf("m%02d", i))
			}
			members = append(members, "never", "", "with space", "ünï")
			for range 120 {
				m := members[rng.IntN(40)]
				// Values may bring a member back to 0: still scored.
				if _, err := s.Write(ctx, "b", ranking.Event{Member: m, Value: int64(rng.IntN(5) - 2)}); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := s.RemoveMember(ctx, "b", "m03"); err != nil {
				t.Fatal(err)
			}
			for _, view := range []string{"hour", "day", "all", "3d"} {
				got, err := s.Scored(ctx, "b", view, ranking.Segment{}, members)
				if err != nil {
					t.Fatal(err)
				}
				for i, m := range members {
					_, err := s.Member(ctx, "b", view, m, ranking.MemberQuery{})
					want := err == nil
					if m == "" {
						want = false
					} else if err != nil && ranking.ErrorCode(err) != ranking.ENOTFOUND {
						t.Fatal(err)
					}
					if got[i] != want {
						t.Errorf("%s %q: scored %v, want %v", view, m, got[i], want)
					}
				}
			}
		})
	}
}

func TestScoredBadInput(t *testing.T) {
	cfg := MustConfig(t, "boards:\n  - id: b\n")
	_, rdb := MustMiniredis(t, time.Now())
	s := newStore(t, rdb, cfg, time.Now)
	ctx := context.Background()
	for name, tc := range map[string]struct {
		board, view string
		n           int
		code        string
	}{
		"unknown board": {"nope", "day", 1, ranking.ENOTFOUND},
		"unknown view":  {"b", "hour", 1, ranking.ENOTFOUND},
		"too many":      {"b", "day", ranking.MaxScored + 1, ranking.EINVALID},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := s.Scored(ctx, tc.board, tc.view, ranking.Segment{}, make([]string, tc.n))
			if ranking.ErrorCode(err) != tc.code {
				t.Errorf("%v, want %s", err, tc.code)
			}
		})
	}
	got, err := s.Scored(ctx, "b", "day", ranking.Segment{}, nil)
	if err != nil || len(got) != 0 {
		t.Errorf("no members: %v %v", got, err)
	}
}
