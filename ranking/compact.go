package ranking

import (
	"context"
	"time"
)

// Compacting the search index: apply.lua adds every new id and name entry
// to the sorted set ni with the batch's one ZADD, as cheap as a write can
// be, but a skiplist entry costs several times the entry's bytes. A
// background pass (compact.lua) moves ni's entries into the blocks nb,
// packed by neighbours, in bounded steps, so that ni only buffers the
// entries of the last minutes. Search reads both.

const (
	// IndexCompactCallsPerPass bounds the compact.lua calls of one pass
	// per board (per shard); what is left waits for the next pass.
	IndexCompactCallsPerPass = 20
	// indexCompactCount is the most entries one call moves, which bounds
	// the blocks it reads and writes (a remainder under the threshold
	// goes with them, so that ni goes).
	indexCompactCount = 512
	// indexCompactThreshold is the fewest entries in ni a call moves: a
	// sorted set of fewer is a listpack, as compact as a block.
	indexCompactThreshold = 128
	// indexBlockBytes is the blocks' largest size before a cut (lib.lua's
	// idx_max, which removals use).
	indexBlockBytes = 1024
)

// CompactReport is what one CompactIndex pass did.
type CompactReport struct {
	Moved int // entries moved from ni to the blocks
	Calls int // compact.lua calls
}

// RunIndexCompactor runs CompactIndex every interval until ctx ends (first
// at once), reporting failures to onError (which may be nil). Every
// instance may run it: each step is one atomic script.
func (s *Store) RunIndexCompactor(ctx context.Context, every time.Duration, onError func(error)) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if _, err := s.CompactIndex(ctx); err != nil && onError != nil && ctx.Err() == nil {
			onError(err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// CompactIndex is one pass over every board's (every shard's) search
// index: at most IndexCompactCallsPerPass steps each, stopping when ni is
// below the threshold. Errors of one board do not stop the others; the
// first is returned.
func (s *Store) CompactIndex(ctx context.Context) (CompactReport, error) {
	var rep CompactReport
	var first error
	for _, b := range s.cfg.Boards {
		for i := range max(b.Shards, 1) {
			for range IndexCompactCallsPerPass {
				moved, left, err := s.compactStep(ctx, s.shardKeys(b, i), indexCompactCount, indexCompactThreshold, indexBlockBytes)
				rep.Calls++
				rep.Moved += moved
				if err != nil {
					if first == nil {
						first = err
					}
					break
				}
				if moved == 0 || left < indexCompactThreshold {
					break
				}
			}
		}
	}
	return rep, first
}

// compactStep runs one compact.lua call on the index whose keys k builds.
func (s *Store) compactStep(ctx context.Context, k boardKeys, count, threshold, blockBytes int) (moved, left int, err error) {
	keys, args := compactRequest(k, count, threshold, blockBytes)
	raw, err := compactScript.Run(ctx, s.rdb, keys, args...).Slice()
	if err != nil {
		return 0, 0, wrapRedis(err)
	}
	return decodeCompact(raw)
}
