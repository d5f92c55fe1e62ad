//go:build unix

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/standings/standings/ranking/redistest"
)

// The durability run: how long writers send new events, how many there are,
// and when the server and Redis are killed, as fractions of the traffic
// time so that every kill falls amid traffic and writes follow each one.
const (
	durTraffic  = 18 * time.Second
	durWriters  = 32
	durMembers  = 48
	durMaxBatch = 10
	// durDrain bounds how long writers may keep retrying their last
	// unacknowledged events once traffic stops; the service is up by then,
	// so this is only reached when it does not recover.
	durDrain = 25 * time.Second
	// durRedisDown is how long Redis stays dead before it is started again.
	durRedisDown = 700 * time.Millisecond
	// durRedisHang is how long Redis is frozen (SIGSTOP), longer than the
	// server's 2 s request deadline: writes already sent to Redis time out
	// as 503 and then run when it wakes, so their retries must come back
	// duplicates.
	durRedisHang = 3 * time.Second
	durBoard     = "durable"
	durKey       = "durability-key"
)

// durViews are the views of the board under test. Events carry no `at`, so
// each lands in the periods Redis's clock says; the check reads every
// period an answer named, so an hour, day or week that rolls over during
// the run is checked on both sides of the boundary.
var durViews = []string{"hour", "day", "week", "all", "7d"}

// durChaos is what happens to the service during the traffic, in order.
var durChaos = []struct {
	at   float64 // fraction of durTraffic
	what string  // a key of durChaosSays
}{
	{0.20, "app"},
	{0.35, "redis-hang"},
	{0.58, "redis"},
	{0.78, "app"},
}

// durChaosSays says what each kind of chaos does, for the log.
var durChaosSays = map[string]string{
	"app":        "server SIGKILLed and started again",
	"redis":      "Redis SIGKILLed and started again from its AOF",
	"redis-hang": "Redis frozen with SIGSTOP, then resumed",
}

