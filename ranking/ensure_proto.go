package ranking

import (
	"context"
	_ "embed"
	"time"
)

// The ensure.lua protocol: KEYS and ARGV of one window build.

//go:embed scripts/ensure.lua
var ensureLua string

var ensureScript = newScript(ensureLua)

// ensureWindow runs ensure.lua for window p of view v.
func (s *Store) ensureWindow(ctx context.Context, b *Board, v View, p Period) error {
	return s.ensureSegWindow(ctx, b, v, Segment{}, p)
}

// ensureSegWindow runs ensure.lua for window p of view v of a segment
// board: the same build over the segment board's own day totals. On a
// sharded board every shard builds its part, one call each.
func (s *Store) ensureSegWindow(ctx context.Context, b *Board, v View, seg Segment, p Period) error {
	for sh := range max(b.Shards, 1) {
		keys, args := s.ensureRequest(b, sh, v, seg, p)
		if err := ensureScript.Run(ctx, s.rdb, keys, args...).Err(); err != nil {
			return wrapRedis(err)
		}
	}
	return nil
}

// ensureRequest builds KEYS and ARGV for ensure.lua: window p of view v,
// the window before it and the N+1 day totals they are made of.
// For a segment board the keys carry its tag and ARGV's view is
// "<view>@<name>=<value>" (the registry's and the change message's name).
func (s *Store) ensureRequest(b *Board, shard int, v View, seg Segment, p Period) (keys []string, args []any) {
	cal := s.cfg.Calendar
	cd, dcd := b.codecs[v.Name], b.codecs[dayTotals.Name]
	target := s.entry(b, v, p)
	prev := s.entry(b, v, cal.Prev(v, p))
	k := s.shardKeys(b, shard)
	keys = []string{k.segPeriod(v, seg, p.ID), k.segBuilt(v, seg, p.ID),
		k.segPeriod(v, seg, prev.period.ID), k.segBuilt(v, seg, prev.period.ID), k.registry()}
	args = []any{v.Name + seg.tag(), itoa(int64(v.Days)), itoa(cd.unit.ms), itoa(cd.span), string(b.Order), itoa(cd.lo), itoa(cd.hi),
		s.Channel(), b.ID, p.ID, itoa(target.base), itoa(target.startMS), itoa(target.expireAt),
		prev.period.ID, itoa(prev.base), itoa(dcd.unit.ms), itoa(dcd.span), itoa(dcd.lo), itoa(dcd.hi)}
	// days e-N .. e, oldest first
	day := cal.PeriodAt(dayTotals, time.UnixMilli(target.lastDay))
	days := make([]Period, v.Days+1)
	for k := v.Days; k >= 0; k-- {
		days[k] = day
		day = cal.Prev(dayTotals, day)
	}
	for _, d := range days {
		args = append(args, d.ID, itoa(s.entry(b, dayTotals, d).base))
		keys = append(keys, k.segPeriod(dayTotals, seg, d.ID))
	}
	return keys, args
}
