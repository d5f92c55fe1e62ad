package ranking

import (
	"context"
	"strings"
	"sync/atomic"

	"github.com/redis/go-redis/v9"
)

// Change says which periods of a board changed in one write (or removal).
type Change struct {
	Board   string
	Periods []ViewPeriod
}

// ViewPeriod names one period of one view, of the board or of one of its
// segment boards.
type ViewPeriod struct {
	View    string
	Period  string
	Segment Segment // zero: the board itself
}

// Subscription receives the change feed of every app instance on the same
// Redis (or cluster: PUBLISH reaches every node's subscribers). It never
// waits for its consumer: one that lets subscriptionBuffer changes pile up
// is dropped (see Dropped).
type Subscription struct {
	ps      *redis.PubSub
	c       chan Change
	dropped atomic.Bool
}

// subscriptionBuffer is how many changes a subscription holds for a
// consumer that is busy (a live tick's renders) before it is dropped.
const subscriptionBuffer = 256

// Subscribe starts receiving changes. It returns once the subscription is
// confirmed, so writes made after it returns are seen. go-redis reconnects
// and resubscribes by itself; changes published while disconnected are lost,
// so consumers should treat a reconnect, and a closed C, as "everything may
// have changed".
func (s *Store) Subscribe(ctx context.Context) (*Subscription, error) {
	ps := s.rdb.Subscribe(ctx, s.Channel())
	if _, err := ps.Receive(ctx); err != nil {
		ps.Close()
		return nil, wrapRedis(err)
	}
	sub := &Subscription{ps: ps, c: make(chan Change, subscriptionBuffer)}
	go sub.run()
	return sub, nil
}

// run hands changes on without ever blocking: a full buffer ends the
// subscription, since a change that cannot be delivered is lost either
// way, and a closed C tells the consumer so, where a wait would stall the
// Redis connection's reader behind it.
func (sub *Subscription) run() {
	msgs := sub.ps.Channel()
	for msg := range msgs {
		ch, ok := ParseChange(msg.Payload)
		if !ok {
			continue
		}
		select {
		case sub.c <- ch:
			continue
		default:
		}
		sub.dropped.Store(true)
		close(sub.c)
		sub.ps.Close()
		for range msgs {
			// go-redis closes msgs once its reader sees the connection closed.
		}
		return
	}
	close(sub.c)
}

// C delivers changes in the order Redis published them. It is closed by
// Close, and when the consumer fell behind (Dropped).
func (sub *Subscription) C() <-chan Change { return sub.c }

// Dropped reports whether C was closed because the consumer let its buffer
// fill: changes were lost, and the consumer should subscribe again.
func (sub *Subscription) Dropped() bool { return sub.dropped.Load() }

// Close stops the subscription.
func (sub *Subscription) Close() error { return sub.ps.Close() }

// ParseChange decodes a change message: the board id, then one
// "view:period" per line, where a segment board's view reads
// "view@name=value" (a write names the board's periods and those of each
// segment board it changed).
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
		vp := ViewPeriod{View: view, Period: period}
		if v, tag, isSeg := strings.Cut(view, "@"); isSeg {
			name, value, ok := strings.Cut(tag, "=")
			if !ok {
				return Change{}, false
			}
			vp.View, vp.Segment = v, Segment{Name: name, Value: value}
		}
		ch.Periods = append(ch.Periods, vp)
	}
	return ch, true
}