// TestDurability kills the server (SIGKILL) twice, freezes Redis once and
// kills it (SIGKILL, with the append-only file fsynced on every write) once
// while 32 writers send events with ids, each retried with its id until it
// is acknowledged. Then every period the answers named must hold, for every
// member, exactly the sum of the acknowledged increments: nothing
// acknowledged is lost and nothing retried counts twice.
func TestDurability(t *testing.T) {
	if testing.Short() {
		t.Skip("the durability run takes about 20 s; skipped with -short")
	}
	if err := redistest.Available(); err != nil {
		t.Skipf("Redis not available: %v", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	srv, err := redistest.StartDurableServer(ctx)
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })

	boards := filepath.Join(t.TempDir(), "boards.yaml")
	config := "boards:\n  - id: " + durBoard + "\n    update: increment\n    views: [" + strings.Join(durViews, ", ") + "]\n"
	if err := os.WriteFile(boards, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	app := mustAppProcess(t,
		[]string{"--config", boards, "--redis", "redis://" + srv.Addr, "--demo=false"},
		[]string{"STANDINGS_WRITE_KEYS=" + durKey})

	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	run := &durRun{
		url:    app.URL + "/api/v1/boards/" + durBoard + "/scores",
		client: durClient(),
		drain:  time.Now().Add(durTraffic + durDrain),
	}
	traffic, stopTraffic := context.WithTimeout(context.Background(), durTraffic)
	defer stopTraffic()
	var writers sync.WaitGroup
	for w := range durWriters {
		writers.Go(func() { run.writer(traffic, w, rand.New(rand.NewPCG(seed, uint64(w)))) })
	}

	// The chaos, from this goroutine: the writers never wait for it.
	start := time.Now()
	var chaosErr error
	for _, c := range durChaos {
		time.Sleep(time.Until(start.Add(time.Duration(c.at * float64(durTraffic)))))
		if chaosErr = run.chaos(c.what, app, srv); chaosErr != nil {
			stopTraffic()
			break
		}
		run.phase.Add(1)
		t.Logf("%v: %s (%s) done, service back", time.Since(start).Round(100*time.Millisecond), c.what, durChaosSays[c.what])
	}
	writers.Wait()
	if chaosErr != nil {
		t.Fatal(chaosErr)
	}
	if errs := run.failures(); len(errs) > 0 {
		t.Fatalf("writes refused or misanswered (%d), first ones:\n%s", len(errs), strings.Join(errs[:min(len(errs), 10)], "\n"))
	}
	if n := run.unacked.Load(); n > 0 {
		t.Fatalf("%d events were never acknowledged within %v after traffic stopped", n, durDrain)
	}

	acks := run.all()
	report := durCheck(t, app.URL, acks)
	report.retried = int(run.retried.Load())
	report.attempts = int(run.attempts.Load())
	kinds := map[string]int{}
	for _, c := range durChaos {
		kinds[c.what]++
	}
	line := fmt.Sprintf("DURABILITY acked=%d retried=%d duplicates=%d resent=%d lost=%d double=%d requests=%d app_kills=%d redis_kills=%d redis_hangs=%d traffic_s=%.0f events_per_s=%.0f",
		report.acked, report.retried, report.duplicates, run.resentCount(), report.lost, report.double, report.attempts,
		kinds["app"], kinds["redis"], kinds["redis-hang"], durTraffic.Seconds(), float64(report.acked)/durTraffic.Seconds())
	t.Log(line)
	t.Logf("failed attempts by cause: %s", run.causes())
	fmt.Println(line)

	if report.lost != 0 || report.double != 0 {
		t.Errorf("lost %d acknowledged events, over-counted %d members; %d differences, first ones (view period member: want got):\n%s",
			report.lost, report.double, len(report.diffs), strings.Join(report.diffs[:min(len(report.diffs), 20)], "\n"))
	}
	// The run proves something only if the kills hit writes in flight and
	// writing went on after each of them.
	if report.retried == 0 {
		t.Error("no event needed a retry: the kills did not hit any write")
	}
	for phase, n := range run.ackedByPhase() {
		if n == 0 {
			t.Errorf("no event acknowledged in phase %d (0 = before the first kill)", phase)
		}
	}
}

// durAck is one acknowledged event and the periods its answer named.
type durAck struct {
	id, member string
	value      int64
	duplicate  bool
	phase      int32
	periods    map[string]string // view -> period
}

// durEvent is one event as sent.
type durEvent struct {
	Member string `json:"member"`
	Value  int64  `json:"value"`
	ID     string `json:"id"`
}

// durAnswer is the part of a write answer (or a batch result) the check
// reads.
type durAnswer struct {
	Member    string `json:"member"`
	Duplicate bool   `json:"duplicate"`
	Views     map[string]struct {
		Period string `json:"period"`
	} `json:"views"`
	Error *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// durRun is the shared state of the writers.
type durRun struct {
	url    string
	client *http.Client
	drain  time.Time // writers give up on unacknowledged events after this
	phase  atomic.Int32

	retried  atomic.Int64 // events sent more than once
	attempts atomic.Int64 // requests sent
	unacked  atomic.Int64 // events given up on at the drain deadline

	mu     sync.Mutex
	acks   []durAck
	byID   map[string]int // event id -> index in acks
	resent int            // acknowledged events sent again on purpose
	errs   []string
	causeN map[string]int // failed attempts by cause
}

// durClient bounds every request, so that a write to a process that hangs
// or died mid-answer ends and is retried.
func durClient() *http.Client {
	return &http.Client{
		Timeout:   3 * time.Second,
		Transport: &http.Transport{MaxIdleConnsPerHost: durWriters, IdleConnTimeout: 30 * time.Second},
	}
}

// writer sends events until traffic ends: mostly single writes, some
// batches. Every event has an id of its own and is sent again, with the
// same id, until an answer acknowledges it.
func (r *durRun) writer(traffic context.Context, w int, rng *rand.Rand) {
	seq := 0
	for traffic.Err() == nil {
		n := 1
		if rng.IntN(5) == 0 {
			n = 2 + rng.IntN(durMaxBatch-1)
		}
		events := make([]durEvent, n)
		for i := range events {
			seq++
			events[i] = durEvent{
				Member: fmt.Sprintf("player-%02d", rng.IntN(durMembers)),
				Value:  1,
				ID:     fmt.Sprintf("w%02d-%06d", w, seq),
			}
		}
		if !r.deliver(events, n > 1, rng) {
			return
		}
		// Now and then an acknowledged event is sent again, as a client
		// that lost the answer would: it must come back a duplicate.
		if n == 1 && rng.IntN(25) == 0 && !r.resend(events[0], rng) {
			return
		}
		// A pause between requests keeps the run to a few thousand events
		// on a busy machine.
		select {
		case <-traffic.Done():
		case <-time.After(time.Duration(100+rng.IntN(100)) * time.Millisecond):
		}
	}
}

// deliver sends events (as a batch or a single write) until each is
// acknowledged, backing off between attempts. It reports false when the
// writer must stop: an answer that no retry can fix, or the drain deadline.
func (r *durRun) deliver(events []durEvent, batch bool, rng *rand.Rand) bool {
	pending := events
	for attempt := 0; len(pending) > 0; attempt++ {
		if attempt > 0 {
			if attempt == 1 {
				r.retried.Add(int64(len(pending)))
			}
			if time.Now().After(r.drain) {
				r.unacked.Add(int64(len(pending)))
				return false
			}
			backoff := min(20*time.Millisecond<<min(attempt-1, 5), 500*time.Millisecond)
			time.Sleep(backoff/2 + time.Duration(rng.Int64N(int64(backoff/2)+1)))
		}
		r.attempts.Add(1)
		var err error
		if batch {
			pending, err = r.sendBatch(pending)
		} else {
			pending, err = r.sendOne(pending[0])
		}
		if err != nil {
			r.mu.Lock()
			r.errs = append(r.errs, err.Error())
			r.mu.Unlock()
			return false
		}
	}
	return true
}

// retriable is a failed attempt whose outcome is unknown or that the
// service asks to repeat; anything else is an error of the test's events or
// of the service's answer.
type retriable string

func (r *durRun) failed(cause string) {
	r.mu.Lock()
	if r.causeN == nil {
		r.causeN = map[string]int{}
	}
	r.causeN[cause]++
	r.mu.Unlock()
}

// post sends body and returns the status and answer, or "" and a cause when
// the attempt must be repeated.
func (r *durRun) post(path string, body any) (int, []byte, retriable) {
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, r.url+path, bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer "+durKey)
	req.Header.Set("Content-Type", "application/json")
	res, err := r.client.Do(req)
	if err != nil {
		cause := "connection"
		var te interface{ Timeout() bool }
		if errors.As(err, &te) && te.Timeout() {
			cause = "timeout"
		}
		return 0, nil, retriable(cause)
	}
	defer res.Body.Close()
	out, err := io.ReadAll(res.Body)
	if err != nil {
		return 0, nil, "answer cut off"
	}
	if res.StatusCode >= 500 {
		return 0, nil, retriable(strconv.Itoa(res.StatusCode))
	}
	return res.StatusCode, out, ""
}

// sendOne writes one event; it returns the event back when it is to be
// retried.
func (r *durRun) sendOne(ev durEvent) ([]durEvent, error) {
	code, body, retry := r.post("", ev)
	if retry != "" {
		r.failed(string(retry))
		return []durEvent{ev}, nil
	}
	var a durAnswer
	if code != http.StatusOK || json.Unmarshal(body, &a) != nil {
		return nil, fmt.Errorf("write %s: %d %s", ev.ID, code, body)
	}
	return nil, r.acked(ev, a)
}

// sendBatch writes events as one batch; it returns those whose results ask
// for a retry (or all of them when the request failed).
func (r *durRun) sendBatch(events []durEvent) ([]durEvent, error) {
	code, body, retry := r.post("/batch", map[string]any{"events": events})
	if retry != "" {
		r.failed(string(retry))
		return events, nil
	}
	var out struct {
		Results []durAnswer `json:"results"`
	}
	if code != http.StatusOK || json.Unmarshal(body, &out) != nil || len(out.Results) != len(events) {
		return nil, fmt.Errorf("batch of %d from %s: %d %s", len(events), events[0].ID, code, body)
	}
	var again []durEvent
	for i, a := range out.Results {
		if a.Error != nil && (a.Error.Code == "unavailable" || a.Error.Code == "internal") {
			r.failed("batch result " + a.Error.Code)
			again = append(again, events[i])
			continue
		}
		if err := r.acked(events[i], a); err != nil {
			return nil, err
		}
	}
	return again, nil
}

// acked records an acknowledged event, after checking that the answer is
// one: no error, the event's member, and a period for every view.
func (r *durRun) acked(ev durEvent, a durAnswer) error {
	if a.Error != nil {
		return fmt.Errorf("event %s refused: %s: %s", ev.ID, a.Error.Code, a.Error.Message)
	}
	if a.Member != ev.Member || len(a.Views) != len(durViews) {
		return fmt.Errorf("event %s (member %s): answer for member %q with %d views", ev.ID, ev.Member, a.Member, len(a.Views))
	}
	ack := durAck{id: ev.ID, member: ev.Member, value: ev.Value, duplicate: a.Duplicate, phase: r.phase.Load(), periods: map[string]string{}}
	for _, v := range durViews {
		p := a.Views[v].Period
		if p == "" {
			return fmt.Errorf("event %s: answer names no period for view %s", ev.ID, v)
		}
		ack.periods[v] = p
	}
	r.mu.Lock()
	if r.byID == nil {
		r.byID = map[string]int{}
	}
	r.byID[ev.ID] = len(r.acks)
	r.acks = append(r.acks, ack)
	r.mu.Unlock()
	return nil
}

// resend sends an acknowledged event again, retrying until it is answered,
// and checks that the answer is a duplicate naming the original's periods
// (but for the rolling window, named by today's date). It reports false
// when the writer must stop.
func (r *durRun) resend(ev durEvent, rng *rand.Rand) bool {
	r.mu.Lock()
	orig := r.acks[r.byID[ev.ID]]
	r.resent++
	r.mu.Unlock()
	for attempt := 0; ; attempt++ {
		if time.Now().After(r.drain) {
			return false
		}
		if attempt > 0 {
			time.Sleep(time.Duration(20+rng.IntN(200)) * time.Millisecond)
		}
		r.attempts.Add(1)
		code, body, retry := r.post("", ev)
		if retry != "" {
			r.failed(string(retry))
			continue
		}
		var a durAnswer
		err := json.Unmarshal(body, &a)
		ok := err == nil && code == http.StatusOK && a.Duplicate && a.Member == ev.Member
		for _, v := range durViews {
			ok = ok && (v == "7d" || a.Views[v].Period == orig.periods[v])
		}
		if !ok {
			r.mu.Lock()
			r.errs = append(r.errs, fmt.Sprintf("event %s sent again after its answer %v: %d %s, want a duplicate in the same periods", ev.ID, orig.periods, code, body))
			r.mu.Unlock()
			return false
		}
		return true
	}
}

// chaos kills the server or Redis with SIGKILL and starts it again on the
// same address; Redis comes back from its append-only file.
func (r *durRun) chaos(what string, app *appProcess, srv *redistest.Server) error {
	ctx, cancel := context.WithTimeout(context.Background(), appStartTimeout)
	defer cancel()
	switch what {
	case "app":
		if err := app.Kill(); err != nil {
			return err
		}
		return app.Start(ctx)
	case "redis":
		if err := srv.Stop(); err != nil {
			return err
		}
		time.Sleep(durRedisDown)
		return srv.Start(ctx)
	case "redis-hang":
		if err := syscall.Kill(srv.PID(), syscall.SIGSTOP); err != nil {
			return err
		}
		time.Sleep(durRedisHang)
		return syscall.Kill(srv.PID(), syscall.SIGCONT)
	}
	return fmt.Errorf("unknown chaos %q", what)
}

func (r *durRun) resentCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.resent
}

func (r *durRun) failures() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.errs)
}

