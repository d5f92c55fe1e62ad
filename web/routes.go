package web

// routes registers every route of the server, in one place.
func (s *Server) routes() {
	e := s.echo
	e.Use(s.observe, s.securityHeaders, s.compress, s.contentSecurity, s.checkQuery, s.limitBody, s.readBody, s.requestTimeout)

	e.GET("/", s.handleIndex)
	e.GET("/boards/:board", s.handleBoardRedirect)
	e.GET("/boards/:board/:view", s.handleBoardPage) // also {view}.csv
	e.GET("/boards/:board/:view/members", s.handleFindMember)
	e.GET("/boards/:board/:view/members/:member", s.handleRankCard)
	e.GET("/boards/:board/:view/results", s.handleResultsPage)
	e.GET("/boards/:board/:view/widget", s.handleWidgetPage)
	e.GET("/embed/:board/:view", s.handleEmbed)
	e.GET("/static/*", s.handleStatic)
	e.GET("/favicon.ico", s.handleFavicon)
	e.GET("/api", s.handleAPIPage)
	e.GET("/ws/:board/:view", s.handleLive)

	e.GET("/healthz", s.handleHealthz)
	e.GET("/readyz", s.handleReadyz)
	e.GET("/metrics", s.handleMetrics)

	api := e.Group("/api/v1")
	api.GET("/openapi.json", s.handleOpenAPI)
	api.GET("/boards", s.handleListBoards)
	api.POST("/boards/:board/scores", s.handleWriteScore, s.requireWriter)
	api.POST("/boards/:board/scores/batch", s.handleWriteBatch, s.requireWriter)
	api.GET("/boards/:board/:view", s.handlePage)
	api.GET("/boards/:board/segments/:name", s.handleSegmentValues)
	api.GET("/boards/:board/members", s.handleSearchMembers)
	api.GET("/boards/:board/:view/members/:member", s.handleMember)
	api.GET("/boards/:board/:view/moves", s.handleMoves)
	api.GET("/boards/:board/:view/results", s.handleResults)
	api.GET("/boards/:board/:view/results/:period", s.handleResult)
	api.DELETE("/boards/:board/members/:member", s.handleRemoveMember, s.requireAdmin)
	api.POST("/actions/:action", s.handleAction, s.requireWriter)
	api.GET("/webhooks/deliveries", s.handleDeliveries, s.requireAdmin)
	api.POST("/webhooks/deliveries/:id/retry", s.handleRetryDelivery, s.requireAdmin)
}
