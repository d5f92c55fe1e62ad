package ranking

import (
	_ "embed"
	"time"
)

// The relay.lua, hookclaim.lua, hookdone.lua and hookretry.lua protocols:
// KEYS and ARGV of relaying an outbox event (stream entry and webhook
// deliveries), of claiming due deliveries, of reporting an attempt and of
// the admin retry, and their replies.

//go:embed scripts/relay.lua
var relayLua string

var relayScript = newScript(relayLua)

//go:embed scripts/hookclaim.lua
var hookClaimLua string

var hookClaimScript = newScript(hookClaimLua)

//go:embed scripts/hookdone.lua
var hookDoneLua string

var hookDoneScript = newScript(hookDoneLua)

//go:embed scripts/hookretry.lua
var hookRetryLua string

var hookRetryScript = newScript(hookRetryLua)

// hookdone.lua's answers.
const (
	hookDelivered = "delivered"
	hookRetry     = "retry"
	hookFailed    = "failed"
	hookLost      = "lost"
)

// hookretry.lua's answers (besides "not:<status>").
const (
	hookRetryPending = "pending"
	hookRetryMissing = "missing"
)

// newDelivery is one webhook delivery relay.lua creates.
type newDelivery struct {
	id, typ, url, board string
	body                []byte
}

// relayRequest builds KEYS and ARGV for relay.lua: one outbox entry of
// board b, its stream fields (nil: not appended to the stream) and its
// webhook deliveries.
func (s *Store) relayRequest(b *Board, entryID string, stream []any, deliveries []newDelivery) (keys []string, args []any) {
	keys = make([]string, 0, 3+len(deliveries))
	keys = append(keys, s.ResultsStream(), s.relayedKey(), s.hookKey(DeliveryPending))
	appendFlag := "0"
	if stream != nil {
		appendFlag = "1"
	}
	args = make([]any, 0, 4+len(stream)+5*len(deliveries))
	args = append(args, b.ID+" "+entryID, appendFlag, itoa(s.hooks.giveUp.Milliseconds()), itoa(int64(len(stream))))
	args = append(args, stream...)
	for _, d := range deliveries {
		keys = append(keys, s.deliveryKey(d.id))
		args = append(args, d.id, d.typ, d.url, d.board, string(d.body))
	}
	return keys, args
}

// claimRequest builds KEYS and ARGV for hookclaim.lua.
func (s *Store) claimRequest(lease time.Duration, token string, ids []string) (keys []string, args []any) {
	keys = make([]string, 0, 1+len(ids))
	keys = append(keys, s.hookKey(DeliveryPending))
	args = make([]any, 0, 2+len(ids))
	args = append(args, itoa(lease.Milliseconds()), token)
	for _, id := range ids {
		keys = append(keys, s.deliveryKey(id))
		args = append(args, id)
	}
	return keys, args
}

// doneRequest builds KEYS and ARGV for hookdone.lua. status is the HTTP
// status, 0 when there was no answer.
func (s *Store) doneRequest(id, token string, ok bool, status int, errText string, backoff time.Duration) (keys []string, args []any) {
	keys = []string{s.hookKey(DeliveryPending), s.hookKey(DeliveryDelivered), s.hookKey(DeliveryFailed), s.deliveryKey(id)}
	okFlag, st := "0", ""
	if ok {
		okFlag = "1"
	}
	if status != 0 {
		st = itoa(int64(status))
	}
	args = []any{token, okFlag, st, errText, itoa(backoff.Milliseconds()),
		itoa(keepDelivered.Milliseconds()), itoa(keepFailed.Milliseconds()), id}
	return keys, args
}

// retryRequest builds KEYS and ARGV for hookretry.lua.
func (s *Store) retryRequest(id string) (keys []string, args []any) {
	return []string{s.hookKey(DeliveryFailed), s.hookKey(DeliveryPending), s.deliveryKey(id)},
		[]any{id, itoa(s.hooks.giveUp.Milliseconds())}
}

// How long finished deliveries stay listed.
const (
	keepDelivered = 7 * 24 * time.Hour
	keepFailed    = 30 * 24 * time.Hour
)
