package ranking

import (
	"hash/fnv"
	"strconv"
)

// Sharded boards (contract 17). A board with `shards: N > 1` spreads its
// members over N shards. A member's shard is
//
//	shard = JumpHash(FNV-1a-64(member id bytes), N)
//
// (Lamping and Veach's jump consistent hash: stable, and a change from N to
// N+1 shards moves only a 1/(N+1) share of members). Everything about a
// member (its codes in every view and segment, its league cohort, name,
// search entries, records and event ids) lives under its shard's hash tag,
// so a write is one atomic script call on one node. What is about the
// board as a whole (recorded results and their index, the results outbox,
// the ingest stream, the board's shard count) stays under the board's own
// tag {<board>}.
//
// Shard i's tag is "<board>#<i>.<k>" with the smallest k >= 0 whose Redis
// Cluster slot lies in the i-th of N equal ranges of the 16384 slots, so a
// cluster whose masters hold equal slot ranges (what `redis-cli --cluster
// create` makes) gets the shards spread evenly: with 3 masters and 3
// shards, one shard per master. A board with `shards: 1` keeps every key
// under {<board>}, as before sharding existed.
//
// Reads merge the shards (shard_read.go): each shard's part is one script
// call (scripts/slice.lua) per round trip, sent to every shard at once.

// MaxShards is the most shards a board may have.
const MaxShards = 64

// clusterSlots is the number of Redis Cluster hash slots.
const clusterSlots = 16384

// ShardOf returns the shard (0..n-1) of a member on a board of n shards.
func ShardOf(member string, n int) int {
	if n <= 1 {
		return 0
	}
	h := fnv.New64a()
	h.Write([]byte(member))
	return jumpHash(h.Sum64(), n)
}

// jumpHash is the jump consistent hash of key into n buckets.
func jumpHash(key uint64, n int) int {
	b, j := int64(-1), int64(0)
	for j < int64(n) {
		b = j
		key = key*2862933555777941757 + 1
		j = int64(float64(b+1) * (float64(int64(1)<<31) / float64((key>>33)+1)))
	}
	return int(b)
}

// shardTags returns the hash tags of a board's n shards (see above); one
// shard is the board's own tag.
func shardTags(board string, n int) []string {
	if n <= 1 {
		return []string{board}
	}
	tags := make([]string, n)
	for i := range tags {
		lo, hi := i*clusterSlots/n, (i+1)*clusterSlots/n
		base := board + "#" + strconv.Itoa(i) + "."
		for k := 0; ; k++ {
			tag := base + strconv.Itoa(k)
			if s := int(crc16(tag)) % clusterSlots; s >= lo && s < hi {
				tags[i] = tag
				break
			}
		}
	}
	return tags
}

// crc16 is Redis Cluster's key hash (CRC-16/XMODEM).
func crc16(s string) uint16 {
	var crc uint16
	for i := 0; i < len(s); i++ {
		crc ^= uint16(s[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}

// ShardTag is the hash tag of the board's shard i (its own id on a board
// of one shard), for tools that read a shard's keys.
func (b *Board) ShardTag(i int) string { return b.tags[i] }

// Sharded reports whether the board spreads its members over shards.
func (b *Board) Sharded() bool { return b.Shards > 1 }

// shardKeys is the key builder of shard i of board b; on a board of one
// shard, the board's own keys.
func (s *Store) shardKeys(b *Board, i int) boardKeys {
	if !b.Sharded() {
		return s.keysOf(b)
	}
	return boardKeys(s.prefix + "{" + b.tags[i] + "}:")
}

// memberKeys is the key builder of the shard holding member.
func (s *Store) memberKeys(b *Board, member string) boardKeys {
	return s.shardKeys(b, ShardOf(member, b.Shards))
}

// byShard groups idx (indexes into events) by their member's shard, each
// group in idx's order; groups in shard order, empty ones left out.
func byShard(b *Board, events []Event, idx []int) (shards []int, groups [][]int) {
	if !b.Sharded() {
		return []int{0}, [][]int{idx}
	}
	per := make([][]int, b.Shards)
	for _, i := range idx {
		sh := ShardOf(events[i].Member, b.Shards)
		per[sh] = append(per[sh], i)
	}
	for sh, g := range per {
		if len(g) > 0 {
			shards = append(shards, sh)
			groups = append(groups, g)
		}
	}
	return shards, groups
}
