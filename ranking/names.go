package ranking

import (
	"context"
	_ "embed"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/cases"
	"golang.org/x/text/runes"
	"golang.org/x/text/transform"
	"golang.org/x/text/unicode/norm"
)

// Name search (contract 11): every board keeps a lexicographic index `ni`
// of "<folded text>\x00<member>" entries, one for each member's id and one
// for its display name, written by apply.lua with the name and dropped by
// remove.lua. A prefix search is one ZRANGE BYLEX, bounded whatever the
// board's size.

//go:embed scripts/search.lua
var searchLua string

var searchScript = newScript(searchLua)

// foldSearch is the normalisation of names, ids and queries: Unicode
// compatibility decomposition (NFKD), combining marks dropped (é → e,
// ł stays ł: it has no decomposition), case folded (Straße → strasse,
// Дмитрий → дмитрий), then recomposed (NFC). Scripts without case (CJK)
// are kept as they are.
func foldSearch(s string) string {
	t := transform.Chain(norm.NFKD, runes.Remove(runes.In(unicode.Mn)), cases.Fold(), norm.NFC)
	out, _, err := transform.String(t, s)
	if err != nil {
		return strings.ToLower(s)
	}
	return out
}

// SearchFold is foldSearch, for tests and documentation.
func SearchFold(s string) string { return foldSearch(s) }

// nameIndexKey is the board's search index.
func (s *Store) nameIndexKey(b *Board) string { return s.boardKey(b, "ni") }

// MaxSearchResults bounds one name search.
const MaxSearchResults = 20

// MemberName is one search match: a member and its display name ("" when
// none is known).
type MemberName struct {
	Member string
	Name   string
}

// SearchMembers finds up to 20 members of a board whose display name or id
// starts with q (1..64 characters), compared folded (see foldSearch), in
// the order of the folded match, each member once. Members stay findable
// after their scores expire, until they are removed.
func (s *Store) SearchMembers(ctx context.Context, boardID, q string) ([]MemberName, error) {
	b, err := s.board(boardID)
	if err != nil {
		return nil, err
	}
	if n := utf8.RuneCountInString(q); n < 1 || n > 64 {
		return nil, Errorf(EINVALID, "q must be 1 to 64 characters, got %d", n)
	}
	if err := checkText("q", q); err != nil {
		return nil, err
	}
	f := foldSearch(q)
	if f == "" {
		return nil, Errorf(EINVALID, "q %q has nothing to search for once accents are ignored", q)
	}
	raw, err := searchScript.Run(ctx, s.rdb, []string{s.nameIndexKey(b), s.boardKey(b, "n")}, f, MaxSearchResults).Slice()
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
