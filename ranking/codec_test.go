package ranking_test

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/standings/standings/ranking"
	"github.com/standings/standings/ranking/redistest"
)

type codedRow struct {
	member string
	value  int64
	rel    int64
}

// codecBoards spans the configurable range: negative scores, decimals, and
// ranges that push codes right up to 2^53 at every tie resolution.
func codecBoards(t testing.TB) *ranking.Config {
	return MustConfig(t, `
timezone: America/New_York
boards:
  - {id: default, views: [hour, day, week, month, all]}
  - {id: negative, min_score: -1000000, max_score: 1000000, decimals: 3, order: asc, views: [hour, day, week, month, all]}
  - {id: huge, min_score: -4000000000000, max_score: 4000000000000, ties: shared, views: [day, all]}
  - {id: hourly, max_score: 10000000000, views: [hour, day, week, month, all]}
  - {id: fine, max_score: 1000, decimals: 6, views: [hour, week, all]}
`)
}

// extremes returns the rows that stress a view: the worst and best values
// with the earliest and latest time units, plus random ones that tie.
func extremes(rng *rand.Rand, b *ranking.Board, view string) []codedRow {
	span := ranking.Span(b, view)
	values := []int64{b.Min, b.Min + 1, b.Max - 1, b.Max, 0, b.Min + (b.Max-b.Min)/2}
	rels := []int64{0, 1, span - 2, span - 1, span / 2}
	var rows []codedRow
	for i := range 300 {
		v := values[rng.IntN(len(values))]
		if i%3 == 0 {
			v = b.Min + rng.Int64N(b.Max-b.Min+1)
		}
		if v < b.Min || v > b.Max {
			continue
		}
		r := rels[rng.IntN(len(rels))]
		if i%4 == 0 {
			r = rng.Int64N(span)
		}
		r = min(max(r, 0), span-1) // span is 1 (no time part) with ties: shared
		rows = append(rows, codedRow{member: fmt.Sprintf("m%03d", i), value: v, rel: r})
	}
	return rows
}

func better(b *ranking.Board, x, y codedRow) int {
	if x.value != y.value {
		if (b.Order == ranking.Desc) == (x.value > y.value) {
			return -1
		}
		return 1
	}
	if x.rel != y.rel {
		return cmp.Compare(x.rel, y.rel)
	}
	return strings.Compare(x.member, y.member)
}

// TestCodecExactOnRealRedis: codes at the edges of every board's range go
// through a real Redis sorted set and come back in (score, time, member)
// order with their exact values.
func TestCodecExactOnRealRedis(t *testing.T) {
	rdb := redistest.Client(t)
	cfg := codecBoards(t)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(3, 4))
	ns := redistest.Namespace(t)
	for _, b := range cfg.Boards {
		for _, v := range b.Views {
			t.Run(b.ID+"/"+v.Name, func(t *testing.T) {
				rows := extremes(rng, b, v.Name)
				key := ns + ":" + b.ID + ":" + v.Name
				var zs []redis.Z
				for _, r := range rows {
					code := ranking.Encode(b, v.Name, r.value, r.rel)
					if code < 0 || code >= 1<<53 {
						t.Fatalf("code %d of %+v leaves [0, 2^53)", code, r)
					}
					zs = append(zs, redis.Z{Score: float64(code), Member: r.member})
				}
				if err := rdb.ZAdd(ctx, key, zs...).Err(); err != nil {
					t.Fatal(err)
				}
				got, err := rdb.ZRangeWithScores(ctx, key, 0, -1).Result()
				if err != nil {
					t.Fatal(err)
				}
				slices.SortFunc(rows, func(x, y codedRow) int { return better(b, x, y) })
				if b.Ties == ranking.TiesShared {
					// no time part: equal values order by member only
					slices.SortFunc(rows, func(x, y codedRow) int {
						return better(b, codedRow{x.member, x.value, 0}, codedRow{y.member, y.value, 0})
					})
				}
				for i, z := range got {
					v2, rel := ranking.Decode(b, v.Name, z.Score)
					want := rows[i]
					if b.Ties == ranking.TiesShared {
						want.rel = 0
					}
					if z.Member != want.member || v2 != want.value || rel != want.rel {
						t.Fatalf("row %d: got %s value %d rel %d, want %+v", i, z.Member, v2, rel, want)
					}
				}
			})
		}
	}
}

// FuzzCodec: encode and decode are inverse and monotone for any value and
// time unit of the default board's day view.
func FuzzCodec(f *testing.F) {
	cfg := codecBoards(f)
	b := cfg.Boards[1]
	f.Add(int64(0), int64(0), int64(1), int64(1))
	f.Fuzz(func(t *testing.T, v1, r1, v2, r2 int64) {
		span := ranking.Span(b, "day")
		clamp := func(v int64) int64 { return b.Min + ((v%(b.Max-b.Min+1))+(b.Max-b.Min+1))%(b.Max-b.Min+1) }
		v1, v2 = clamp(v1), clamp(v2)
		r1, r2 = ((r1%span)+span)%span, ((r2%span)+span)%span
		c1, c2 := ranking.Encode(b, "day", v1, r1), ranking.Encode(b, "day", v2, r2)
		if d, r := ranking.Decode(b, "day", float64(c1)); d != v1 || r != r1 {
			t.Fatalf("(%d,%d) -> %d -> (%d,%d)", v1, r1, c1, d, r)
		}
		x, y := codedRow{"a", v1, r1}, codedRow{"a", v2, r2}
		if (better(b, x, y) < 0) != (c1 < c2) {
			t.Fatalf("order of (%d,%d) and (%d,%d) not kept: %d vs %d", v1, r1, v2, r2, c1, c2)
		}
	})
}
