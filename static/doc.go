// Package static embeds the stylesheet and the vendored scripts that pages
// load, served under /static/.
package static
