package web_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/standings/standings/web"
)

// TestWebhookAdminRoutes: deliveries are listed by state for admins only;
// a pending one cannot be retried (409), unknown ids are 404, bad input
// 422 and changes nothing; /metrics counts deliveries by state.
func TestWebhookAdminRoutes(t *testing.T) {
	t.Setenv("STANDINGS_TEST_HOOK_SECRET", "s3cret")
	f := MustFixtureOf(t, `
boards: [{id: points, views: [day, all], lateness: 1h, keep: 1}]
webhooks:
  - {url: "http://127.0.0.1:9/hook", secret_env: STANDINGS_TEST_HOOK_SECRET, events: [period.final]}
`, web.Options{WriteRate: -1})
	mr, store := f.mr, f.store

	MustOK(t, f.do(t, "POST", "/api/v1/boards/points/scores", writeKey, `{"member":"a","value":3}`))
	mr.SetTime(time.Date(2026, 11, 23, 1, 0, 0, 0, time.UTC)) // the 22nd is final
	ctx := context.Background()
	if _, err := store.RecordResults(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := store.RelayResults(ctx); err != nil {
		t.Fatal(err)
	}

	list := MustOK(t, f.do(t, "GET", "/api/v1/webhooks/deliveries?status=pending", adminKey, "")).JSON(t)
	ds, _ := list["deliveries"].([]any)
	if len(ds) != 1 {
		t.Fatalf("pending %v", list)
	}
	d, _ := ds[0].(map[string]any)
	id, _ := d["id"].(string)
	if d["type"] != "period.final" || d["url"] != "http://127.0.0.1:9/hook" || d["status"] != "pending" ||
		d["attempts"] != nil && d["attempts"].(interface{ String() string }).String() != "0" || d["last_status"] != nil ||
		d["next_attempt_at"] != "2026-11-23T01:00:00.000Z" || !strings.HasPrefix(id, "wh_") {
		t.Fatalf("pending delivery %v", d)
	}
	for _, status := range []string{"failed", "delivered"} {
		if r := MustOK(t, f.do(t, "GET", "/api/v1/webhooks/deliveries?status="+status, adminKey, "")); strings.TrimSpace(r.Body) != `{"deliveries":[]}` {
			t.Errorf("%s: %s", status, r.Body)
		}
	}

	before := f.dump()
	for _, c := range []struct {
		method, path, key string
		status            int
	}{
		{"GET", "/api/v1/webhooks/deliveries?status=pending", "", http.StatusUnauthorized},
		{"GET", "/api/v1/webhooks/deliveries?status=pending", writeKey, http.StatusForbidden},
		{"GET", "/api/v1/webhooks/deliveries", adminKey, http.StatusUnprocessableEntity},
		{"GET", "/api/v1/webhooks/deliveries?status=lost", adminKey, http.StatusUnprocessableEntity},
		{"GET", "/api/v1/webhooks/deliveries?status=failed&limit=0", adminKey, http.StatusUnprocessableEntity},
		{"GET", "/api/v1/webhooks/deliveries?status=failed&limit=1001", adminKey, http.StatusUnprocessableEntity},
		{"POST", "/api/v1/webhooks/deliveries/" + id + "/retry", "", http.StatusUnauthorized},
		{"POST", "/api/v1/webhooks/deliveries/" + id + "/retry", adminKey, http.StatusConflict},
		{"POST", "/api/v1/webhooks/deliveries/wh_000000000000000000000000/retry", adminKey, http.StatusNotFound},
		{"POST", "/api/v1/webhooks/deliveries/nope/retry", adminKey, http.StatusUnprocessableEntity},
	} {
		r := f.do(t, c.method, c.path, c.key, "")
		if r.Status != c.status {
			t.Errorf("%s %s: %d %s, want %d", c.method, c.path, r.Status, r.Body, c.status)
			continue
		}
		r.ErrorCode(t)
	}
	f.MustUnchanged(t, before)

	metrics := MustOK(t, f.get(t, "/metrics")).Body
	for _, want := range []string{`standings_webhook_deliveries{state="pending"} 1`, `standings_webhook_deliveries{state="failed"} 0`, `standings_webhook_attempts_total{outcome="delivered"} 0`} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}
