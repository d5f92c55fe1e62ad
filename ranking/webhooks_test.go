package ranking_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/standings/standings/internal/testsupport"
	"github.com/standings/standings/ranking"
	"github.com/standings/standings/ranking/rankingtest"
	"github.com/standings/standings/ranking/redistest"
)

const hookSecretEnv = "STANDINGS_TEST_HOOK_SECRET"

// receiver is a webhook endpoint that records every request and answers
// with the status its script gives for the nth request (1-based).
type receiver struct {
	t      *testing.T
	secret string
	answer func(n int, r *http.Request) int

	mu   sync.Mutex
	reqs []received
}

type received struct {
	delivery, signature string
	body                []byte
}

func newReceiver(t *testing.T, answer func(n int, r *http.Request) int) (*receiver, *httptest.Server) {
	rc := &receiver{t: t, secret: "whsec-" + strconv.FormatInt(time.Now().UnixNano(), 36), answer: answer}
	t.Setenv(hookSecretEnv, rc.secret)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.reqs = append(rc.reqs, received{r.Header.Get("Standings-Delivery"), r.Header.Get("Standings-Signature"), body})
		n := len(rc.reqs)
		rc.mu.Unlock()
		w.WriteHeader(rc.answer(n, r))
	}))
	t.Cleanup(srv.Close)
	return rc, srv
}

func (rc *receiver) requests() []received {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]received(nil), rc.reqs...)
}

var sigPattern = regexp.MustCompile(`^t=(\d+),v1=([0-9a-f]{64})$`)

// verify checks a request's signature as a receiver would: HMAC-SHA256 of
// "<t>.<body>" with the shared secret, and t within 5 minutes of now.
func (rc *receiver) verify(r received) error {
	m := sigPattern.FindStringSubmatch(r.signature)
	if m == nil {
		return fmt.Errorf("signature header %q", r.signature)
	}
	ts, _ := strconv.ParseInt(m[1], 10, 64)
	if d := time.Since(time.Unix(ts, 0)); d < -5*time.Minute || d > 5*time.Minute {
		return fmt.Errorf("signature time %d is %s away", ts, d)
	}
	mac := hmac.New(sha256.New, []byte(rc.secret))
	mac.Write([]byte(m[1] + "." + string(r.body)))
	if !hmac.Equal([]byte(hex.EncodeToString(mac.Sum(nil))), []byte(m[2])) {
		return fmt.Errorf("signature does not verify")
	}
	return nil
}

func hookConfig(t *testing.T, url, extra string) *ranking.Config {
	return MustConfig(t, fmt.Sprintf(`
boards:
  - {id: g, views: [hour, all], results_keep: 1, lateness: 0s}
  - {id: other, views: [hour, all], results_keep: 1, lateness: 0s}
webhooks:
  - {url: %q, secret_env: %s, events: [period.final, member.removed], boards: [g]%s}
`, url, hookSecretEnv, extra))
}

// realClockMiniredis is a miniredis whose TIME follows the wall clock, so
// that delivery leases and backoff run out.
func realClockMiniredis(t *testing.T) redis.UniversalClient {
	m := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: m.Addr()})
	t.Cleanup(func() { rdb.Close() })
	return rdb
}

func hookBackends() []redistest.Backend {
	return redistest.Backends(realClockMiniredis)
}

// pollHook counts the commands that start a webhook sender's poll (the
// ZRANGE of the pending set), so that a test checking that nothing more is
// sent lets polls pass rather than time.
type pollHook struct{ n atomic.Int64 }

func (h *pollHook) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *pollHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
func (h *pollHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if cmd.Name() == "zrange" {
			h.n.Add(1)
		}
		return next(ctx, cmd)
	}
}

// morePolls returns a function that waits for the senders on rdb to poll n
// more times; add it before any sender runs.
func morePolls(rdb redis.UniversalClient) func(t *testing.T, n int64) {
	h := &pollHook{}
	rdb.AddHook(h)
	return func(t *testing.T, n int64) {
		t.Helper()
		want := h.n.Load() + n
		testsupport.WaitFor(t, fmt.Sprintf("%d more polls", n), func() bool { return h.n.Load() >= want })
	}
}

