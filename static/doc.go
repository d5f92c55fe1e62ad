// Package static embeds the stylesheet and the scripts that pages load,
// served under /static/.
package static

import "embed"

// FS holds the files served under /static/.
//
//go:embed app.css app.js favicon.svg
var FS embed.FS
