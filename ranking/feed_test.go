package ranking_test

import (
	"context"
	"testing"
	"time"

	"github.com/standings/standings/ranking"
)

// TestSubscriptionDropsSlowConsumer: a consumer that stops reading is
// dropped, never waited on: C closes once the buffered changes are taken,
// Dropped says why, and a new subscription works.
func TestSubscriptionDropsSlowConsumer(t *testing.T) {
	_, rdb := MustMiniredis(t, time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC))
	cfg := MustConfig(t, "boards: [{id: alpha, views: [day]}]\n")
	s := newStore(t, rdb, cfg, nil)
	ctx := context.Background()
	sub, err := s.Subscribe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	// Far more changes than any buffer on the way holds, none read.
	for range 1000 {
		if err := rdb.Publish(ctx, s.Channel(), "alpha\nday:2026-11-22").Err(); err != nil {
			t.Fatal(err)
		}
	}
	n := 0
	deadline := time.After(10 * time.Second)
	for open := true; open; {
		select {
		case _, open = <-sub.C():
			if open {
				n++
			}
		case <-deadline:
			t.Fatalf("the subscription of a consumer that stopped reading stayed open (%d changes taken)", n)
		}
	}
	if !sub.Dropped() || n == 0 || n >= 1000 {
		t.Errorf("dropped %v after %d of 1000 changes", sub.Dropped(), n)
	}

	again, err := s.Subscribe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if _, err := s.Write(ctx, "alpha", ranking.Event{Member: "m", Value: 1}); err != nil {
		t.Fatal(err)
	}
	select {
	case ch := <-again.C():
		if ch.Board != "alpha" {
			t.Errorf("change %+v", ch)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no change after subscribing again")
	}
	if again.Dropped() {
		t.Error("a consumer that keeps up is dropped")
	}
}
