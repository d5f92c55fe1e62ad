package ranking

import (
	_ "embed"
	"strconv"
)

// The compact.lua protocol: KEYS and ARGV of one compaction step of a
// board's (or shard's) search index, and the reply.

//go:embed scripts/compact.lua
var compactLua string

var compactScript = newScript(compactLua)

// compactRequest builds KEYS and ARGV for compact.lua on the index whose
// keys k builds: move up to count entries once ni holds threshold and
// perBlock entries per block, into blocks cut above blockBytes, writing
// at most blocks blocks.
func compactRequest(k boardKeys, count, threshold, blockBytes, blocks, perBlock int) (keys []string, args []any) {
	return []string{k.nameIndex(), k.indexBounds(), k.indexBlocks(), k.indexCursor()},
		[]any{strconv.Itoa(count), strconv.Itoa(threshold), strconv.Itoa(blockBytes), strconv.Itoa(blocks), strconv.Itoa(perBlock)}
}

// decodeCompact decodes compact.lua's {moved, left}.
func decodeCompact(raw []any) (moved, left int, err error) {
	if len(raw) != 2 {
		return 0, 0, Errorf(EINTERNAL, "compact: unexpected reply %v", raw)
	}
	return int(asInt(raw[0])), int(asInt(raw[1])), nil
}