func counts(t *testing.T, s *ranking.Store) map[string]int64 {
	t.Helper()
	c, err := s.DeliveryCounts(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// fastHooks are delivery timings short enough for tests.
var fastHooks = ranking.WebhookOptions{Poll: 20 * time.Millisecond, BaseDelay: 30 * time.Millisecond, MaxDelay: 100 * time.Millisecond}

func runHooks(t *testing.T, s *ranking.Store, opts ranking.WebhookOptions) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	opts.OnError = func(err error) { t.Errorf("webhooks: %v", err) }
	go func() {
		defer close(done)
		s.RunWebhooks(ctx, opts)
	}()
	return func() { cancel(); <-done }
}

// TestWebhookDeliveredWithRetries: on miniredis, real Redis and the
// cluster, with every script's keys guarded, a recorded result makes one
// delivery (also when the relay crashes after relay.lua and runs again);
// a receiver that fails 3 times and then answers 200 gets it 4 times with
// the same Standings-Delivery and the same signed body; nothing is sent
// again after the 2xx.
func TestWebhookDeliveredWithRetries(t *testing.T) {
	ranking.GuardKeys(t)
	for _, be := range hookBackends() {
		t.Run(be.Name, func(t *testing.T) {
			ctx := context.Background()
			rc, srv := newReceiver(t, func(n int, _ *http.Request) int {
				if n <= 3 {
					return http.StatusInternalServerError
				}
				return http.StatusNoContent
			})
			cfg := hookConfig(t, srv.URL+"/hook", "")
			s := newStore(t, be.Client(t), cfg, nil)
			for _, board := range []string{"g", "other"} {
				if _, err := s.Write(ctx, board, ranking.Event{Member: "a", Value: 1}); err != nil {
					t.Fatal(err)
				}
			}
			if n, err := s.RecordResults(ctx); err != nil || n != 2 {
				t.Fatalf("recorded %d (%v), want the last hour of both boards", n, err)
			}
			s.SetAfterRelay(func() error { return fmt.Errorf("crash") })
			if _, err := s.RelayResults(ctx); err == nil {
				t.Fatal("relay with a crash after relay.lua: no error")
			}
			s.SetAfterRelay(nil)
			if _, err := s.RelayResults(ctx); err != nil {
				t.Fatal(err)
			}
			if c := counts(t, s); c[ranking.DeliveryPending] != 1 {
				t.Fatalf("deliveries %v, want 1 pending (board g only, relayed twice)", c)
			}
			polls := morePolls(s.RDB())
			stop := runHooks(t, s, fastHooks)
			testsupport.WaitFor(t, "the delivery", func() bool { return counts(t, s)[ranking.DeliveryDelivered] == 1 })
			polls(t, 5) // nothing is sent again
			if _, err := s.RelayResults(ctx); err != nil {
				t.Fatal(err)
			}
			stop()

			reqs := rc.requests()
			if len(reqs) != 4 {
				t.Fatalf("receiver got %d requests, want 4 (3 failures, then 204)", len(reqs))
			}
			var body struct {
				ID, Type, CreatedAt string
				Data                json.RawMessage
			}
			dec := json.NewDecoder(strings.NewReader(string(reqs[0].body)))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&struct {
				ID        *string          `json:"id"`
				Type      *string          `json:"type"`
				CreatedAt *string          `json:"created_at"`
				Data      *json.RawMessage `json:"data"`
			}{&body.ID, &body.Type, &body.CreatedAt, &body.Data}); err != nil {
				t.Fatalf("body %s: %v", reqs[0].body, err)
			}
			for i, r := range reqs {
				if err := rc.verify(r); err != nil {
					t.Errorf("request %d: %v", i+1, err)
				}
				if r.delivery != reqs[0].delivery || string(r.body) != string(reqs[0].body) {
					t.Errorf("request %d: delivery %q body %s; want the first's", i+1, r.delivery, r.body)
				}
			}
			if body.ID != reqs[0].delivery || body.Type != "period.final" || !regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`).MatchString(body.CreatedAt) {
				t.Errorf("body id %q type %q created_at %q; header delivery %q", body.ID, body.Type, body.CreatedAt, reqs[0].delivery)
			}
			var r ranking.Result
			if err := json.Unmarshal(body.Data, &r); err != nil || r.Board != "g" || r.View != "hour" {
				t.Fatalf("data %s: %v", body.Data, err)
			}
			stored, err := s.Result(ctx, "g", "hour", r.Period)
			if err != nil || string(stored) != string(body.Data) {
				t.Errorf("data %s, stored result %s (%v)", body.Data, stored, err)
			}
			list, err := s.Deliveries(ctx, ranking.DeliveryDelivered, 10)
			if err != nil || len(list) != 1 {
				t.Fatalf("delivered list %+v, %v", list, err)
			}
			d := list[0]
			if d.ID != body.ID || d.Attempts != 4 || d.LastStatus == nil || *d.LastStatus != 204 || d.NextAttemptAt != nil ||
				d.Type != "period.final" || d.URL != srv.URL+"/hook" || d.Status != "delivered" || d.Board != "g" {
				t.Errorf("delivered %+v", d)
			}
			if st := s.WebhookStats(); st.Delivered != 1 || st.Retried != 3 {
				t.Errorf("stats %+v, want 1 delivered, 3 retried", st)
			}
		})
	}
}

// TestWebhookSenderKilledMidDelivery: instance A takes a delivery and dies
// while the receiver holds the request; instance B sends it once A's lease
// has run out. The receiver sees the same delivery twice (A's never
// answered), and once B's 2xx is recorded nothing is sent again.
func TestWebhookSenderKilledMidDelivery(t *testing.T) {
	for _, be := range hookBackends()[1:] {
		t.Run(be.Name, func(t *testing.T) {
			ctx := context.Background()
			arrived := make(chan struct{})
			rc, srv := newReceiver(t, func(n int, r *http.Request) int {
				if n == 1 {
					close(arrived)
					<-r.Context().Done() // hold A's request until A dies
					return http.StatusOK
				}
				return http.StatusOK
			})
			cfg := hookConfig(t, srv.URL+"/hook", "")
			rdb := be.Client(t)
			prefix := redistest.Namespace(t) + ":"
			a := rankingtest.MustStore(t, rdb, cfg, ranking.Options{Prefix: prefix})
			b := rankingtest.MustStore(t, rdb, cfg, ranking.Options{Prefix: prefix})
			mustDeliveryOfLastHour(t, a)
			opts := fastHooks
			opts.Lease = time.Second
			polls := morePolls(b.RDB())
			stopA := runHooks(t, a, opts)
			<-arrived
			stopB := runHooks(t, b, opts)
			defer stopB()
			stopA() // A dies mid-delivery: no verdict is recorded
			testsupport.WaitFor(t, "B's delivery", func() bool { return counts(t, b)[ranking.DeliveryDelivered] == 1 })
			polls(t, 5) // nothing is sent again
			reqs := rc.requests()
			if len(reqs) != 2 || reqs[0].delivery != reqs[1].delivery {
				t.Fatalf("receiver got %d requests %+v, want the same delivery twice", len(reqs), reqs)
			}
			list, _ := b.Deliveries(ctx, ranking.DeliveryDelivered, 10)
			if len(list) != 1 || list[0].Attempts != 2 {
				t.Errorf("delivered %+v, want two attempts (A's, cut short, and B's)", list)
			}
			if st := a.WebhookStats(); st != (ranking.WebhookStats{}) {
				t.Errorf("A recorded %+v after dying", st)
			}
		})
	}
}

// mustClaimable is a store on miniredis (its clock stopped at the returned
// instant) holding one pending delivery to a receiver that answers 200.
func mustClaimable(t *testing.T) (*miniredis.Miniredis, *ranking.Store, time.Time) {
	t.Helper()
	at := time.Date(2026, 11, 23, 10, 30, 0, 0, time.UTC)
	m, rdb := MustMiniredis(t, at)
	_, srv := newReceiver(t, func(int, *http.Request) int { return 200 })
	s := newStore(t, rdb, hookConfig(t, srv.URL, ""), func() time.Time { return at })
	mustDeliveryOfLastHour(t, s)
	return m, s, at
}

// TestWebhookLeaseDecidesWhoReports: a sender whose lease ran out and was
// taken by another cannot record an outcome; the holder can, once.
func TestWebhookLeaseDecidesWhoReports(t *testing.T) {
	ranking.GuardKeys(t)
	ctx := context.Background()
	m, s, at := mustClaimable(t)
	first, err := s.ClaimDelivery(ctx, 5, time.Second, "one")
	if err != nil || len(first) != 1 {
		t.Fatalf("claim: %v %v", first, err)
	}
	if again, _ := s.ClaimDelivery(ctx, 5, time.Second, "two"); len(again) != 0 {
		t.Fatalf("claimed %v while leased", again)
	}
	m.SetTime(at.Add(2 * time.Second))
	second, err := s.ClaimDelivery(ctx, 5, time.Minute, "two")
	if err != nil || len(second) != 1 || second[0] != first[0] {
		t.Fatalf("claim after the lease: %v %v", second, err)
	}
	if ans, _ := s.ReportDelivery(ctx, first[0], "one", 200); ans != "lost" {
		t.Fatalf("the old holder reported: %q, want lost", ans)
	}
	if ans, _ := s.ReportDelivery(ctx, first[0], "two", 200); ans != "delivered" {
		t.Fatalf("the holder reported: %q, want delivered", ans)
	}
	if ans, _ := s.ReportDelivery(ctx, first[0], "two", 200); ans != "lost" {
		t.Fatalf("a second report: %q, want lost", ans)
	}
	m.SetTime(at.Add(time.Hour))
	if more, _ := s.ClaimDelivery(ctx, 5, time.Minute, "three"); len(more) != 0 {
		t.Fatalf("claimed %v after delivery", more)
	}
}

// TestWebhookAttemptCountedWhenClaimed: an attempt counts when it goes in
// flight, so one whose sender crashed (claimed, never reported) counts
// once another instance takes the delivery over and delivers it; an
// attempt that reports its outcome is not counted again.
func TestWebhookAttemptCountedWhenClaimed(t *testing.T) {
	ranking.GuardKeys(t)
	ctx := context.Background()
	m, s, at := mustClaimable(t)
	attempts := func(status string) int64 {
		t.Helper()
		list, err := s.Deliveries(ctx, status, 10)
		if err != nil || len(list) != 1 {
			t.Fatalf("%s deliveries %+v, %v", status, list, err)
		}
		return list[0].Attempts
	}
	if n := attempts(ranking.DeliveryPending); n != 0 {
		t.Fatalf("%d attempts before any claim", n)
	}
	// Each step is one claim by a new holder (a lease later), then its
	// report (none: the holder crashed), and the attempts counted after it.
	for _, step := range []struct {
		after    time.Duration
		holder   string
		status   int    // what the receiver answered; 0: no report
		answer   string // what the report is told
		state    string
		attempts int64
	}{
		{0, "crashes", 0, "", ranking.DeliveryPending, 1},
		{2 * time.Second, "fails", 503, "retry", ranking.DeliveryPending, 2},
		{3 * time.Second, "delivers", 200, "delivered", ranking.DeliveryDelivered, 3},
	} {
		m.SetTime(at.Add(step.after))
		ids, err := s.ClaimDelivery(ctx, 5, time.Second, step.holder)
		if err != nil || len(ids) != 1 {
			t.Fatalf("%s: claim: %v %v", step.holder, ids, err)
		}
		if step.status != 0 {
			if ans, _ := s.ReportDelivery(ctx, ids[0], step.holder, step.status); ans != step.answer {
				t.Fatalf("%s: report %d: %q, want %s", step.holder, step.status, ans, step.answer)
			}
		}
		if n := attempts(step.state); n != step.attempts {
			t.Fatalf("%s: %d attempts, want %d", step.holder, n, step.attempts)
		}
	}
}

// TestWebhookGivesUpThenAdminRetry: a receiver that keeps failing has the
// delivery marked failed after the give-up time (listed with its last
// status, no next attempt); an admin retry sends it again and it is
// delivered. Retrying an unknown, malformed or not failed id is refused.
func TestWebhookGivesUpThenAdminRetry(t *testing.T) {
	ranking.GuardKeys(t)
	ctx := context.Background()
	var mu sync.Mutex
	status := http.StatusBadGateway
	_, srv := newReceiver(t, func(int, *http.Request) int { mu.Lock(); defer mu.Unlock(); return status })
	cfg := hookConfig(t, srv.URL, "")
	s := rankingtest.MustStore(t, redistest.Client(t), cfg, ranking.Options{WebhookGiveUp: 300 * time.Millisecond})
	mustDeliveryOfLastHour(t, s)
	stop := runHooks(t, s, fastHooks)
	defer stop()
	testsupport.WaitFor(t, "failed", func() bool { return counts(t, s)[ranking.DeliveryFailed] == 1 })
	list, err := s.Deliveries(ctx, ranking.DeliveryFailed, 5)
	if err != nil || len(list) != 1 {
		t.Fatalf("failed list %+v %v", list, err)
	}
	d := list[0]
	if d.Attempts < 2 || d.LastStatus == nil || *d.LastStatus != 502 || d.NextAttemptAt != nil || d.LastError == nil || *d.LastError != "HTTP 502" {
		t.Errorf("failed delivery %+v", d)
	}
	if err := s.RetryDelivery(ctx, "wh_"+strings.Repeat("0", 24)); ranking.ErrorCode(err) != ranking.ENOTFOUND {
		t.Errorf("retry unknown: %v", err)
	}
	if err := s.RetryDelivery(ctx, "nope"); ranking.ErrorCode(err) != ranking.EINVALID {
		t.Errorf("retry malformed: %v", err)
	}
	mu.Lock()
	status = http.StatusOK
	mu.Unlock()
	if err := s.RetryDelivery(ctx, d.ID); err != nil {
		t.Fatal(err)
	}
	testsupport.WaitFor(t, "delivered after the retry", func() bool { return counts(t, s)[ranking.DeliveryDelivered] == 1 })
	if c := counts(t, s); c[ranking.DeliveryFailed] != 0 || c[ranking.DeliveryPending] != 0 {
		t.Errorf("counts %v", c)
	}
	if err := s.RetryDelivery(ctx, d.ID); ranking.ErrorCode(err) != ranking.ECONFLICT {
		t.Errorf("retry delivered: %v", err)
	}
	if _, err := s.Deliveries(ctx, "lost", 5); ranking.ErrorCode(err) != ranking.EINVALID {
		t.Errorf("list status lost: %v", err)
	}
}

// TestWebhookRetrySchedule: the first retry comes within 30 s, delays
// double up to an hour, with jitter, and retries span at least 24 hours
// before a delivery is failed (the give-up time is checked per attempt).
func TestWebhookRetrySchedule(t *testing.T) {
	var total time.Duration
	n := int64(0)
	for total < 24*time.Hour {
		n++
		d := ranking.RetryDelay(n, ranking.DefaultWebhookBaseDelay, ranking.DefaultWebhookMaxDelay)
		if n == 1 && (d < 10*time.Second || d >= 20*time.Second) {
			t.Fatalf("first retry after %s, want 10–20 s", d)
		}
		if d > time.Hour {
			t.Fatalf("retry %d after %s, over the 1 h cap", n, d)
		}
		total += d
	}
	if n < 20 || n > 60 {
		t.Errorf("%d attempts in 24 h", n)
	}
}

// TestWebhookConfig: the webhooks list is validated at start-up, an unset
// secret included.
func TestWebhookConfig(t *testing.T) {
	t.Setenv(hookSecretEnv, "s3cret")
	t.Setenv("STANDINGS_TEST_EMPTY_SECRET", "")
	good := `
boards: [{id: g}, {id: h}]
webhooks:
  - {url: "https://example.com/hooks", secret_env: ` + hookSecretEnv + `, events: [period.final]}
  - {url: "http://10.0.0.1:9000/x?y=1", secret_env: ` + hookSecretEnv + `, events: [result.amended, member.removed], boards: [h]}
`
	cfg, err := ranking.ParseConfig([]byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Webhooks) != 2 || string(cfg.Webhooks[0].Secret()) != "s3cret" || !cfg.Webhooks[0].Wants("period.final", "h") ||
		cfg.Webhooks[1].Wants("member.removed", "g") || !cfg.Webhooks[1].Wants("member.removed", "h") || cfg.Webhooks[1].Wants("period.final", "h") {
		t.Fatalf("webhooks %+v", cfg.Webhooks)
	}
	for _, c := range []struct{ yaml, want string }{
		{`{url: "https://x.test/", secret_env: STANDINGS_TEST_UNSET_SECRET, events: [period.final]}`, "STANDINGS_TEST_UNSET_SECRET holding the signing secret is not set"},
		{`{url: "https://x.test/", secret_env: STANDINGS_TEST_EMPTY_SECRET, events: [period.final]}`, "is not set"},
		{`{url: "ftp://x.test/", secret_env: S, events: [period.final]}`, "not an absolute http or https URL"},
		{`{url: "/relative", secret_env: S, events: [period.final]}`, "not an absolute http or https URL"},
		{`{url: "https://x.test/", secret_env: "1BAD", events: [period.final]}`, "not an environment variable name"},
		{`{url: "https://x.test/", secret_env: S, events: [period.started]}`, `"period.started" is not one of period.final, result.amended, member.removed`},
		{`{url: "https://x.test/", secret_env: S, events: []}`, "at least one of"},
		{`{url: "https://x.test/", secret_env: S, events: [period.final, period.final]}`, "listed twice"},
		{`{url: "https://x.test/", secret_env: S, events: [period.final], boards: [nosuch]}`, `"nosuch" is not a board of this file`},
		{`{url: "https://x.test/", secret_env: S, events: [period.final], retries: 3}`, "unknown key; a webhook has url, secret_env, events and boards"},
		{`{url: "https://x.test/", events: [period.final]}`, `field "secret_env" is required`},
		{`{secret_env: S, events: [period.final]}`, `field "url" is required`},
	} {
		t.Setenv("S", "x")
		_, err := ranking.ParseConfig([]byte("boards: [{id: g}]\nwebhooks:\n  - " + c.yaml + "\n"))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want %q", c.yaml, err, c.want)
		}
	}
	dup := "boards: [{id: g}]\nwebhooks:\n  - {url: \"https://x.test/\", secret_env: S, events: [period.final]}\n  - {url: \"https://x.test/\", secret_env: S, events: [member.removed]}\n"
	if _, err := ranking.ParseConfig([]byte(dup)); err == nil || !strings.Contains(err.Error(), "already used") {
		t.Errorf("duplicate url: %v", err)
	}
	if _, err := ranking.ParseConfig([]byte("boards: [{id: g}]\nwebhooks: {url: x}\n")); err == nil || !strings.Contains(err.Error(), "must be a list") {
		t.Errorf("webhooks not a list: %v", err)
	}
}

// TestWebhookEventsOfARemoval: removing a member listed in a recorded
// result makes a result.amended delivery carrying the amended result and a
// member.removed delivery carrying {board, member}; each once, however
// often the relay runs.
func TestWebhookEventsOfARemoval(t *testing.T) {
	ranking.GuardKeys(t)
	ctx := context.Background()
	at := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	m, rdb := MustMiniredis(t, at)
	_, srv := newReceiver(t, func(int, *http.Request) int { return 200 })
	cfg := MustConfig(t, fmt.Sprintf(`
boards:
  - {id: g, views: [day, all], keep: 1, lateness: 0s}
webhooks:
  - {url: %q, secret_env: %s, events: [result.amended, member.removed]}
`, srv.URL, hookSecretEnv))
	s := newStore(t, rdb, cfg, func() time.Time { return at })
	for _, e := range []ranking.Event{{Member: "cheat", Value: 9}, {Member: "ann", Value: 5, Name: "Ann"}} {
		if _, err := s.Write(ctx, "g", e); err != nil {
			t.Fatal(err)
		}
	}
	m.SetTime(at.Add(15 * time.Hour)) // the 22nd is final
	if n, err := s.RecordResults(ctx); err != nil || n != 1 {
		t.Fatalf("recorded %d, %v", n, err)
	}
	if _, err := s.RelayResults(ctx); err != nil {
		t.Fatal(err)
	}
	if c := counts(t, s); c[ranking.DeliveryPending] != 0 {
		t.Fatalf("period.final is not subscribed, yet %v", c)
	}
	if ok, err := s.RemoveMember(ctx, "g", "cheat"); err != nil || !ok {
		t.Fatalf("remove: %v %v", ok, err)
	}
	for range 2 {
		if _, err := s.RelayResults(ctx); err != nil {
			t.Fatal(err)
		}
	}
	list, err := s.Deliveries(ctx, ranking.DeliveryPending, 10)
	if err != nil || len(list) != 2 {
		t.Fatalf("pending %+v %v", list, err)
	}
	types := map[string]string{}
	for _, d := range list {
		body, err := rdb.HGet(ctx, "{"+s.ResultsStream()+"}:wh:d:"+d.ID, "body").Result()
		if err != nil {
			t.Fatal(err)
		}
		types[d.Type] = body
	}
	stored, err := s.Result(ctx, "g", "day", "2026-11-22")
	if err != nil || !strings.Contains(string(stored), `"amended_at"`) || strings.Contains(string(stored), "cheat") {
		t.Fatalf("stored %s %v", stored, err)
	}
	if b := types["result.amended"]; !strings.HasSuffix(b, `"data":`+string(stored)+`}`) {
		t.Errorf("result.amended body %s, want the amended result %s", b, stored)
	}
	if b := types["member.removed"]; !strings.HasSuffix(b, `"data":{"board":"g","member":"cheat"}}`) {
		t.Errorf("member.removed body %s", b)
	}
}

// mustDeliveryOfLastHour writes to board g, then records and relays: the
// last hour's (empty) result makes one delivery.
func mustDeliveryOfLastHour(t *testing.T, s *ranking.Store) {
	t.Helper()
	ctx := context.Background()
	if _, err := s.Write(ctx, "g", ranking.Event{Member: "a", Value: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RecordResults(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RelayResults(ctx); err != nil {
		t.Fatal(err)
	}
}
