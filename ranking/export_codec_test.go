package ranking

// Hooks for the external codec tests.
var (
	Encode = (*Board).encode
	Span   = (*Board).span
	Decode = (*Board).decode
)

// encode is the Go twin of the code apply.lua computes: rankValue × span +
// rel, where rel counts tie units from the period's base. Tests use it to
// prove codes are exact and ordered across a board's whole range.
func (b *Board) encode(view string, v, rel int64) int64 {
	cd := b.codecs[view]
	return b.rankValue(cd, v)*cd.span + rel
}

// rankValue is v's distance from the best end of the codec's range.
func (b *Board) rankValue(cd codec, v int64) int64 {
	if b.Order == Desc {
		return cd.hi - v
	}
	return v - cd.lo
}

// span is the number of tie units one score step holds in view.
func (b *Board) span(view string) int64 { return b.codecs[view].span }
