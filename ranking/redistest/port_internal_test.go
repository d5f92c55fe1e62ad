package redistest

import (
	"net"
	"strconv"
	"testing"
)

// TestRetryWhenPortTaken simulates losing the chosen port to another process
// between the check and redis-server's bind.
func TestRetryWhenPortTaken(t *testing.T) {
	if Available() != nil {
		t.Skip("Redis not available")
	}
	for _, tc := range []struct {
		name    string
		cluster bool
		offset  int // which of the pair is taken
	}{
		{"server port", false, 0},
		{"cluster bus port", true, busPortOffset},
	} {
		t.Run(tc.name, func(t *testing.T) {
			taken, err := pickPort()
			if err != nil {
				t.Fatal(err)
			}
			releasePort(taken)
			l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(taken+tc.offset)))
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()

			calls := 0
			choosePort = func() (int, error) {
				calls++
				if calls == 1 {
					return taken, nil
				}
				return pickPort()
			}
			defer func() { choosePort = pickPort }()

			s, err := startServer(t.Context(), tc.cluster, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if calls != 2 {
				t.Errorf("choosePort called %d times, want 2", calls)
			}
			if s.Port() == taken {
				t.Errorf("server claims the taken port %d", taken)
			}
			if err := ping(t.Context(), s.Addr); err != nil {
				t.Error(err)
			}
		})
	}
}

func TestPickPortRange(t *testing.T) {
	seen := map[int]bool{}
	for range 20 {
		p, err := pickPort()
		if err != nil {
			t.Fatal(err)
		}
		if p < portMin || p >= portMax || p+busPortOffset >= 32768 {
			t.Errorf("port %d outside [%d, %d) or bus port in the ephemeral range", p, portMin, portMax)
		}
		if seen[p] {
			t.Errorf("port %d handed out twice", p)
		}
		seen[p] = true
	}
	for p := range seen {
		releasePort(p)
	}
}
