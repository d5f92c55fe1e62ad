// Package web serves Standings over HTTP with Echo: the JSON API, the pages
// and embeds rendered from package views, CSV exports, and the websocket hub
// that pushes live top-N fragments. It depends on ranking for the domain.
package web
