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

// ViewPeriod names one period of one view, of the board or of one of its
// segment boards.
type ViewPeriod struct {
	View    string
	Period  string
	Segment Segment // zero: the board itself
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
