package ranking

import (
	"context"
	_ "embed"
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Overtakes on a sharded board (contract 17). A shard's apply.lua knows
// its own order only, so it keeps none (moves_top 0); instead, when a
// view's moves are read and its last comparison is a tick old
// (ShardMovesTick), the merged top MovesTop+1 of the view's current period
// is compared with the top compared last, kept on the board's own tag
// (mt:<view>). Each member now in the top MovesTop at a better rank than
// it had there (or new to it) passed the member now closest behind it
// that was ahead of it then; that overtake goes into mv:<view> as
// apply.lua would write it, at the comparison's time. shardmoves.lua
// keeps the new top and its overtakes only if the kept top is still the
// one read, so of instances comparing at once one records. Work per
// comparison is one merged read of MovesTop+1 entries and one call.

//go:embed scripts/shardmoves.lua
var shardMovesLua string

var shardMovesScript = newScript(shardMovesLua)

// ShardMovesTick is how often, at most, a sharded board's view compares
// its merged top: the live pages' tick.
const ShardMovesTick = 200 * time.Millisecond

// keptTop is a compared top as mt:<view> keeps it: a line
// "<period>\t<compared at ms>", then "<rank>\t<member>" per entry in
// order.
type keptTop struct {
	period string
	atMS   int64
	rank   map[string]int64
	pos    map[string]int
}

func parseTop(s string) keptTop {
	t := keptTop{rank: map[string]int64{}, pos: map[string]int{}}
	lines := strings.Split(s, "\n")
	head := strings.SplitN(lines[0], "\t", 2)
	if len(head) != 2 {
		return t
	}
	t.period = head[0]
	t.atMS, _ = strconv.ParseInt(head[1], 10, 64)
	for i, line := range lines[1:] {
		r, m, ok := strings.Cut(line, "\t")
		if !ok {
			continue
		}
		t.rank[m], _ = strconv.ParseInt(r, 10, 64)
		t.pos[m] = i
	}
	return t
}

// formatTop writes a page's first MovesTop entries as mt:<view> keeps them.
func formatTop(pg *Page) string {
	var sb strings.Builder
	sb.WriteString(pg.Period.ID + "\t" + itoa(pg.Now.UnixMilli()))
	for _, e := range pg.Entries[:min(len(pg.Entries), MovesTop)] {
		sb.WriteString("\n" + itoa(e.Rank) + "\t" + e.Member)
	}
	return sb.String()
}

// topOvertakes lists the overtakes between a kept top and a page of the
// top now (MovesTop+1 entries), in apply.lua's line format, the best rank
// last. None when the period changed: its top starts empty.
func topOvertakes(prev keptTop, pg *Page) []string {
	if prev.period != pg.Period.ID {
		return nil
	}
	es := pg.Entries
	var lines []string
	for i, x := range es[:min(len(es), MovesTop)] {
		was, in := prev.rank[x.Member]
		if in && x.Rank >= was {
			continue
		}
		for _, y := range es[i+1:] {
			if y.Rank <= x.Rank {
				continue // tied with it now: not passed
			}
			if py, ok := prev.pos[y.Member]; ok && (!in || py < prev.pos[x.Member]) {
				lines = append(lines, pg.Period.ID+"\t"+x.Member+"\t"+y.Member+"\t"+itoa(x.Rank)+"\t"+itoa(pg.Now.UnixMilli()))
				break
			}
		}
	}
	slices.Reverse(lines)
	return lines
}

// shardMovesRequest builds shardmoves.lua's KEYS and ARGV.
func (s *Store) shardMovesRequest(b *Board, v View, read, now string, lines []string) (keys []string, args []any) {
	k := s.keysOf(b)
	args = []any{read, now, itoa(MovesTop)}
	for _, l := range lines {
		args = append(args, l)
	}
	return []string{k.movesTop(v.Name), k.moves(v.Name)}, args
}

// compareTop compares view v's merged top with the one compared last,
// unless that comparison is younger than ShardMovesTick, and keeps the
// overtakes found (see above).
func (s *Store) compareTop(ctx context.Context, b *Board, v View) error {
	read, err := s.rdb.Get(ctx, s.keysOf(b).movesTop(v.Name)).Result()
	if err != nil && !errors.Is(err, redis.Nil) {
		return wrapRedis(err)
	}
	prev := parseTop(read)
	now, err := s.Now(ctx)
	if err != nil {
		return err
	}
	if age := now.UnixMilli() - prev.atMS; prev.period != "" && age >= 0 && age < ShardMovesTick.Milliseconds() {
		return nil
	}
	pg, err := s.Page(ctx, b.ID, v.Name, PageQuery{Limit: MovesTop + 1, NoPrevRanks: true})
	if err != nil {
		return err
	}
	keys, args := s.shardMovesRequest(b, v, read, formatTop(pg), topOvertakes(prev, pg))
	return wrapRedis(shardMovesScript.Run(ctx, s.rdb, keys, args...).Err())
}
