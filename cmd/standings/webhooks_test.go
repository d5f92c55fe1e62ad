package main

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/standings/standings/internal/testsupport"
	"github.com/standings/standings/ranking"
	"github.com/standings/standings/ranking/redistest"
)

// TestWebhooksEndToEnd: two instances of the binary on one Redis, with a
// webhook configured: the result each records on start (the last hour,
// final at once) reaches the receiver once, signed with the secret from
// the environment; a removal sends member.removed. An unset secret stops
// start-up.
func TestWebhooksEndToEnd(t *testing.T) {
	addr := redistest.MustStandalone(t)
	rdb := redis.NewClient(&redis.Options{Addr: addr, DB: 9})
	defer rdb.Close()
	if err := rdb.FlushDB(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	got := map[string][]string{} // type -> bodies
	ids := map[string]int{}
	const secret = "e2e-secret"
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		sig := r.Header.Get("Standings-Signature")
		ts, v1, _ := strings.Cut(strings.TrimPrefix(sig, "t="), ",v1=")
		mac := hmac.New(sha256.New, []byte(secret))
		mac.Write([]byte(ts + "." + string(body)))
		if hex.EncodeToString(mac.Sum(nil)) != v1 {
			t.Errorf("signature %q does not verify", sig)
		}
		mu.Lock()
		defer mu.Unlock()
		typ := "?"
		for _, k := range ranking.WebhookEvents {
			if strings.Contains(string(body), `"type":"`+k+`"`) {
				typ = k
			}
		}
		got[typ] = append(got[typ], string(body))
		ids[r.Header.Get("Standings-Delivery")]++
		w.WriteHeader(http.StatusOK)
	}))
	defer recv.Close()
	path := filepath.Join(t.TempDir(), "boards.yaml")
	os.WriteFile(path, []byte(`
boards:
  - {id: g, views: [hour, all], keep: 1, results_keep: 5, lateness: 0s}
webhooks:
  - {url: "`+recv.URL+`/hook", secret_env: STANDINGS_E2E_HOOK_SECRET, events: [period.final, member.removed]}
`), 0o600)

	m := NewMain()
	m.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	if err := m.ParseFlags([]string{"--config", path, "--addr", "127.0.0.1:0", "--redis", "redis://" + addr + "/9"}); err != nil {
		t.Fatal(err)
	}
	err := m.Run(context.Background())
	m.Close()
	if err == nil || !strings.Contains(err.Error(), "STANDINGS_E2E_HOOK_SECRET holding the signing secret is not set") {
		t.Fatalf("start with the secret unset: %v", err)
	}

	t.Setenv("STANDINGS_E2E_HOOK_SECRET", secret)
	t.Setenv("STANDINGS_ADMIN_KEYS", "admin-e2e")
	a := MustRun(t, "--config", path, "--redis", "redis://"+addr+"/9")
	_ = MustRun(t, "--config", path, "--redis", "redis://"+addr+"/9")
	count := func(typ string) int { mu.Lock(); defer mu.Unlock(); return len(got[typ]) }
	// keep 1: one past hour is retained, so one result (empty) on start.
	testsupport.WaitFor(t, "period.final", func() bool { return count("period.final") == 1 })

	if st, body := call(t, "POST", a.URL+"/api/v1/boards/g/scores", `{"member":"cheat","value":5}`); st != 200 {
		t.Fatalf("write: %d %s", st, body)
	}
	req, _ := http.NewRequest("DELETE", a.URL+"/api/v1/boards/g/members/cheat", nil)
	req.Header.Set("Authorization", "Bearer admin-e2e")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("DELETE: %d", res.StatusCode)
	}
	testsupport.WaitFor(t, "member.removed", func() bool { return count("member.removed") == 1 })
	time.Sleep(300 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	for id, n := range ids {
		if n != 1 {
			t.Errorf("delivery %s received %d times", id, n)
		}
	}
	if len(got["member.removed"]) != 1 || !strings.Contains(got["member.removed"][0], `"data":{"board":"g","member":"cheat"}`) {
		t.Errorf("member.removed bodies %v", got["member.removed"])
	}
	if len(got["period.final"]) != 1 || !strings.Contains(got["period.final"][0], `"board":"g","view":"hour"`) {
		t.Errorf("period.final bodies %v", got["period.final"])
	}
}
