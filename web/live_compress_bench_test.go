package web

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/coder/websocket"
)

// BenchmarkLiveCompression writes one frame to a websocket per op, with
// each permessage-deflate mode, for a diff-sized and a whole-table-sized
// frame: what one viewer's frame costs the server (the reader runs in the
// same process, so its inflate is counted too).
func BenchmarkLiveCompression(b *testing.B) {
	row := `<tr data-testid="standings-row" data-member="m-0042" class=""><td class="rank"><span data-testid="rank" data-live-rank>42</span> </td><th scope="row" class="who" data-testid="member"><span class="avatar hue-3" aria-hidden="true">AO</span> <a href="/boards/points/week/members/m-0042">Amara Okafor</a> </th><td class="score"><span data-testid="score" data-live-score>1,024</span></td></tr>`
	diff := `{"t":"diff","id":"standings-points-week-100","period":"2026-W48","n":100,"rows":[{"m":"m-0042","i":3,"h":"` + strings.ReplaceAll(row, `"`, `\"`) + `","d":"+8","b":1}],"ranks":[[3,0],[96,1]],"ticker":"<section class=\"ticker\">…</section>"}`
	full := `<div id="standings-points-week-100">` + strings.Repeat(row, 100) + `</div>`
	for _, mode := range []struct {
		name string
		mode websocket.CompressionMode
	}{{"none", websocket.CompressionDisabled}, {"no-context-takeover", websocket.CompressionNoContextTakeover}, {"context-takeover", websocket.CompressionContextTakeover}} {
		for _, frame := range []struct{ name, body string }{{"diff", diff}, {"whole", full}} {
			b.Run(mode.name+"/"+frame.name, func(b *testing.B) {
				conns := make(chan *websocket.Conn, 1)
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					c, err := websocket.Accept(w, r, &websocket.AcceptOptions{CompressionMode: mode.mode})
					if err != nil {
						return
					}
					conns <- c
					<-r.Context().Done()
				}))
				defer srv.Close()
				ctx := context.Background()
				cc, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http"), &websocket.DialOptions{CompressionMode: websocket.CompressionContextTakeover})
				if err != nil {
					b.Fatal(err)
				}
				defer cc.CloseNow()
				cc.SetReadLimit(1 << 20)
				sc := <-conns
				defer sc.CloseNow()
				done := make(chan struct{})
				go func() {
					defer close(done)
					for range b.N {
						if _, _, err := cc.Read(ctx); err != nil {
							return
						}
					}
				}()
				b.SetBytes(int64(len(frame.body)))
				b.ResetTimer()
				for range b.N {
					if err := sc.Write(ctx, websocket.MessageText, []byte(frame.body)); err != nil {
						b.Fatal(err)
					}
				}
				<-done
			})
		}
	}
}
