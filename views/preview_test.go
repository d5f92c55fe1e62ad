package views_test

import (
	"bytes"
	"image/png"
	"os"
	"strings"
	"testing"

	"github.com/standings/standings/views"
)

func mustPainter(tb testing.TB) *views.Painter {
	tb.Helper()
	p, err := views.NewPainter()
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

// checkPNG fails unless b is a 1200×630 PNG.
func checkPNG(t *testing.T, b []byte) {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("not a PNG: %v", err)
	}
	if r := img.Bounds(); r.Dx() != views.PreviewWidth || r.Dy() != views.PreviewHeight {
		t.Fatalf("size %v, want 1200×630", r)
	}
}

// Untrusted names draw whatever they hold: scripts the font lacks,
// emoji, bidi overrides, control characters, invalid UTF-8, huge lengths.
func TestPreviewUntrustedNames(t *testing.T) {
	p := mustPainter(t)
	names := map[string]string{
		"empty":     "",
		"rtl":       "שלום עולם مرحبا",
		"override":  "\u202eevil\u202c name",
		"emoji":     "Ana 🏎️👩🏽‍🚀 Okafor",
		"control":   "a\x00b\x07c\nd\te\x1b[31m",
		"invalid":   "bad \xff\xfe utf8",
		"combining": "\u0301\u0301e\u0301",
		"long":      strings.Repeat("Wolfeschlegelsteinhausenbergerdorff ", 200),
		"spaces":    strings.Repeat(" ", 500),
		"cjk":       "東京 太郎",
	}
	for name, s := range names {
		t.Run(name, func(t *testing.T) {
			b, err := p.RankCard(views.RankPreview{Name: s, Rank: "#7", Of: "of 1,204", Score: "1,024 points", Board: s, Period: s})
			if err != nil {
				t.Fatal(err)
			}
			checkPNG(t, b)
			b, err = p.Recap(views.RecapPreview{Board: s, Period: s, Total: s, Podium: []views.PreviewPlace{{Rank: 1, Name: s, Score: s}, {Rank: 2, Name: s, Score: "9"}, {Rank: 2, Name: "x", Score: "1"}}})
			if err != nil {
				t.Fatal(err)
			}
			checkPNG(t, b)
		})
	}
}

// Different content draws different images; the same content the same.
func TestPreviewDiffers(t *testing.T) {
	p := mustPainter(t)
	rp := views.RankPreview{Name: "Ana", Rank: "#7", Of: "of 1,204", Score: "1,024 points", Board: "Points · Week", Period: "Week of 16 Nov 2026"}
	a, _ := p.RankCard(rp)
	again, _ := p.RankCard(rp)
	rp.Name = "Nora"
	b, _ := p.RankCard(rp)
	if !bytes.Equal(a, again) {
		t.Error("the same card drew two images")
	}
	if bytes.Equal(a, b) {
		t.Error("two members drew one image")
	}
	empty, err := p.Recap(views.RecapPreview{Board: "Points · Week", Period: "Week of 16 Nov 2026", Total: "0 members"})
	if err != nil {
		t.Fatal(err)
	}
	checkPNG(t, empty)
	if dir := os.Getenv("STANDINGS_PREVIEW_DIR"); dir != "" { // to look at them
		os.WriteFile(dir+"/card.png", a, 0o644)
		r, _ := p.Recap(views.RecapPreview{Board: "Laps · Week", Period: "Week of 16 Nov 2026", Total: "1,204 members", Podium: []views.PreviewPlace{
			{Rank: 1, Name: "Amara Okafor", Score: "3:14.727"}, {Rank: 2, Name: "Leila Haddad", Score: "3:15.002"}, {Rank: 3, Name: "Diego Fernández de la Vega y Castillo", Score: "3:16.100"}}})
		os.WriteFile(dir+"/recap.png", r, 0o644)
	}
}

func BenchmarkPreviewRankCard(b *testing.B) {
	p := mustPainter(b)
	rp := views.RankPreview{Name: "Ana Okafor", Rank: "#7", Of: "of 1,204", Score: "1,024 points", Board: "Points · Week", Period: "Week of 16 Nov 2026"}
	for b.Loop() {
		if _, err := p.RankCard(rp); err != nil {
			b.Fatal(err)
		}
	}
}
