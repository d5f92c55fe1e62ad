package views

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"golang.org/x/image/font"
	"golang.org/x/image/font/gofont/gobold"
	"golang.org/x/image/font/gofont/goregular"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/font/sfnt"
	"golang.org/x/image/math/fixed"
)

// Preview images: the 1200×630 PNGs that link previews (og:image) show for
// a rank card and a period's recap. They are drawn in Go with the Go fonts
// (BSD-licensed, embedded as Go bytes by golang.org/x/image), so the server
// needs no font files, no browser and no C library to draw them.

// PreviewWidth and PreviewHeight are the size link previews expect.
const (
	PreviewWidth  = 1200
	PreviewHeight = 630
)

// RankPreview is a rank card's preview, every line already worded.
type RankPreview struct {
	Name   string // the member's name (untrusted text)
	Rank   string // "#7"
	Of     string // "of 1,204"
	Score  string // "1,024 points" or "3:14.727"
	Board  string // "Points · Week"
	Period string // "Week of 16 Nov 2026"
}

// RecapPreview is a period's preview: its podium and how many took part.
type RecapPreview struct {
	Board  string // "Points · Week"
	Period string // "Week of 16 Nov 2026"
	Podium []PreviewPlace
	Total  string // "1,204 members"
}

// PreviewPlace is one place of a recap's podium.
type PreviewPlace struct {
	Rank  int64
	Name  string // untrusted text
	Score string
}

// maxPreviewRunes bounds the text measured for one line, so a long name
// costs no more to draw than a short one.
const maxPreviewRunes = 80

// Painter draws preview images. Its fonts are parsed once and shared;
// faces hold scratch buffers, so each drawing makes its own.
type Painter struct {
	regular, bold *opentype.Font
	pal           *previewPalette
	enc           png.Encoder
}

// NewPainter parses the embedded fonts.
func NewPainter() (*Painter, error) {
	regular, err := opentype.Parse(goregular.TTF)
	if err != nil {
		return nil, err
	}
	bold, err := opentype.Parse(gobold.TTF)
	if err != nil {
		return nil, err
	}
	return &Painter{regular: regular, bold: bold, pal: newPreviewPalette(), enc: png.Encoder{CompressionLevel: png.BestSpeed, BufferPool: &pngBuffers{}}}, nil
}

// pngBuffers reuses the encoder's scratch between drawings.
type pngBuffers struct{ pool sync.Pool }

func (p *pngBuffers) Get() *png.EncoderBuffer {
	b, _ := p.pool.Get().(*png.EncoderBuffer)
	return b
}

func (p *pngBuffers) Put(b *png.EncoderBuffer) { p.pool.Put(b) }

// Colours of the light theme (static/app.css), which every host page's
// preview card sits well on. The drawing is paletted: one byte a pixel and
// no PNG filtering, several times faster to encode than RGBA. Text is
// anti-aliased with 15 blends of each colour pair it is drawn in.
const (
	palBG = iota
	palPanel
	palLine
	palText
	palMuted
	palAccent
	palGold
	palSilver
	palBronze
	palBase // blends follow
)

var previewBase = [palBase]color.RGBA{
	palBG:     {0xf7, 0xf8, 0xfa, 0xff},
	palPanel:  {0xff, 0xff, 0xff, 0xff},
	palLine:   {0xe3, 0xe6, 0xeb, 0xff},
	palText:   {0x16, 0x18, 0x1d, 0xff},
	palMuted:  {0x5b, 0x61, 0x70, 0xff},
	palAccent: {0x1d, 0x4e, 0xd8, 0xff},
	palGold:   {0xb7, 0x79, 0x1f, 0xff},
	palSilver: {0x6b, 0x72, 0x80, 0xff},
	palBronze: {0x9a, 0x5b, 0x2e, 0xff},
}

// blendLevels is how many steps of coverage a glyph's edge is drawn in.
const blendLevels = 16

// previewPalette is the palette and, for each (text colour, background)
// pair text is drawn in, the index of each level of coverage; under holds
// the background each index was blended on.
type previewPalette struct {
	colors color.Palette
	blend  [palBase][palBase][blendLevels]uint8 // [fg][bg][level]; 0 where not built
	under  [256]uint8
}

