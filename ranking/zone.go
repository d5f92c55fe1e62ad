package ranking

// ZoneOf is the zone a rank falls in: the first whose Top is at least the
// rank, so with ties: shared a zone holds every member whose shared rank
// is in it. ok is false outside every zone and on a board without zones.
func (b *Board) ZoneOf(rank int64) (z Zone, ok bool) {
	for _, z := range b.Zones {
		if rank >= 1 && rank <= int64(z.Top) {
			return z, true
		}
	}
	return Zone{}, false
}

// ZoneAbove is the nearest zone better than the one a rank falls in (the
// last zone for a rank outside them all); ok is false for a rank in the
// first zone and on a board without zones.
func (b *Board) ZoneAbove(rank int64) (z Zone, ok bool) {
	for i := len(b.Zones) - 1; i >= 0; i-- {
		if rank > int64(b.Zones[i].Top) {
			return b.Zones[i], true
		}
	}
	return Zone{}, false
}
