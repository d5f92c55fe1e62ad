// Package static embeds the stylesheet and the scripts that pages load,
// served under /static/ by versioned names (app.3f2a9c1b07.css): a name
// changes whenever its content does, so browsers and CDNs may keep each
// one for a year.
package static

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"path"
	"strings"
)

// FS holds the files served under /static/.
//
//go:embed app.css app.js favicon.svg
var FS embed.FS

// versions maps each file to the first 10 hex digits of its SHA-256.
var versions = func() map[string]string {
	out := map[string]string{}
	entries, err := fs.ReadDir(FS, ".")
	if err != nil {
		panic(err)
	}
	for _, e := range entries {
		data, err := fs.ReadFile(FS, e.Name())
		if err != nil {
			panic(err)
		}
		sum := sha256.Sum256(data)
		out[e.Name()] = hex.EncodeToString(sum[:])[:10]
	}
	return out
}()

// URL is the versioned path of an embedded file: /static/app.<hash>.css.
func URL(name string) string {
	v, ok := versions[name]
	if !ok {
		return "/static/" + name
	}
	ext := path.Ext(name)
	return "/static/" + strings.TrimSuffix(name, ext) + "." + v + ext
}

// Resolve maps a requested name to the embedded file: a versioned name of
// the current content (versioned true), a versioned name of other content
// (a page of another release: the current file, versioned false), or a
// plain name.
func Resolve(req string) (name string, versioned bool) {
	ext := path.Ext(req)
	base := strings.TrimSuffix(req, ext)
	if i := strings.LastIndexByte(base, '.'); i > 0 {
		name = base[:i] + ext
		if v, ok := versions[name]; ok {
			return name, v == base[i+1:]
		}
	}
	return req, false
}