func newPreviewPalette() *previewPalette {
	pp := &previewPalette{}
	for i, c := range previewBase {
		pp.colors = append(pp.colors, c)
		pp.under[i] = uint8(i)
	}
	for _, fg := range []int{palText, palMuted, palAccent, palPanel} {
		for _, bg := range []int{palPanel, palGold, palSilver, palBronze} {
			if fg == bg {
				continue
			}
			f, b := previewBase[fg], previewBase[bg]
			pp.blend[fg][bg][0] = uint8(bg)
			for l := 1; l < blendLevels-1; l++ {
				mix := func(x, y uint8) uint8 {
					return uint8((int(x)*l + int(y)*(blendLevels-1-l) + (blendLevels-1)/2) / (blendLevels - 1))
				}
				pp.blend[fg][bg][l] = uint8(len(pp.colors))
				pp.under[len(pp.colors)] = uint8(bg)
				pp.colors = append(pp.colors, color.RGBA{mix(f.R, b.R), mix(f.G, b.G), mix(f.B, b.B), 0xff})
			}
			pp.blend[fg][bg][blendLevels-1] = uint8(fg)
		}
	}
	return pp
}

// canvas is one drawing in progress.
type canvas struct {
	p   *Painter
	img *image.Paletted
	buf sfnt.Buffer
}

func (p *Painter) canvas() *canvas {
	img := image.NewPaletted(image.Rect(0, 0, PreviewWidth, PreviewHeight), p.pal.colors)
	c := &canvas{p: p, img: img}
	c.rect(0, 0, PreviewWidth, PreviewHeight, palBG)
	// The card: a white panel with a hairline, an accent bar on its left.
	c.rect(40, 40, PreviewWidth-40, PreviewHeight-40, palLine)
	c.rect(42, 42, PreviewWidth-42, PreviewHeight-42, palPanel)
	c.rect(42, 42, 58, PreviewHeight-42, palAccent)
	return c
}

func (c *canvas) rect(x0, y0, x1, y1 int, col uint8) {
	r := image.Rect(x0, y0, x1, y1).Intersect(c.img.Rect)
	for y := r.Min.Y; y < r.Max.Y; y++ {
		row := c.img.Pix[c.img.PixOffset(r.Min.X, y):c.img.PixOffset(r.Max.X, y)]
		for i := range row {
			row[i] = col
		}
	}
}

// face makes a face of f at size pixels (72 dpi: points are pixels).
func (c *canvas) face(f *opentype.Font, size float64) font.Face {
	face, err := opentype.NewFace(f, &opentype.FaceOptions{Size: size, DPI: 72, Hinting: font.HintingFull})
	if err != nil {
		// Only a non-positive size fails; every size here is a constant.
		panic(fmt.Sprintf("preview face: %v", err))
	}
	return face
}

// text draws s in colour col with its baseline at (x, y), clipped to
// maxW pixels; it returns the drawn width.
func (c *canvas) text(f *opentype.Font, size float64, col uint8, x, y, maxW int, s string) int {
	face := c.face(f, size)
	defer face.Close()
	s = c.clip(face, c.drawable(f, s), maxW)
	return c.draw(face, col, x, y, s)
}

// textRight draws s ending at x.
func (c *canvas) textRight(f *opentype.Font, size float64, col uint8, x, y, maxW int, s string) {
	face := c.face(f, size)
	defer face.Close()
	s = c.clip(face, c.drawable(f, s), maxW)
	c.draw(face, col, x-font.MeasureString(face, s).Ceil(), y, s)
}

// draw lays s out as font.Drawer does (advances and kerning) and blends
// each glyph's coverage into the palette.
func (c *canvas) draw(face font.Face, col uint8, x, y int, s string) int {
	dot := fixed.P(x, y)
	prev := rune(-1)
	for _, r := range s {
		if prev >= 0 {
			dot.X += face.Kern(prev, r)
		}
		dr, mask, mp, adv, ok := face.Glyph(dot, r)
		if ok {
			c.blend(dr, mask, mp, col)
		}
		dot.X += adv
		prev = r
	}
	return (dot.X - fixed.I(x)).Ceil()
}

// blend draws colour col through mask (a glyph's coverage) over dr.
func (c *canvas) blend(dr image.Rectangle, mask image.Image, mp image.Point, col uint8) {
	pal := c.p.pal
	clipped := dr.Intersect(c.img.Rect)
	alpha, _ := mask.(*image.Alpha)
	for y := clipped.Min.Y; y < clipped.Max.Y; y++ {
		for x := clipped.Min.X; x < clipped.Max.X; x++ {
			mx, my := mp.X+x-dr.Min.X, mp.Y+y-dr.Min.Y
			var a uint32
			if alpha != nil {
				a = uint32(alpha.AlphaAt(mx, my).A)
			} else {
				_, _, _, a16 := mask.At(mx, my).RGBA()
				a = a16 >> 8
			}
			level := (a*(blendLevels-1) + 127) / 255
			if level == 0 {
				continue
			}
			i := c.img.PixOffset(x, y)
			bg := pal.under[c.img.Pix[i]]
			switch {
			case pal.blend[col][bg][blendLevels-1] == col:
				c.img.Pix[i] = pal.blend[col][bg][level]
			case level >= blendLevels/2: // a pair with no blends: no edge
				c.img.Pix[i] = col
			}
		}
	}
}

