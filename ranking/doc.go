// Package ranking is the domain of Standings and its Redis adapter: boards
// and their validation, the period calendar, the exact score codec, the Lua
// scripts that apply events and read views, and the change feed.
//
// See docs/design.md for the key layout and the score encoding.
package ranking
