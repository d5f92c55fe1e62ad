package ranking

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
