package web

import (
	"net/url"

	"github.com/standings/standings/ranking"
	"github.com/standings/standings/views"
)

// Every URL the server puts in a page is built here, from the route
// patterns of routes.go. Member ids are path-escaped; period ids go in the
// query, where an absent period means the current one (and a live page).

// apiPrefix is where the JSON API lives (the api group of routes.go).
const apiPrefix = "/api/v1"

// boardPath is a board view's page.
func boardPath(board, view string) string {
	return "/boards/" + url.PathEscape(board) + "/" + url.PathEscape(view)
}

// cardPath is a member's rank card page.
func cardPath(board, view, member string) string {
	return boardPath(board, view) + "/members/" + url.PathEscape(member)
}

// withQuery adds the pairs of kv whose value is not empty as a query.
func withQuery(path string, kv ...string) string {
	q := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] != "" {
			q.Set(kv[i], kv[i+1])
		}
	}
	if len(q) == 0 {
		return path
	}
	return path + "?" + q.Encode()
}

// previewPath is a rank card's preview image (og:image) in period p.
func previewPath(board, view, member string, p views.PeriodNav, seg ranking.Segment) string {
	period := p.ID
	if p.IsCurrent {
		period = ""
	}
	return withQuery(cardPath(board, view, member)+"/preview.png", "period", period, "segment", seg.String())
}

// recapImagePath is a period's recap image (og:image of its recap).
func recapImagePath(board, view, period string, seg ranking.Segment) string {
	return withQuery(boardPath(board, view)+"/recap.png", "period", period, "segment", seg.String())
}

// liveURL is the live feed of a board view (or segment board view) with
// more query parameters.
func liveURL(board, view string, seg ranking.Segment, kv ...string) string {
	return withQuery(livePath(board, view), append([]string{"segment", seg.String()}, kv...)...)
}

// resultsPath is a view's results page; resultJSONPath one result's JSON.
func resultsPath(board, view string) string { return boardPath(board, view) + "/results" }

// recapPath is one period's recap page.
func recapPath(board, view, period string) string {
	return withQuery(boardPath(board, view)+"/recap", "period", period)
}

func resultJSONPath(board, view, period string) string {
	return apiPrefix + resultsPath(board, view) + "/" + url.PathEscape(period)
}

// livePath is the websocket of a board view.
func livePath(board, view string) string {
	return "/ws/" + url.PathEscape(board) + "/" + url.PathEscape(view)
}

// embedPath is a board view's embeddable table (a widget's iframe).
func embedPath(board, view string) string {
	return "/embed/" + url.PathEscape(board) + "/" + url.PathEscape(view)
}

// findPath is the board page's member finder.
func findPath(board, view string) string { return boardPath(board, view) + "/members" }

// apiBoardPath is a board view's standings in the JSON API.
func apiBoardPath(board, view string) string { return apiPrefix + boardPath(board, view) }

// apiMembersPath is the member search of a board in the JSON API.
func apiMembersPath(board string) string {
	return apiPrefix + "/boards/" + url.PathEscape(board) + "/members"
}

// apiSegmentPath lists the values of a board's segment name in the JSON API.
func apiSegmentPath(board, name string) string {
	return apiPrefix + "/boards/" + url.PathEscape(board) + "/segments/" + url.PathEscape(name)
}

// openAPIPath is the OpenAPI description of the JSON API.
const openAPIPath = apiPrefix + "/openapi.json"
