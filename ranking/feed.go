package ranking

import (
	"context"
	"strings"

	"github.com/redis/go-redis/v9"
)

// Change says which periods of a board changed in one write (or removal).
type Change struct {
	Board   string
	Periods []ViewPeriod
}

// ViewPeriod names one period of one view.
type ViewPeriod struct {
	View   string
	Period string
}

// Subscription receives the change feed of every app instance on the same
// Redis (or cluster: PUBLISH reaches every node's subscribers).
type Subscription struct {
	ps *redis.PubSub
	c  chan Change
}

// Subscribe starts receiving changes. It returns once the subscription is
// confirmed, so writes made after it returns are seen. go-redis reconnects
// and resubscribes by itself; changes published while disconnected are lost,
// so consumers should treat a reconnect as "everything may have changed".
func (s *Store) Subscribe(ctx context.Context) (*Subscription, error) {
	ps := s.rdb.Subscribe(ctx, s.Channel())
	if _, err := ps.Receive(ctx); err != nil {
		ps.Close()
		return nil, wrapRedis(err)
	}
	sub := &Subscription{ps: ps, c: make(chan Change, 256)}
	go sub.run()
	return sub, nil
}

func (sub *Subscription) run() {
	defer close(sub.c)
	for msg := range sub.ps.Channel() {
		if ch, ok := ParseChange(msg.Payload); ok {
			sub.c <- ch
		}
	}
}

// C delivers changes in the order Redis published them. It is closed by Close.
func (sub *Subscription) C() <-chan Change { return sub.c }

// Close stops the subscription.
func (sub *Subscription) Close() error { return sub.ps.Close() }

// ParseChange decodes a change message: the board id, then one
// "view:period" per line.
func ParseChange(payload string) (Change, bool) {
	lines := strings.Split(payload, "\n")
	if len(lines) < 2 || lines[0] == "" {
		return Change{}, false
	}
	ch := Change{Board: lines[0]}
	for _, l := range lines[1:] {
		view, period, ok := strings.Cut(l, ":")
		if !ok {
			return Change{}, false
		}
		ch.Periods = append(ch.Periods, ViewPeriod{View: view, Period: period})
	}
	return ch, true
}
