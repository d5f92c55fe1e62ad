package ranking

import "testing"

// TestSegPeriodKey holds segPeriod (built through taggedPeriod) to the key it
// names: the period key of the view's segment board.
func TestSegPeriodKey(t *testing.T) {
	k := boardKeys("p:{b}:")
	v := View{Name: "week"}
	for _, seg := range []Segment{{}, {Name: "country", Value: "FR"}, {Name: "t", Value: "a-1.b_C"}} {
		got, want := k.segPeriod(v, seg, "2026-11-23"), k.period(v.Name+seg.tag(), "2026-11-23")
		if got != want {
			t.Errorf("segPeriod(%v) = %q, want %q", seg, got, want)
		}
	}
	if got := k.segPeriod(v, Segment{Name: "country", Value: "FR"}, "2026-11-23"); got != "p:{b}:z:week@country=FR:2026-11-23" {
		t.Errorf("segPeriod = %q", got)
	}
}