// drawable makes untrusted text safe to draw: at most maxPreviewRunes
// runes, control and formatting characters (bidi overrides, zero-width
// joiners) dropped, runs of space folded, and every character the font
// lacks (scripts and emoji the Go fonts do not cover) drawn as U+FFFD.
func (c *canvas) drawable(f *opentype.Font, s string) string {
	var b strings.Builder
	n, space := 0, false
	for _, r := range s {
		if n >= maxPreviewRunes {
			break
		}
		switch {
		case r == utf8.RuneError, unicode.Is(unicode.Co, r):
			r = unicode.ReplacementChar
		case unicode.IsSpace(r):
			if space || b.Len() == 0 {
				continue
			}
			space = true
			b.WriteByte(' ')
			n++
			continue
		case unicode.IsControl(r), unicode.Is(unicode.Cf, r), unicode.Is(unicode.Mn, r) && b.Len() == 0:
			continue
		}
		if gi, err := f.GlyphIndex(&c.buf, r); err != nil || gi == 0 {
			r = unicode.ReplacementChar
		}
		space = false
		b.WriteRune(r)
		n++
	}
	return strings.TrimRight(b.String(), " ")
}

// clip shortens s with an ellipsis until it fits in maxW pixels.
func (c *canvas) clip(face font.Face, s string, maxW int) string {
	limit := fixed.I(maxW)
	if font.MeasureString(face, s) <= limit {
		return s
	}
	runes := []rune(s)
	for n := len(runes) - 1; n > 0; n-- {
		t := strings.TrimRight(string(runes[:n]), " ") + "…"
		if font.MeasureString(face, t) <= limit {
			return t
		}
	}
	return "…"
}

// encode writes the drawing as a PNG.
func (c *canvas) encode() ([]byte, error) {
	var out bytes.Buffer
	out.Grow(64 << 10)
	if err := c.p.enc.Encode(&out, c.img); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// Layout of both previews: a 64 px margin inside the panel.
const (
	previewLeft  = 104
	previewRight = PreviewWidth - 96
	previewWide  = previewRight - previewLeft
)

// header draws the board and the period along the top, the brand at the
// bottom: what every preview shares.
func (c *canvas) header(board, period string) {
	c.text(c.p.bold, 34, palText, previewLeft, 124, previewWide, board)
	c.text(c.p.regular, 30, palMuted, previewLeft, 172, previewWide, period)
	c.text(c.p.bold, 26, palAccent, previewLeft, PreviewHeight-84, previewWide/2, "Standings")
}

// RankCard draws a rank card's preview.
func (p *Painter) RankCard(rp RankPreview) ([]byte, error) {
	c := p.canvas()
	c.header(rp.Board, rp.Period)
	c.text(p.bold, 72, palText, previewLeft, 290, previewWide, rp.Name)
	w := c.text(p.bold, 120, palAccent, previewLeft, 440, previewWide/2, rp.Rank)
	c.text(p.regular, 48, palMuted, previewLeft+w+20, 440, previewWide-w-20, rp.Of)
	c.textRight(p.bold, 40, palText, previewRight, PreviewHeight-84, previewWide/2, rp.Score)
	return c.encode()
}

// Recap draws a period's preview: the podium, then the total.
func (p *Painter) Recap(rp RecapPreview) ([]byte, error) {
	c := p.canvas()
	c.header(rp.Board, rp.Period)
	if len(rp.Podium) == 0 {
		c.text(p.bold, 56, palMuted, previewLeft, 340, previewWide, "Nobody scored")
	}
	for i, pl := range rp.Podium {
		if i >= 3 {
			break
		}
		y := 270 + i*90
		medal := uint8(palGold + min(max(pl.Rank, 1), 3) - 1)
		c.rect(previewLeft, y-48, previewLeft+72, y+14, medal)
		face := c.face(p.bold, 36)
		label := fmt.Sprintf("#%d", pl.Rank)
		lw := font.MeasureString(face, label).Ceil()
		face.Close()
		c.text(p.bold, 36, palPanel, previewLeft+36-lw/2, y-4, 72, label)
		sface := c.face(p.regular, 44)
		sw := font.MeasureString(sface, pl.Score).Ceil()
		sface.Close()
		c.text(p.bold, 48, palText, previewLeft+100, y, previewWide-100-min(sw, previewWide/3)-32, pl.Name)
		c.textRight(p.regular, 44, palText, previewRight, y, previewWide/3, pl.Score)
	}
	c.textRight(p.bold, 30, palMuted, previewRight, PreviewHeight-84, previewWide/2, rp.Total)
	return c.encode()
}