func (r *durRun) all() []durAck {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.acks)
}

func (r *durRun) causes() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var parts []string
	for c, n := range r.causeN {
		parts = append(parts, fmt.Sprintf("%s=%d", c, n))
	}
	sort.Strings(parts)
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, " ")
}

// ackedByPhase counts acknowledged events between kills: index 0 before the
// first kill is over, index i after the i-th (the service back).
func (r *durRun) ackedByPhase() []int {
	n := make([]int, len(durChaos)+1)
	for _, a := range r.all() {
		n[a.phase]++
	}
	return n
}

// durReport is the outcome of the check.
type durReport struct {
	acked      int      // events acknowledged (each once)
	retried    int      // events sent more than once
	attempts   int      // requests sent
	duplicates int      // acknowledgements that said duplicate: an earlier try had counted
	lost       int64    // acknowledged events missing, in the view missing most
	double     int      // members whose score exceeds the acknowledged sum in some period
	diffs      []string // "view period member: want got" of every period that differs
}

// durCheck is the brute-force model: it sums the acknowledged increments
// per view, period and member (each event once, whatever its retries), and
// compares every period the answers named with what the API lists there.
func durCheck(t *testing.T, baseURL string, acks []durAck) durReport {
	t.Helper()
	rep := durReport{acked: len(acks)}
	want := map[string]map[string]map[string]int64{} // view -> period -> member -> sum
	add := func(view, period, member string, v int64) {
		if want[view] == nil {
			want[view] = map[string]map[string]int64{}
		}
		if want[view][period] == nil {
			want[view][period] = map[string]int64{}
		}
		want[view][period][member] += v
	}
	seen := map[string]bool{}
	windowEnds := map[string]bool{}
	for _, a := range acks {
		if seen[a.id] {
			t.Fatalf("event %s acknowledged twice by the writers themselves", a.id)
		}
		seen[a.id] = true
		if a.duplicate {
			rep.duplicates++
		}
		for _, v := range durViews {
			if v != "7d" {
				add(v, a.periods[v], a.member, a.value)
			}
		}
		windowEnds[a.periods["7d"]] = true
	}
	// A 7d window holds the days from 6 days before its last day to it: if
	// the run crossed midnight, events of the day before count in today's
	// window too.
	for end := range windowEnds {
		last, err := time.Parse(time.DateOnly, end)
		if err != nil {
			t.Fatalf("7d period %q is not a date: %v", end, err)
		}
		add("7d", end, "", 0)
		for day, members := range want["day"] {
			d, err := time.Parse(time.DateOnly, day)
			if err != nil {
				t.Fatalf("day period %q is not a date: %v", day, err)
			}
			if !d.After(last) && !d.Before(last.AddDate(0, 0, -6)) {
				for m, v := range members {
					add("7d", end, m, v)
				}
			}
		}
		delete(want["7d"][end], "")
	}

	// Every event adds 1 to one period of each view, so what a view's
	// periods lack in all is the number of acknowledged events it lost.
	over := map[string]bool{}
	for _, view := range durViews {
		var lost int64
		for period, members := range want[view] {
			got := durReadPeriod(t, baseURL, view, period)
			for _, m := range sortedKeys(members, got) {
				w, g := members[m], got[m]
				switch {
				case g < w:
					lost += w - g
				case g > w:
					over[m] = true
				default:
					continue
				}
				rep.diffs = append(rep.diffs, fmt.Sprintf("%s %s %s: %d %d", view, period, m, w, g))
			}
		}
		rep.lost = max(rep.lost, lost)
	}
	rep.double = len(over)
	sort.Strings(rep.diffs)
	return rep
}

