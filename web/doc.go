// Package web serves Standings over HTTP with Echo: the JSON API, the
// operational endpoints, API-key authentication, security headers and the
// one error funnel that turns domain errors into the contract's JSON error
// bodies. Routes are listed in routes.go. It depends on ranking for the
// domain; only cmd/standings imports it.
package web
