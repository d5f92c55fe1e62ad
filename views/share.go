package views

import "context"

// pageURLKey is where WithPageURL keeps a page's address.
type pageURLKey struct{}

// WithPageURL gives the components rendered with ctx the absolute address
// of the page they make (its og:url); the web layer sets it for every
// page, so each page's head names itself without every model carrying it.
func WithPageURL(ctx context.Context, url string) context.Context {
	return context.WithValue(ctx, pageURLKey{}, url)
}

// PageURL is the page's absolute address, or "" when none was given.
func PageURL(ctx context.Context) string {
	u, _ := ctx.Value(pageURLKey{}).(string)
	return u
}

// orText is s, or else when s is empty: a page whose handler names no
// description still has one.
func orText(s, other string) string {
	if s == "" {
		return other
	}
	return s
}
