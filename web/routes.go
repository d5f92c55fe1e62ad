package web

import (
	"net/http"

	"github.com/labstack/echo/v4"
)

// rooms are the kinds of route by path (rooms.go), first match first:
// a path in none of them is a page. exact rooms are one path, the others
// every path under the prefix, routes or not.
var rooms = []struct {
	prefix string
	exact  bool
	kind   kind
}{
	{prefix: "/api/", kind: kindAPI}, // "/api" itself is a page
	{prefix: "/ws/", kind: kindLive},
	{prefix: "/embed/", kind: kindEmbed},
	{prefix: "/static/", kind: kindStatic},
	{prefix: "/favicon.ico", exact: true, kind: kindStatic},
	{prefix: "/metrics", exact: true, kind: kindMetrics},
	{prefix: "/metrics", kind: kindOps},
	{prefix: "/healthz", kind: kindOps},
	{prefix: "/readyz", kind: kindOps},
}

// routes registers every route of the server, in one place, by room. The
// groups carry no Echo middleware: a group's Use adds catch-all routes
// that would answer 404 where a wrong method gets 405 with Allow. Every
// request passes the one chain instead, which reads its kind.
func (s *Server) routes() {
	e := s.echo
	e.Use(s.chain()...)
	s.bodyRoutes = map[string]bool{}

	pages := e.Group("")
	s.get(pages, "/", s.handleIndex)
	s.get(pages, "/boards/:board", s.handleBoardRedirect)
	s.get(pages, "/boards/:board/:view", s.handleBoardPage) // also {view}.csv
	s.get(pages, "/boards/:board/league", s.handleLeaguePage)
	s.get(pages, "/boards/:board/league/:tier/:cohort", s.handleCohortPage) // also {cohort}.csv
	s.get(pages, "/boards/:board/:view/members", s.handleFindMember)
	s.get(pages, "/boards/:board/:view/members/:member", s.handleRankCard)
	s.get(pages, "/boards/:board/:view/members/:member/preview.png", s.handleRankPreview)
	s.get(pages, "/boards/:board/:view/recap.png", s.handleRecapPreview)
	s.get(pages, "/boards/:board/:view/results", s.handleResultsPage)
	s.get(pages, "/boards/:board/:view/recap", s.handleRecapPage)
	s.get(pages, "/boards/:board/:view/widget", s.handleWidgetPage)
	s.get(pages, "/api", s.handleAPIPage)

	embed := e.Group("/embed")
	s.get(embed, "/:board/:view", s.handleEmbed)
	s.get(embed, "/:board/league", s.handleEmbedLeague)

	static := e.Group("")
	s.get(static, "/static/*", s.handleStatic)
	s.get(static, "/favicon.ico", s.handleFavicon)

	live := e.Group("/ws")
	s.get(live, "/:board/:view", s.handleLive)
	s.get(live, "/:board/league/:tier/:cohort", s.handleLiveCohort)

	ops := e.Group("")
	s.get(ops, "/healthz", s.handleHealthz)
	s.get(ops, "/readyz", s.handleReadyz)
	s.get(ops, "/metrics", s.handleMetrics)

	api := e.Group(apiPrefix)
	s.get(api, "/openapi.json", s.handleOpenAPI)
	s.get(api, "/boards", s.handleListBoards)
	s.postBody(api, "/boards/:board/scores", s.handleWriteScore, s.requireWriter, MaxBody)
	s.postBody(api, "/boards/:board/scores/batch", s.handleWriteBatch, s.requireWriter, MaxBody)
	s.get(api, "/boards/:board/:view", s.handlePage)
	s.get(api, "/boards/:board/segments/:name", s.handleSegmentValues)
	s.get(api, "/boards/:board/members", s.handleSearchMembers)
	s.get(api, "/boards/:board/:view/members/:member", s.handleMember)
	s.get(api, "/boards/:board/:view/moves", s.handleMoves)
	s.get(api, "/boards/:board/:view/results", s.handleResults)
	s.get(api, "/boards/:board/:view/results/:period", s.handleResult)
	s.get(api, "/boards/:board/league", s.handleLeague)
	s.get(api, "/boards/:board/league/:tier/:cohort", s.handleCohort)
	s.get(api, "/boards/:board/league/members/:member", s.handleLeagueMember)
	api.DELETE("/boards/:board/members/:member", s.handleRemoveMember, s.requireAdmin)
	s.postBody(api, "/actions/:action", s.handleAction, s.requireWriter, MaxBody)
	s.get(api, "/webhooks/deliveries", s.handleDeliveries, s.requireAdmin)
	api.POST("/webhooks/deliveries/:id/retry", s.handleRetryDelivery, s.requireAdmin) // no body
}

// router is where routes are added: one of the Echo's groups.
type router interface {
	Add(method, path string, h echo.HandlerFunc, m ...echo.MiddlewareFunc) *echo.Route
}

// get registers a GET route and its HEAD twin (headBody drops the body).
func (s *Server) get(r router, path string, h echo.HandlerFunc, m ...echo.MiddlewareFunc) {
	r.Add(http.MethodGet, path, h, m...)
	r.Add(http.MethodHead, path, h, m...)
}

// postBody registers a POST route that takes a body of at most limit
// bytes, read only once auth lets the request through. Every other route's
// body is ignored unread (ignoreBody).
func (s *Server) postBody(r router, path string, h echo.HandlerFunc, auth echo.MiddlewareFunc, limit int64) {
	rt := r.Add(http.MethodPost, path, h, auth, s.readBody(limit))
	s.bodyRoutes[rt.Method+" "+rt.Path] = true
}
