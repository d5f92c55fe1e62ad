package ranking

import (
	"context"
	_ "embed"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/redis/go-redis/v9"
	"golang.org/x/text/cases"
	"golang.org/x/text/runes"
	"golang.org/x/text/transform"
	"golang.org/x/text/unicode/norm"
)

// Name search (contract 11): every board keeps an index of
// "<folded text>\x00<member>" entries, one for each member's id and one
// for its display name, written by apply.lua to the sorted set ni, moved
// by compact.lua (compact.go) into blocks packed by neighbours (nb, nx:
// lib.lua's idx_*), and dropped by remove.lua. A prefix search is one
// ZRANGE BYLEX of ni merged with a few blocks, bounded whatever the
// board's size; on a sharded board, one per shard, sent at once.

//go:embed scripts/search.lua
var searchLua string

var searchScript = newScript(searchLua)

// foldSearch is the normalisation of names, ids and queries: Unicode
// compatibility decomposition (NFKD), combining marks dropped (é → e,
// ł stays ł: it has no decomposition), case folded (Straße → strasse,
// Дмитрий → дмитрий), then recomposed (NFC). Scripts without case (CJK)
// are kept as they are. ASCII text, most ids, folds to its lower case
// without the chain (NFKD and NFC keep ASCII, and its case folding is
// A-Z to a-z); the chain's buffers are pooled, as every event's id is
// folded.
func foldSearch(s string) string {
	if out, ok := foldASCII(s); ok {
		return out
	}
	t := foldChains.Get().(transform.Transformer)
	defer foldChains.Put(t)
	return foldWith(t, s)
}

// foldWith is s through the chain t, or lower-cased where t fails.
func foldWith(t transform.Transformer, s string) string {
	out, _, err := transform.String(t, s)
	if err != nil {
		return strings.ToLower(s)
	}
	return out
}

// foldChains hold foldSearch's transformers (one is not safe for
// concurrent use; transform.String resets it).
var foldChains = sync.Pool{New: func() any {
	return transform.Chain(norm.NFKD, runes.Remove(runes.In(unicode.Mn)), cases.Fold(), norm.NFC)
}}

// foldASCII is foldSearch of ASCII text: s itself when it has no upper
// case letter. ok is false for text with other characters.
func foldASCII(s string) (out string, ok bool) {
	upper := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf {
			return "", false
		}
		upper = upper || 'A' <= c && c <= 'Z'
	}
	if !upper {
		return s, true
	}
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b), true
}

// MaxSearchResults bounds one name search.
const MaxSearchResults = 20

// MemberName is one search match: a member and its display name ("" when
// none is known).
type MemberName struct {
	Member string
	Name   string
}

// ValidateSearch checks a name search's prefix q: 1 to 64 characters of
// text that something remains of once case and accents are ignored.
func ValidateSearch(q string) error {
	if n := utf8.RuneCountInString(q); n < 1 || n > 64 {
		return Errorf(EINVALID, "q must be 1 to 64 characters, got %d", n)
	}
	if err := checkText("q", q); err != nil {
		return err
	}
	if foldSearch(q) == "" {
		return Errorf(EINVALID, "q %q has nothing to search for once accents are ignored", q)
	}
	return nil
}

// SearchMembers finds up to 20 members of a board whose display name or id
// starts with q (1..64 characters), compared folded (see foldSearch), in
// the order of the folded match, each member once. Members stay findable
// while they have a score in some retained period (the member sweep
// forgets the others; with an all view, until they are removed).
func (s *Store) SearchMembers(ctx context.Context, boardID, q string) ([]MemberName, error) {
	if err := ValidateSearch(q); err != nil {
		return nil, err
	}
	b, err := s.board(boardID)
	if err != nil {
		return nil, err
	}
	f := foldSearch(q)
	if b.Sharded() {
		return s.searchShards(ctx, b, f)
	}
	k := s.keysOf(b)
	raw, err := s.readsOf(b).run(ctx, searchScript, []string{k.nameIndex(), k.names(), k.indexBounds(), k.indexBlocks()}, f, MaxSearchResults).Slice()
	if err != nil {
		return nil, wrapRedis(err)
	}
	out := make([]MemberName, 0, len(raw)/2)
	for k := 0; k+1 < len(raw); k += 2 {
		m, _ := raw[k].(string)
		name, _ := raw[k+1].(string)
		out = append(out, MemberName{Member: m, Name: name})
	}
	return out, nil
}

