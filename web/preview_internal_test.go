package web

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/standings/standings/views"
)

// The preview cache keeps at most maxPreviews images however many
// different ones are asked for, and draws each kept one once.
func TestPreviewCacheIsBounded(t *testing.T) {
	pc := newPreviewCache()
	var draws atomic.Int64
	draw := func(*views.Painter) ([]byte, error) {
		draws.Add(1)
		return make([]byte, 100), nil
	}
	ctx := context.Background()
	for i := range 3 * maxPreviews {
		if _, err := pc.get(ctx, fmt.Sprintf("card\x00%d", i), draw); err != nil {
			t.Fatal(err)
		}
	}
	if n := pc.len(); n != maxPreviews {
		t.Errorf("%d images kept, want %d", n, maxPreviews)
	}
	before := draws.Load()
	last := fmt.Sprintf("card\x00%d", 3*maxPreviews-1)
	for range 10 {
		pc.get(ctx, last, draw)
	}
	if draws.Load() != before {
		t.Error("a kept image was drawn again")
	}
	pc.get(ctx, "card\x000", draw) // the oldest went first
	if draws.Load() != before+1 {
		t.Error("the least recently used image was kept")
	}
	big := func(*views.Painter) ([]byte, error) { return make([]byte, maxPreviewBytes/4), nil }
	for i := range 8 {
		pc.get(ctx, fmt.Sprintf("big\x00%d", i), big)
	}
	if pc.used > maxPreviewBytes {
		t.Errorf("%d bytes kept, bound %d", pc.used, maxPreviewBytes)
	}
}
