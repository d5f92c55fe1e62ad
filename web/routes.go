package web

import (
	"net/http"

	"github.com/labstack/echo/v4"
)

// routes registers every route of the server, in one place.
func (s *Server) routes() {
	e := s.echo
	e.Use(s.headBody, s.observe, s.securityHeaders, s.compress, s.contentSecurity, s.checkQuery, s.ignoreBody, s.requestTimeout)
	s.bodyRoutes = map[string]bool{}

	s.get(e, "/", s.handleIndex)
	s.get(e, "/boards/:board", s.handleBoardRedirect)
	s.get(e, "/boards/:board/:view", s.handleBoardPage) // also {view}.csv
	s.get(e, "/boards/:board/:view/members", s.handleFindMember)
	s.get(e, "/boards/:board/:view/members/:member", s.handleRankCard)
	s.get(e, "/boards/:board/:view/results", s.handleResultsPage)
	s.get(e, "/boards/:board/:view/widget", s.handleWidgetPage)
	s.get(e, "/embed/:board/:view", s.handleEmbed)
	s.get(e, "/static/*", s.handleStatic)
	s.get(e, "/favicon.ico", s.handleFavicon)
	s.get(e, "/api", s.handleAPIPage)
	s.get(e, "/ws/:board/:view", s.handleLive)

	s.get(e, "/healthz", s.handleHealthz)
	s.get(e, "/readyz", s.handleReadyz)
	s.get(e, "/metrics", s.handleMetrics)

	api := e.Group("/api/v1")
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
	api.DELETE("/boards/:board/members/:member", s.handleRemoveMember, s.requireAdmin)
	s.postBody(api, "/actions/:action", s.handleAction, s.requireWriter, MaxBody)
	s.get(api, "/webhooks/deliveries", s.handleDeliveries, s.requireAdmin)
	api.POST("/webhooks/deliveries/:id/retry", s.handleRetryDelivery, s.requireAdmin) // no body
}

// router is where routes are added: the Echo or one of its groups.
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
