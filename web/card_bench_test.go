package web_test

import (
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
)

// BenchmarkRankCardPage serves a rank card page, gzipped, through the
// whole handler (miniredis behind it: look at the app's allocations and
// CPU with -benchmem or -memprofile, not at ns/op, which is mostly
// miniredis's Lua).
func BenchmarkRankCardPage(b *testing.B) {
	f := MustFixture(b)
	var events []string
	for i := range 200 {
		events = append(events, fmt.Sprintf(`{"member":"m%03d","name":"Member %d","value":%d}`, i, i, 1+i*37%500))
	}
	MustOK(b, f.do(b, "POST", "/api/v1/boards/points/scores/batch", writeKey, `{"events":[`+strings.Join(events, ",")+`]}`))
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		req := httptest.NewRequest("GET", fmt.Sprintf("/boards/points/week/members/m%03d", i%200), nil)
		req.Header.Set("Accept-Encoding", "gzip")
		rec := httptest.NewRecorder()
		f.handler.ServeHTTP(rec, req)
		if rec.Code != 200 {
			b.Fatalf("status %d", rec.Code)
		}
		i++
	}
}
