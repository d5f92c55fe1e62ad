package ranking

import (
	"bytes"
	"context"
	"crypto/hmac"
	crand "crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// Webhooks: how deliveries are kept, claimed and recorded.
//
// Keys: the `wh:` rows of the table in `ranking/keys.go`.
//
// A delivery id is `wh_` + 24 hex of SHA-256(prefix, board, outbox entry id,
// url): the same however often an entry is relayed. The body is built in Go
// from the outbox entry (`created_at` = the entry id's ms), byte-identical on
// every relay and retry; the signature is computed per attempt.
//
// Sender (`RunWebhooks`, every instance, polls every second and is woken by
// its own relays): `ZRANGE pending 0 n-1` picks candidates; hookclaim.lua
// (KEYS: pending + each candidate's hash; ARGV: lease ms, token, ids; reply
// `{now, {{id,url,type,body,attempts}…}}`) takes those due by Redis's clock,
// sets their score to now + lease (30 s) and their `lease` to a per-claim
// token, and counts the attempt (`HINCRBY attempts`) as it goes in flight, so
// an attempt cut short by a crash is counted too. The POST has a 10 s
// timeout. hookdone.lua (KEYS: pending, delivered, failed, hash; ARGV: token,
// ok, status, error, backoff ms, keep delivered ms, keep failed ms, id; reply
// delivered/retry/failed/lost) records the attempt's outcome (not counting it
// again) only if the hash still holds the token: a sender whose lease ran out
// (and was re-claimed) changes nothing. A failure before `deadline_ms`
// (created + 24 h) reschedules at now + backoff (20 s·2^(n−1), at most 1 h, ×
// [0.5, 1)); at or after it, the delivery is failed. A sender that dies or
// shuts down records no outcome; the lease runs out and any instance sends it
// again (`attempts` already counts the one cut short). hookretry.lua (KEYS:
// failed, pending, hash; ARGV: id, give-up ms; reply
// pending/missing/not:<status>) is the admin retry.

// Webhook delivery defaults (contract section 10).
const (
	// DefaultWebhookGiveUp is how long a failing delivery is retried
	// before it is marked failed.
	DefaultWebhookGiveUp = 24 * time.Hour
	// WebhookTimeout is how long a receiver has to answer 2xx.
	WebhookTimeout = 10 * time.Second
	// DefaultWebhookLease is how long one attempt holds a delivery: longer
	// than WebhookTimeout, so a slow attempt is never sent twice at once;
	// a crashed sender's delivery is taken by another after it.
	DefaultWebhookLease = 30 * time.Second
	// DefaultWebhookBaseDelay is the first retry's delay (before jitter:
	// the first retry comes 10 to 20 s after the first failure); each
	// further one doubles, up to DefaultWebhookMaxDelay.
	DefaultWebhookBaseDelay = 20 * time.Second
	DefaultWebhookMaxDelay  = time.Hour
	// DefaultWebhookParallel bounds one instance's attempts in flight.
	DefaultWebhookParallel = 8
)

// Delivery states.
const (
	DeliveryPending   = "pending"
	DeliveryDelivered = "delivered"
	DeliveryFailed    = "failed"
)

// hookState holds a store's webhook settings and its attempt counters.
type hookState struct {
	giveUp time.Duration
	wake   chan struct{} // a relay created deliveries: send them now
	kick   chan struct{} // an outbox entry waits: relay it now

	delivered, retried, failed, lost atomic.Int64
}

// poke wakes a waiting loop without blocking.
func poke(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// KickRelay asks this instance's result recorder to relay the outboxes now
// rather than at its next pass (a removal wrote member.removed).
func (s *Store) KickRelay() { poke(s.hooks.kick) }

// WebhookStats counts this instance's delivery attempts by outcome.
type WebhookStats struct {
	Delivered int64 // answered 2xx
	Retried   int64 // failed, another attempt scheduled
	Failed    int64 // failed after the give-up time: marked failed
	Lost      int64 // the lease ran out before the outcome was recorded
}

// WebhookStats returns this instance's attempt counters.
func (s *Store) WebhookStats() WebhookStats {
	return WebhookStats{
		Delivered: s.hooks.delivered.Load(), Retried: s.hooks.retried.Load(),
		Failed: s.hooks.failed.Load(), Lost: s.hooks.lost.Load(),
	}
}

// webhookEvent maps an outbox entry type to the webhook event it sends.
func webhookEvent(outboxType string) string {
	switch outboxType {
	case "result.recorded":
		return EventPeriodFinal
	case "result.amended":
		return EventResultAmended
	case "member.removed":
		return EventMemberRemoved
	case "league.final":
		return EventLeagueFinal
	}
	return ""
}

// deliveryBody is a delivery's JSON body, in the contract's field order.
type deliveryBody struct {
	ID        string          `json:"id"`
	Type      string          `json:"type"`
	CreatedAt string          `json:"created_at"`
	Data      json.RawMessage `json:"data"`
}

// DeliveryID is the id of the delivery of one outbox entry of a board to
// one webhook URL: the same however often the entry is relayed.
func (s *Store) DeliveryID(board, entryID, url string) string {
	sum := sha256.Sum256([]byte(s.prefix + "\n" + board + "\n" + entryID + "\n" + url))
	return "wh_" + hex.EncodeToString(sum[:12])
}

var deliveryIDPattern = regexp.MustCompile(`^wh_[0-9a-f]{24}$`)

// deliveriesFor builds the deliveries of one outbox entry: one per
// webhook that takes the event on the board. created_at is the entry's
// time (Redis's clock when the event was written), so every relay of the
// entry builds the same body.
func (s *Store) deliveriesFor(b *Board, entryID, event string, data []byte) []newDelivery {
	if event == "" {
		return nil
	}
	var out []newDelivery
	created := entryTime(entryID)
	for _, w := range s.cfg.Webhooks {
		if !w.Wants(event, b.ID) {
			continue
		}
		id := s.DeliveryID(b.ID, entryID, w.URL)
		body := marshalNoHTML(deliveryBody{ID: id, Type: event, CreatedAt: created, Data: data})
		out = append(out, newDelivery{id: id, typ: event, url: w.URL, board: b.ID, body: body})
	}
	return out
}

// entryTime is the RFC 3339 UTC time, with milliseconds, of a stream entry
// id ("<ms>-<seq>").
func entryTime(id string) string {
	ms, _ := strconv.ParseInt(strings.SplitN(id, "-", 2)[0], 10, 64)
	return formatMS(ms)
}

// formatMS formats Unix milliseconds as the contract's timestamps.
func formatMS(ms int64) string {
	return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z07:00")
}

// relayEntry relays one outbox entry of board b: results go to the
// results stream, and every event to the webhooks that take it, in one
// relay.lua call. It reports whether a stream entry was appended. id names
// the entry among the board's outboxes: its stream id, with "/<shard>"
// for a shard's outbox of a sharded board (the shards' ids may repeat).
func (s *Store) relayEntry(ctx context.Context, b *Board, m redis.XMessage, id string) (bool, error) {
	str := func(f string) string { v, _ := m.Values[f].(string); return v }
	typ := str("type")
	var stream []any
	var data []byte
	switch typ {
	case "result.recorded", "result.amended":
		stream = []any{"type", typ, "board", b.ID, "view", str("view"), "period", str("period"),
			"digest", str("digest"), "result", str("result")}
		if str("round") != "" { // an amended league cohort result
			stream = []any{"type", typ, "board", b.ID, "round", str("round"), "tier", str("tier"),
				"cohort", str("cohort"), "digest", str("digest"), "result", str("result")}
		}
		data = []byte(str("result"))
	case "league.final":
		stream = []any{"type", typ, "board", b.ID, "round", str("round"), "result", str("result")}
		data = []byte(str("result"))
	case "member.removed":
		// Amend first: the entry stays in the outbox until the results
		// listing the member are amended, however the removal's process
		// ended. An amendment already made is not made twice.
		member, at := str("member"), str("at")
		if removedMS, err := parseInt(at); err == nil && member != "" {
			if _, err := s.amendRemoved(ctx, b, member, removedMS); err != nil {
				return false, err
			}
		}
		data = marshalNoHTML(struct {
			Board  string `json:"board"`
			Member string `json:"member"`
		}{b.ID, str("member")})
	}
	deliveries := s.deliveriesFor(b, id, webhookEvent(typ), data)
	keys, args := s.relayRequest(b, id, stream, deliveries)
	n, err := relayScript.Run(ctx, s.rdb, keys, args...).Int()
	if err != nil {
		return false, wrapRedis(err)
	}
	if n == 1 && len(deliveries) > 0 {
		poke(s.hooks.wake)
	}
	return n == 1 && stream != nil, nil
}

// WebhookOptions tune RunWebhooks; zero values take the defaults.
type WebhookOptions struct {
	// Client sends the deliveries: nil takes one that follows no
	// redirects (a 3xx is not an acknowledgement). Each attempt is
	// bounded by WebhookTimeout whatever the client's own timeout.
	Client *http.Client
	// Poll is how often due deliveries are looked for (default 1 s); a
	// relay on this instance wakes the sender at once.
	Poll      time.Duration
	Lease     time.Duration
	BaseDelay time.Duration
	MaxDelay  time.Duration
	Parallel  int
	// OnError hears Redis errors of the loop (not receivers' failures,
	// which are recorded on the delivery).
	OnError func(error)
}

func (o *WebhookOptions) defaults() {
	if o.Client == nil {
		o.Client = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	if o.Poll <= 0 {
		o.Poll = time.Second
	}
	if o.Lease <= 0 {
		o.Lease = DefaultWebhookLease
	}
	if o.BaseDelay <= 0 {
		o.BaseDelay = DefaultWebhookBaseDelay
	}
	if o.MaxDelay <= 0 {
		o.MaxDelay = DefaultWebhookMaxDelay
	}
	if o.Parallel <= 0 {
		o.Parallel = DefaultWebhookParallel
	}
}

// claimed is one delivery taken by hookclaim.lua.
type claimed struct {
	id, url, typ, token string
	body                []byte
	attempts            int64 // counting this one: hookclaim.lua counts an attempt as it starts
}

// RunWebhooks sends due webhook deliveries until ctx ends. Every instance
// may run it: each delivery is in flight on one instance at a time (a
// lease in Redis), and one whose sender dies is sent again by any
// instance once the lease runs out. When ctx ends, attempts in flight are
// abandoned without a verdict (their lease runs out; they are sent again).
func (s *Store) RunWebhooks(ctx context.Context, opts WebhookOptions) {
	opts.defaults()
	name := senderName()
	var seq atomic.Int64
	slots := make(chan struct{}, opts.Parallel)
	var wg sync.WaitGroup
	defer wg.Wait()
	t := time.NewTicker(opts.Poll)
	defer t.Stop()
	for {
		if free := opts.Parallel - len(slots); free > 0 {
			token := name + ":" + strconv.FormatInt(seq.Add(1), 10)
			batch, err := s.claimDeliveries(ctx, free, opts.Lease, token)
			if err != nil && opts.OnError != nil && ctx.Err() == nil {
				opts.OnError(err)
			}
			for _, d := range batch {
				slots <- struct{}{}
				wg.Add(1)
				go func() {
					defer wg.Done()
					defer func() { <-slots }()
					s.attempt(ctx, &opts, d)
				}()
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-s.hooks.wake:
		}
	}
}

// senderName names this process's claims: host, pid and a random part.
func senderName() string {
	host, _ := os.Hostname()
	var r [4]byte
	_, _ = crand.Read(r[:])
	return fmt.Sprintf("%s-%d-%s", host, os.Getpid(), hex.EncodeToString(r[:]))
}

// claimDeliveries takes up to n due deliveries for token.
func (s *Store) claimDeliveries(ctx context.Context, n int, lease time.Duration, token string) ([]claimed, error) {
	// The lowest scores are the due ones (a delivery in flight scores its
	// lease's end, in the future); the script takes only those due by
	// Redis's clock.
	ids, err := s.rdb.ZRange(ctx, s.hookKey(DeliveryPending), 0, int64(n-1)).Result()
	if err != nil || len(ids) == 0 {
		return nil, wrapRedis(err)
	}
	keys, args := s.claimRequest(lease, token, ids)
	rep, err := hookClaimScript.Run(ctx, s.rdb, keys, args...).Slice()
	if err != nil {
		return nil, wrapRedis(err)
	}
	if len(rep) != 2 {
		return nil, Errorf(EINTERNAL, "hookclaim: unexpected reply %v", rep)
	}
	rows, _ := rep[1].([]any)
	out := make([]claimed, 0, len(rows))
	for _, r := range rows {
		f, _ := r.([]any)
		if len(f) != 5 {
			return nil, Errorf(EINTERNAL, "hookclaim: unexpected row %v", r)
		}
		str := func(v any) string { x, _ := v.(string); return x }
		att, _ := strconv.ParseInt(str(f[4]), 10, 64)
		out = append(out, claimed{id: str(f[0]), url: str(f[1]), typ: str(f[2]), body: []byte(str(f[3])), attempts: att, token: token})
	}
	return out, nil
}

// Signature returns the Standings-Signature header value of body sent at
// unix second t: "t=<t>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>".
func Signature(secret []byte, t int64, body []byte) string {
	mac := hmac.New(sha256.New, secret)
	ts := strconv.FormatInt(t, 10)
	mac.Write([]byte(ts))
	mac.Write([]byte{'.'})
	mac.Write(body)
	return "t=" + ts + ",v1=" + hex.EncodeToString(mac.Sum(nil))
}

// attempt sends one claimed delivery and records the outcome.
func (s *Store) attempt(ctx context.Context, opts *WebhookOptions, d claimed) {
	status, errText := s.post(ctx, opts.Client, d)
	if ctx.Err() != nil {
		return // shutting down: no verdict; the lease runs out and it is sent again
	}
	ok := status >= 200 && status < 300
	backoff := retryDelay(d.attempts, opts.BaseDelay, opts.MaxDelay)
	keys, args := s.doneRequest(d.id, d.token, ok, status, errText, backoff)
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	ans, err := hookDoneScript.Run(rctx, s.rdb, keys, args...).Text()
	if err != nil {
		// The outcome is not recorded: the lease runs out and the delivery
		// is sent again (at least once).
		if opts.OnError != nil {
			opts.OnError(wrapRedis(err))
		}
		return
	}
	switch ans {
	case hookDelivered:
		s.hooks.delivered.Add(1)
	case hookRetry:
		s.hooks.retried.Add(1)
	case hookFailed:
		s.hooks.failed.Add(1)
	case hookLost:
		s.hooks.lost.Add(1)
	}
}

// post sends d once. It returns the HTTP status (0 when there was no
// answer) and, when not 2xx, a short description.
func (s *Store) post(ctx context.Context, client *http.Client, d claimed) (int, string) {
	w, ok := s.cfg.Webhook(d.url)
	if !ok {
		return 0, "no webhook with this url is configured"
	}
	rctx, cancel := context.WithTimeout(ctx, WebhookTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodPost, d.url, bytes.NewReader(d.body))
	if err != nil {
		return 0, clip(err.Error())
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "Standings-Webhooks/1")
	req.Header.Set("Standings-Delivery", d.id)
	req.Header.Set("Standings-Signature", Signature(w.Secret(), time.Now().Unix(), d.body))
	resp, err := client.Do(req)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return 0, fmt.Sprintf("no answer within %s", WebhookTimeout)
		}
		return 0, clip(err.Error())
	}
	defer resp.Body.Close()
	// Read a little of the answer so the connection can be reused; a
	// receiver's body is never stored.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return resp.StatusCode, ""
	}
	return resp.StatusCode, "HTTP " + strconv.Itoa(resp.StatusCode)
}

// clip bounds an error text stored on a delivery.
func clip(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}

// retryDelay is the delay after failed attempt n (1-based): base·2^(n−1),
// at most max, times a random factor in [0.5, 1) so receivers that fail
// together are not retried together.
func retryDelay(n int64, base, max time.Duration) time.Duration {
	d := base
	for i := int64(1); i < n && d < max; i++ {
		d *= 2
	}
	d = min(d, max)
	return time.Duration(float64(d) * (0.5 + rand.Float64()/2))
}

// Delivery is one webhook delivery as the admin API lists it.
type Delivery struct {
	ID            string  `json:"id"`
	Type          string  `json:"type"`
	URL           string  `json:"url"`
	Status        string  `json:"status"`
	Attempts      int64   `json:"attempts"`
	LastStatus    *int64  `json:"last_status"`
	NextAttemptAt *string `json:"next_attempt_at"`
	Board         string  `json:"board"`
	CreatedAt     string  `json:"created_at"`
	LastError     *string `json:"last_error"`
}

// MaxDeliveriesLimit bounds one listing of deliveries.
const MaxDeliveriesLimit = 1000

// Deliveries lists up to limit deliveries in a state: pending ones soonest
// due first (one in flight shows when its lease ends), delivered and
// failed ones newest first.
func (s *Store) Deliveries(ctx context.Context, status string, limit int) ([]Delivery, error) {
	if status != DeliveryPending && status != DeliveryDelivered && status != DeliveryFailed {
		return nil, Errorf(EINVALID, "status must be pending, failed or delivered, got %q", status)
	}
	if limit < 1 || limit > MaxDeliveriesLimit {
		return nil, Errorf(EINVALID, "limit must be from 1 to %d, got %d", MaxDeliveriesLimit, limit)
	}
	var ids []string
	var err error
	if status == DeliveryPending {
		ids, err = s.rdb.ZRange(ctx, s.hookKey(status), 0, int64(limit-1)).Result()
	} else {
		ids, err = s.rdb.ZRevRange(ctx, s.hookKey(status), 0, int64(limit-1)).Result()
	}
	if err != nil {
		return nil, wrapRedis(err)
	}
	out := make([]Delivery, 0, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	fields := []string{"id", "type", "url", "status", "attempts", "last_status", "next_ms", "board", "created_ms", "last_error"}
	cmds := make([]*redis.SliceCmd, len(ids))
	_, err = s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, id := range ids {
			cmds[i] = p.HMGet(ctx, s.deliveryKey(id), fields...)
		}
		return nil
	})
	if err != nil {
		return nil, wrapRedis(err)
	}
	for _, c := range cmds {
		v := c.Val()
		str := func(i int) string { x, _ := v[i].(string); return x }
		if str(0) == "" {
			continue // expired meanwhile
		}
		d := Delivery{ID: str(0), Type: str(1), URL: str(2), Status: str(3), Board: str(7)}
		d.Attempts, _ = strconv.ParseInt(str(4), 10, 64)
		if st, err := strconv.ParseInt(str(5), 10, 64); err == nil {
			d.LastStatus = &st
		}
		if ms, err := strconv.ParseInt(str(6), 10, 64); err == nil && d.Status == DeliveryPending {
			t := formatMS(ms)
			d.NextAttemptAt = &t
		}
		if ms, err := strconv.ParseInt(str(8), 10, 64); err == nil {
			d.CreatedAt = formatMS(ms)
		}
		if e := str(9); e != "" {
			d.LastError = &e
		}
		out = append(out, d)
	}
	return out, nil
}

