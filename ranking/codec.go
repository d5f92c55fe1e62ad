package ranking

// encode is the Go twin of the code apply.lua computes: rankValue × span +
// rel, where rel counts tie units from the period's base. Tests use it to
// prove codes are exact and ordered across a board's whole range.
func (b *Board) encode(view string, v, rel int64) int64 {
	cd := b.codecs[view]
	return b.rankValue(cd, v)*cd.span + rel
}

// span is the number of tie units one score step holds in view.
func (b *Board) span(view string) int64 { return b.codecs[view].span }

// dayTotals is the hidden per-day view that rolling windows are built from:
// each member's sum and latest change time on one local day.
var dayTotals = View{Name: "~d", Kind: Day}

// hasWindows reports whether the board has a rolling view.
func (b *Board) hasWindows() bool {
	for _, v := range b.Views {
		if v.Kind == Window {
			return true
		}
	}
	return false
}
