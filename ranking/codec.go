package ranking

// encode is the Go twin of the code apply.lua computes: rankValue × span +
// rel, where rel counts tie units from the period's base. Tests use it to
// prove codes are exact and ordered across a board's whole range.
func (b *Board) encode(view string, v, rel int64) int64 {
	return b.rankValue(v)*b.codecs[view].span + rel
}

// span is the number of tie units one score step holds in view.
func (b *Board) span(view string) int64 { return b.codecs[view].span }