// RetryDelivery makes a failed delivery pending and due now, with a new
// give-up time. ENOTFOUND for an unknown id, ECONFLICT when it is not
// failed.
func (s *Store) RetryDelivery(ctx context.Context, id string) error {
	if !deliveryIDPattern.MatchString(id) {
		return Errorf(EINVALID, "%q is not a delivery id (wh_ and 24 hex digits)", id)
	}
	keys, args := s.retryRequest(id)
	ans, err := hookRetryScript.Run(ctx, s.rdb, keys, args...).Text()
	if err != nil {
		return wrapRedis(err)
	}
	switch {
	case ans == hookRetryPending:
		poke(s.hooks.wake)
		return nil
	case ans == hookRetryMissing:
		return Errorf(ENOTFOUND, "no delivery %q", id)
	case strings.HasPrefix(ans, "not:"):
		return Errorf(ECONFLICT, "delivery %q is %s, not failed: only a failed delivery can be retried", id, strings.TrimPrefix(ans, "not:"))
	}
	return Errorf(EINTERNAL, "hookretry: unexpected reply %q", ans)
}

// DeliveryCounts returns how many deliveries are in each state.
func (s *Store) DeliveryCounts(ctx context.Context) (map[string]int64, error) {
	states := []string{DeliveryPending, DeliveryDelivered, DeliveryFailed}
	cmds := make([]*redis.IntCmd, len(states))
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, st := range states {
			cmds[i] = p.ZCard(ctx, s.hookKey(st))
		}
		return nil
	})
	if err != nil {
		return nil, wrapRedis(err)
	}
	out := make(map[string]int64, len(states))
	for i, st := range states {
		out[st] = cmds[i].Val()
	}
	return out, nil
}
