package ranking

import (
	"context"
	"time"
)

// Compacting the search index: apply.lua adds every new id and name entry
// to the sorted set ni with the batch's one ZADD, as cheap as a write can
// be, but a skiplist entry costs several times the entry's bytes. A
// background pass (compact.lua) moves ni's entries into the blocks nb,
// packed by neighbours, in bounded steps, so that ni only buffers recent
// entries, about indexCompactPerBlock per block. Search reads both.

const (
	// IndexCompactCallsPerPass bounds the compact.lua calls of one pass
	// per board (per shard); what is left waits for the next pass.
	IndexCompactCallsPerPass = 50
	// indexCompactCount is the most entries one call moves, which bounds
	// the blocks it reads and writes (a remainder under the threshold
	// goes with them, so that ni goes).
	indexCompactCount = 512
	// indexCompactBlocks is the most blocks one call writes: a call's work
	// is per block, and new ids scattered among many packed ones each
	// fall in a block of their own, so this bounds how long one call
	// holds Redis (the memory suite prints the longest).
	indexCompactBlocks = 32
	// indexCompactPerBlock is how many entries per block ni holds before
	// a call moves any: then each block a call reads and writes takes
	// about that many, for the memory of that many skiplist entries per
	// block (a few per cent of a member's bytes).
	indexCompactPerBlock = 2
	// indexCompactThreshold is the fewest entries in ni a call moves: a
	// sorted set of fewer is a listpack, as compact as a block.
	indexCompactThreshold = 128
	// indexBlockBytes is the blocks' largest size before a cut (lib.lua's
	// idx_max, which removals use).
	indexBlockBytes = 2048
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
	runEvery(ctx, every, func(ctx context.Context) error {
		_, err := s.CompactIndex(ctx)
		return err
	}, onError)
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
				moved, left, err := s.compactStep(ctx, s.shardKeys(b, i), indexCompactCount, indexCompactThreshold, indexBlockBytes, indexCompactBlocks, indexCompactPerBlock)
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

// CompactScriptHash is compact.lua's SHA1, as EVALSHA names it (in
// SLOWLOG and MONITOR).
func CompactScriptHash() string { return compactScript.Hash() }

// compactStep runs one compact.lua call on the index whose keys k builds.
func (s *Store) compactStep(ctx context.Context, k boardKeys, count, threshold, blockBytes, blocks, perBlock int) (moved, left int, err error) {
	keys, args := compactRequest(k, count, threshold, blockBytes, blocks, perBlock)
	raw, err := compactScript.Run(ctx, s.rdb, keys, args...).Slice()
	if err != nil {
		return 0, 0, wrapRedis(err)
	}
	return decodeCompact(raw)
}
