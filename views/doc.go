// Package views holds the templ components of the pages, rank cards and
// embeds, their view models, and the DOM ids shared with the websocket
// frames (ids.go).
package views
