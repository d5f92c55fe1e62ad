package views

import (
	"strconv"

	"github.com/a-h/templ"
	"github.com/standings/standings/static"
)

// StaticURL is the path of a file served from static/.
func StaticURL(name string) string { return static.URL(name) }

func rankText(r int64) string { return strconv.FormatInt(r, 10) }

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func safe(u string) templ.SafeURL { return templ.SafeURL(u) }

// medal is the row class of ranks 1 to 3 (ties share a medal: a second
// #1 is gold too).
func medal(rank int64) string {
	switch rank {
	case 1:
		return "podium medal-1"
	case 2:
		return "podium medal-2"
	}
	return "podium medal-3"
}

// orScore is a score column's heading, "Score" when none is set.
func orScore(h string) string {
	if h == "" {
		return "Score"
	}
	return h
}

// orDefault is s, or def when s is empty.
func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func boolText(b bool) string {
	if b {
		return "true"
	}
	return "false"
}