// searchShards searches every shard's index at once; a member's entries
// are all on its shard, so each shard's first MaxSearchResults members by
// their first matching entry, merged in that entry's order and cut to
// MaxSearchResults, are what one index holding them all answers.
func (s *Store) searchShards(ctx context.Context, b *Board, f string) ([]MemberName, error) {
	type hit struct {
		MemberName
		entry string
	}
	parts := make([][]hit, b.Shards)
	errs := make([]error, b.Shards)
	var wg sync.WaitGroup
	for i := range b.Shards {
		wg.Add(1)
		go func() {
			defer wg.Done()
			k := s.shardKeys(b, i)
			raw, err := searchScript.Run(ctx, s.rdb, []string{k.nameIndex(), k.names(), k.indexBounds(), k.indexBlocks()}, f, MaxSearchResults, "1").Slice()
			if err != nil {
				errs[i] = wrapRedis(err)
				return
			}
			for j := 0; j+2 < len(raw); j += 3 {
				var h hit
				h.Member, _ = raw[j].(string)
				h.Name, _ = raw[j+1].(string)
				h.entry, _ = raw[j+2].(string)
				parts[i] = append(parts[i], h)
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	all := slices.Concat(parts...)
	slices.SortFunc(all, func(a, b hit) int { return strings.Compare(a.entry, b.entry) })
	out := make([]MemberName, 0, min(len(all), MaxSearchResults))
	for _, h := range all[:min(len(all), MaxSearchResults)] {
		out = append(out, h.MemberName)
	}
	return out, nil
}

// IndexMemberIDs adds, once per board, the search entries of the ids of
// members who scored before the index existed (apply.lua adds a member's
// id when it enters the all view). It scans each board's all view in
// chunks of 1000 and marks the board done; a board without an all view
// needs nothing (its writes index every id). A sharded board's shards are
// backfilled each on its own, with its own marker. Every instance may run
// it; the entries are idempotent.
func (s *Store) IndexMemberIDs(ctx context.Context) error {
	for _, b := range s.cfg.Boards {
		all, ok := b.View(AllPeriodID)
		if !ok || all.Kind != All {
			continue
		}
		for i := range max(b.Shards, 1) {
			if err := s.indexShardIDs(ctx, s.shardKeys(b, i), all); err != nil {
				return err
			}
		}
	}
	return nil
}

// indexShardIDs backfills one shard's index (a board of one shard: the
// board's) from its all view.
func (s *Store) indexShardIDs(ctx context.Context, k boardKeys, all View) error {
	done := k.nameIndexBackfilled()
	if n, err := s.rdb.Exists(ctx, done).Result(); err != nil {
		return wrapRedis(err)
	} else if n == 1 {
		return nil
	}
	zkey, idx := k.period(all.Name, AllPeriodID), k.nameIndex()
	var cursor uint64
	for {
		flat, next, err := s.rdb.ZScan(ctx, zkey, cursor, "", 1000).Result()
		if err != nil {
			return wrapRedis(err)
		}
		if len(flat) > 0 {
			entries := make([]redis.Z, 0, len(flat)/2)
			for j := 0; j+1 < len(flat); j += 2 {
				entries = append(entries, redis.Z{Member: foldSearch(flat[j]) + "\x00" + flat[j]})
			}
			if err := s.rdb.ZAdd(ctx, idx, entries...).Err(); err != nil {
				return wrapRedis(err)
			}
		}
		cursor = next
		if cursor == 0 {
			break
		}
	}
	if err := s.rdb.Set(ctx, done, "1", 0).Err(); err != nil {
		return wrapRedis(err)
	}
	return nil
}
