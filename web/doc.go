// Package web serves Standings over HTTP with Echo: the JSON API, the
// operational endpoints, API-key authentication, security headers and the
// one error funnel that turns domain errors into the contract's JSON error
// bodies. Routes are listed in routes.go. It depends on ranking for the
// domain; only cmd/standings imports it.
package web

// Answers, caches and static files.
//
// - Security: every response gets a CSP (`script-src 'self'`, `style-src
//   'self'`, no inline anything: no nonce, so equal pages are equal bytes) and
//   `frame-ancestors 'none'` plus `X-Frame-Options: DENY`, except `/embed/`
//   which is `frame-ancestors *`. templ escapes every member id and name.
// - Every page and JSON answer is an `answer` (`render.go`: status, type,
//   bytes, Cache-Control) written by `serveAnswer`: a 200 to a GET gets a
//   weak ETag (64-bit xxHash of the bytes, before gzip) and 304 on a matching
//   `If-None-Match`; `Cache-Control` is the handler's (`cacheControl`: 1 s +
//   stale-while-revalidate for current periods, a day for final ones), else
//   `no-cache`; other answers `no-store`. An answer of 1 KiB or more goes to
//   a gzip client compressed whole, with its `Content-Length`, past the
//   compress middleware (only streamed CSV is chunked through it).
// - Current-period reads (board pages, embeds, the index) go through
//   `pageCache`: one Redis read per (board, view, slice) per 250 ms tick,
//   shared by every request (singleflight). A write through this instance
//   invalidates its board at once; other instances' writes show within a tick.
//   Past periods, rank cards and CSV are never cached.
// - Whole answers of current board pages and widgets are kept too
//   (`answerCache`, `shared.go`): per page tick, keyed by the parameters the
//   page depends on (board, view, page, segment; a widget's limit and theme),
//   under the board's write generation; the bytes are gzipped once and
//   written past the compress middleware to clients that accept gzip. A page
//   with `period`, `q`, `members` or `add` is built per request. Only 200s are
//   kept, within 32 MiB. So a page is at most two ticks old (a tick-old read,
//   kept a tick), and N viewers cost one render per tick. Both caches are a
//   `tickCache` (`tickcache.go`): values per key for a tick under the board's
//   write generation, one build per miss, bounded by a cost (4,096 reads;
//   32 MiB of answers) beyond which expired entries are swept and a new one
//   that does not fit is not kept.
// - `compress` (`compress.go`) gzips answers of 1 KiB or more (BestSpeed,
//   klauspost/compress), holding back the first KiB so that short answers
//   never touch a compressor; an answer that names its encoding passes.
// - The rank card makes one read, `Store.RankCard` (one transaction): headline
//   and neighbours, the chart (the last 12 periods ending with the card's
//   period), the current period of every view and who last passed the
//   member, one consistent snapshot and one round trip (on a board with
//   segments, a member's first card on an app server reads its `sm` record
//   first).
//   Its plain-language lines come from `insights.go`: ordered rule lists (the
//   race, the field, the trend); the first rule that applies in each list
//   gives that list's line.
// - The live part of a rank card (everything below its period navigation,
//   `card-<board>-<view>`) is one fragment (`views.CardBody`), rendered by
//   the same `cardModel` for the page and for live frames, each from one
//   `RankCard` read: the headline and the neighbours cannot disagree.
// - A board page's table fragment also carries the overtakes ticker (current
//   period, whole board) and, on page 1, the podium: both are in the live
//   frame of the `limit=100` topic. Rows carry their movement (▲/▼/new from
//   `Entry.PrevRank`), initials avatars (a colour class from FNV of the member
//   id: no inline styles) and the score in the board's `unit`/`format`
//   (`web/score.go`; the API and CSV keep numbers).
// - Static files are served by versioned names (`static.URL`: name + 10 hex
//   of SHA-256) with a one-year immutable cache; other names get 5 minutes.
//   Each file's answer (ETag, gzip at the default level) is made on its
//   first request and kept (`staticAnswer`).
// - CSV is streamed in chunks of 1000 rows by offset, each chunk with its own
//   deadline; a failure after the first byte aborts the connection so a
//   download is never silently short. Rows of a live period may move between
//   chunks (a member can appear twice or be skipped); exports of finished
//   periods are exact.