// durReadPeriod lists a whole period through the API: member -> score.
func durReadPeriod(t *testing.T, baseURL, view, period string) map[string]int64 {
	t.Helper()
	got := map[string]int64{}
	client := &http.Client{Timeout: 10 * time.Second}
	for offset := 0; ; offset += 1000 {
		u := fmt.Sprintf("%s/api/v1/boards/%s/%s?period=%s&offset=%d&limit=1000", baseURL, durBoard, view, url.QueryEscape(period), offset)
		res, err := client.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		var page struct {
			Period  string `json:"period"`
			Total   int    `json:"total"`
			Entries []struct {
				Member string `json:"member"`
				Score  int64  `json:"score"`
			} `json:"entries"`
		}
		if res.StatusCode != http.StatusOK || json.Unmarshal(body, &page) != nil || page.Period != period {
			t.Fatalf("GET %s: %d %s", u, res.StatusCode, body)
		}
		for _, e := range page.Entries {
			got[e.Member] = e.Score
		}
		if len(page.Entries) < 1000 || offset+len(page.Entries) >= page.Total {
			if len(got) != page.Total {
				t.Errorf("GET %s: total %d, listed %d members", u, page.Total, len(got))
			}
			return got
		}
	}
}

// sortedKeys returns the members of a and b, sorted.
func sortedKeys(a, b map[string]int64) []string {
	var keys []string
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys
}
