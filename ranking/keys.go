package ranking

import (
	"crypto/sha256"
	"encoding/hex"
)

// Every Redis key and channel the store uses, and the only place their
// names are built. A board's keys share the hash tag {<board>}, so one
// script can touch all of a board's views atomically, also on a Redis
// Cluster; on a sharded board (shard.go) every key about members (the
// period sorted sets and what goes with them, names, search index, ids,
// segment values and records, snapshots, league rounds and records, the
// registry and the sweep) is under its shard's tag {<board>#<i>.<k>}
// instead, one set per shard, and what is about the whole board (results,
// their index and outbox, the ingest stream) stays under {<board>}; the
// results stream's keys share {<prefix>results}; each rate
// budget has its own tag, so a cluster spreads them. <prefix> is
// Options.Prefix ("standings:" by default). Each row is one key kind:
// pattern, type, what it holds; expiry. Period keys get PEXPIREAT =
// max(end of the period keep periods later, end + lateness), set once per
// script call for each key it touched; all never expires. Period ids are
// the contract's; the later occurrence of a repeated local hour carries
// its UTC offset (2026-11-01T01-05:00). TestEveryKeyHasARow checks every
// key a workload leaves in Redis or hands a script against these rows.
//
//	pattern                                      type     what it holds; expiry
//	<prefix>{<board>}:z:<view>:<period>          zset     one period of one view: member id -> score code; the
//	                                                      hidden day view ~d holds the day totals windows are built
//	                                                      from, a window view <Nd> its built total (period = last
//	                                                      day); a segment board's view is <view>@<name>=<value>;
//	                                                      the hidden view ~lg holds a league's rounds (period =
//	                                                      round), written while the round is open; period expiry
//	<prefix>{<board>}:x:<view>:<period>          hash     update: latest only, when a tie unit is coarser than
//	                                                      1 ms or ties are shared: member -> exact event ms, so
//	                                                      "newest event wins" is exact; period expiry
//	<prefix>{<board>}:r:<view>:<period>          string   "built" marker of a window (also <Nd>@<name>=<value>);
//	                                                      the window's expiry
//	<prefix>{<board>}:k                          zset     registry of live period keys: <view>:<period> (segment
//	                                                      boards <view>@<name>=<value>:<period>), score = expiry
//	                                                      ms (inf for all); lets removal and the sweep find every
//	                                                      retained period; writes and window builds drop entries
//	                                                      already expired; never expires
//	<prefix>{<board>}:n                          hash     member -> display name (latest given wins); <member>\0k
//	                                                      -> the name folded for search; never expires
//	<prefix>{<board>}:ni                         zset     name search index's recent entries, all scores 0:
//	                                                      <folded text>\0<member> for each member's id (added when
//	                                                      it enters the all view, or a period on boards without
//	                                                      one) and display name, until compact.lua moves them to
//	                                                      nb; never expires; a shard's indexes its members,
//	                                                      searched all at once and merged by entry
//	<prefix>{<board>}:nb                         hash     the search index's blocks: lower bound ("" for the
//	                                                      first) -> the entries from it up to the next bound,
//	                                                      unsorted, each as \n<entry>\n with the newlines shared;
//	                                                      a block over 2 KB is sorted and cut, one (but the
//	                                                      first) under 512 bytes joins the one before (lib.lua
//	                                                      idx_*); never expires
//	<prefix>{<board>}:nx                         zset     the blocks' bounds but "", all scores 0; never expires
//	<prefix>{<board>}:nc                         string   compaction's position in ni: the last entry it moved (the
//	                                                      next call moves the entries after it, from the first
//	                                                      again past the last); never expires
//	<prefix>{<board>}:ni:ids                     string   "1" once the one-time backfill of older ids into ni is
//	                                                      done; never expires
//	<prefix>{<board>}:e:<id>                     string   idempotency record: member\nvalue\nat NUL view\tperiod
//	                                                      lines; PX DedupeWindow
//	<prefix>{<board>}:seg:<name>                 zset     the values seen of one segment name, all score 0 (so
//	                                                      ZRANGE is byte order); at most MaxSegmentValues; never
//	                                                      expires; a shard's holds its members' values, and a
//	                                                      sharded board lists the union's first MaxSegmentValues
//	<prefix>{<board>}:sm                         hash     member -> its latest segment values, name=value lines in
//	                                                      the board's order of names (for its rank card); never
//	                                                      expires
//	<prefix>{<board>}:sw                         hash     position of the member sweep's walk: phase (1 n, 2 ni,
//	                                                      3 sm, 4 nb) and that structure's SCAN cursor; a day after the
//	                                                      last step
//	<prefix>{<board>}:snap:<view>:<day>          hash     the all view's best SnapshotTop ranks at the start of a day
//	                                                      (local; member -> rank; field \0 = how many were
//	                                                      ranked), taken before the day's first change of the
//	                                                      all view (a write or a removal: keep_snapshot in
//	                                                      lib.lua); a day after the day ends
//	<prefix>{<shard>}:snapz:<view>:<day>         zset     on a shard of a sharded board instead: the shard's best
//	                                                      SnapshotTop members of the all view -> code at the start
//	                                                      of a day; a day after the day ends
//	<prefix>{<shard>}:snapn:<view>:<day>         string   how many that shard's all view ranked then; the same
//	<prefix>{<board>}:mv:<view>                  list     the view's newest MovesTop overtakes, newest first:
//	                                                      period\tmember\tpassed\trank\tat_ms; never expires
//	                                                      (bounded); a removal drops the removed member's
//	                                                      (forgetmoves.lua)
//	<prefix>{<board>}:mt:<view>                  string   on a sharded board, the view's merged top MovesTop as last
//	                                                      compared for overtakes: period\tcompared_ms, then
//	                                                      rank\tmember lines; never expires (one per view)
//	<prefix>{<board>}:res:<view>                 zset     index of recorded results: period id -> period start ms;
//	                                                      trimmed to results_keep; never expires
//	<prefix>{<board>}:rs:<view>:<period>         string   one recorded result's JSON, exactly as served; dropped
//	                                                      when trimmed from res
//	<prefix>{<board>}:rm:<member>                zset     the recorded results listing the member: <view>\n<period>
//	                                                      -> period start ms; PEXPIREAT only ever moved later, to
//	                                                      the results horizon
//	<prefix>{<board>}:rg                         string   on a sharded board: how many removals began amending
//	                                                      (INCR before each amendment pass), so that recording and
//	                                                      amending from a merged read, which spans several calls,
//	                                                      see a removal in between; never expires
//	<prefix>{<board>}:fv                         string   the version of the board's final periods (on a shard of a
//	                                                      sharded board: of its members'): a random number set by the
//	                                                      first rank card that finds none, INCR by every removal
//	                                                      that finds it; rank cards keep final chart points under
//	                                                      it (chart_cache.go); never expires
//	<prefix>{<board>}:out                        stream   the board's outbox of events not yet relayed:
//	                                                      result.recorded and result.amended (type, view, period,
//	                                                      digest, result), member.removed (type, member, at =
//	                                                      removal ms), league.final (type, round, result), a
//	                                                      cohort's result.amended (type, round, tier, cohort,
//	                                                      digest, result); on a shard of a sharded board its
//	                                                      members' member.removed entries (relayed as
//	                                                      "<id>/<shard index>"); MAXLEN ~ 10000
//	<prefix>{<board>}:lg:<round>:m               zset     a league round's placements: member -> tier level (1 =
//	                                                      lowest) × 2^32 + cohort number; period expiry
//	<prefix>{<board>}:lg:<round>:f               hash     a league round's counters: c:<level> seats taken,
//	                                                      n:<level>:<cohort> members, d:<level>:<cohort> "1" once
//	                                                      decided, o:<member> its outcome (1 promoted, 0 stayed,
//	                                                      -1 demoted), nm:/np:/nd:<level> members, promoted and
//	                                                      demoted of decided cohorts, r and rc the decide and
//	                                                      record cursors (<level>:<cohort>), rec cohorts
//	                                                      recorded, final "1" once league.final is out (on a
//	                                                      sharded board: each shard's once its cohorts are
//	                                                      recorded, and the board's own, holding final only,
//	                                                      once league.final is out); period expiry
//	<prefix>{<board>}:lg:<round>:rs:<t>:<c>      string   one closed cohort's recorded result JSON (t = tier level,
//	                                                      c = cohort; on a shard, the shard's own number), exactly
//	                                                      as served; period expiry
//	<prefix>{<board>}:lr                         zset     league rounds to decide and record: round id -> end ms;
//	                                                      an entry goes with the round's league.final; never
//	                                                      expires (one entry per round)
//	<prefix>{<board>}:lm:<member>                string   the member's last league round: round\ttier level\tcohort,
//	                                                      cohort 0 once that cohort is recorded (the level is
//	                                                      then the tier earned); expires with the latest period
//	                                                      its write listed (never on a board with an all view),
//	                                                      at the earliest with the round; removal deletes it. A
//	                                                      round's keys keep at least 2 rounds past its end
//	<prefix>{<board>}:lc:<member>                zset     the recorded cohort results listing the member:
//	                                                      <round>\n<tier level>\n<cohort> -> that result's expiry
//	                                                      ms; entries past it dropped at each recording;
//	                                                      PEXPIREAT only ever moved later, to the last expiry
//	<prefix>{<board>}:in                         stream   ingest stream of a board with stream: true, read by the
//	                                                      consumer group standings; never expires
//	<prefix>{<board>}:dead                       stream   ingest entries that failed, with error and source_id;
//	                                                      never expires
//	<prefix>{<board>}:meta                       hash     shards: the shard count the board's data is written
//	                                                      with, set when an instance first starts on the board
//	                                                      and by reshard; enc:<view>: how the view's scores are
//	                                                      encoded (Board.encodingText), set when an instance
//	                                                      first starts with the view; start-up refuses a boards
//	                                                      file that differs in either; never expires
//	<prefix>{<board>}:serving                    zset     instances serving the board: instance -> ms until which
//	                                                      it said so (refreshed while it runs, removed when it
//	                                                      stops); reshard refuses while one is live; entries past
//	                                                      their time dropped at each refresh; never expires
//	<prefix>{<board>}:reshard                    hash     a reshard under way: from, to, phase (copy, verify,
//	                                                      delete), shard (old shard being walked) and cursor
//	                                                      (its SCAN cursor); deleted when it is done
//	<prefix>rate:{<h>}                           string   write budget of one API key (GCRA: the theoretical
//	                                                      arrival time, ms); h = first 16 bytes of the key's
//	                                                      SHA-256 in hex, never the key; once the budget is full
//	<prefix>results                              stream   every board's results, relayed from the outboxes;
//	                                                      MAXLEN ~ 10000
//	{<prefix>results}:relayed                    zset     outbox entries already relayed, "<board> <entry id>" ->
//	                                                      ms; entries older than 7 days trimmed
//	{<prefix>results}:wh:pending                 zset     webhook deliveries pending: id -> when due, or when the
//	                                                      lease of the attempt in flight ends
//	{<prefix>results}:wh:delivered               zset     delivered ids -> when; trimmed after 7 days
//	{<prefix>results}:wh:failed                  zset     failed ids -> when; trimmed after 30 days
//	{<prefix>results}:wh:d:<id>                  hash     one delivery: id, type, url, board, body (dropped once
//	                                                      delivered), status, attempts, last_status, last_error,
//	                                                      created_ms, deadline_ms, next_ms, lease, done_ms; 7 days
//	                                                      after delivery, 30 after failure
//	<prefix>changes                              channel  the change feed (pub/sub)
//
// Scripts are given every key they touch in KEYS, built here: Lua never
// concatenates a key name.

// boardKeys builds the keys of one board: each is "<prefix>{<board>}:"
// and a suffix.
type boardKeys string

// keysOf is the key builder of board b.
func (s *Store) keysOf(b *Board) boardKeys { return s.keysOfID(b.ID) }

func (s *Store) keysOfID(board string) boardKeys { return boardKeys(s.prefix + "{" + board + "}:") }

// period is the sorted set of one period of a view ("z:"); view may carry
// a segment's tag.
func (k boardKeys) period(view, period string) string { return k.taggedPeriod(view, "", period) }

// taggedPeriod is period(view+tag, period) in one concatenation.
func (k boardKeys) taggedPeriod(view, tag, period string) string {
	return string(k) + "z:" + view + tag + ":" + period
}

// exactTimes is the exact event times of one period of a view ("x:").
func (k boardKeys) exactTimes(view, period string) string {
	return string(k) + "x:" + view + ":" + period
}

// built is a window's built marker ("r:").
func (k boardKeys) built(view, period string) string { return string(k) + "r:" + view + ":" + period }

// segPeriod is period for view v of segment board seg (the board itself
// for the zero Segment).
func (k boardKeys) segPeriod(v View, seg Segment, period string) string {
	// A batch builds one per segment board, view and period row.
	return k.taggedPeriod(v.Name, seg.tag(), period)
}

// segBuilt is built for window v of segment board seg.
func (k boardKeys) segBuilt(v View, seg Segment, period string) string {
	return k.built(v.Name+seg.tag(), period)
}

// registered is the sorted set of a registry entry "<view>:<period>".
func (k boardKeys) registered(entry string) string { return string(k) + "z:" + entry }

// registeredExact is the exact times hash of a registry entry.
func (k boardKeys) registeredExact(entry string) string { return string(k) + "x:" + entry }

// registry lists the board's live period keys.
func (k boardKeys) registry() string { return string(k) + "k" }

// names maps members to display names.
func (k boardKeys) names() string { return string(k) + "n" }

// nameIndex is the name search index.
func (k boardKeys) nameIndex() string { return string(k) + "ni" }

// indexBounds lists the lower bounds of the search index's blocks ("nx").
func (k boardKeys) indexBounds() string { return string(k) + "nx" }

// indexBlocks holds the search index's blocks, entries packed by
// neighbours ("nb").
func (k boardKeys) indexBlocks() string { return string(k) + "nb" }

// indexCursor is the search index compaction's position in ni ("nc").
func (k boardKeys) indexCursor() string { return string(k) + "nc" }

// nameIndexBackfilled marks the backfill of member ids into nameIndex done.
func (k boardKeys) nameIndexBackfilled() string { return string(k) + "ni:ids" }

// idempotency is the record of the event with id.
func (k boardKeys) idempotency(id string) string { return string(k) + "e:" + id }

// segValues is the index of a segment name's values.
func (k boardKeys) segValues(name string) string { return string(k) + "seg:" + name }

// memberSegments maps members to their latest segment values.
func (k boardKeys) memberSegments() string { return string(k) + "sm" }

// sweep holds the member sweep's walk position.
func (k boardKeys) sweep() string { return string(k) + "sw" }

// snapshot is a view's ranks at the start of a local day.
func (k boardKeys) snapshot(view, day string) string { return string(k) + "snap:" + view + ":" + day }

// snapshotCodes is a shard's snapshot of a day ("snapz:"), on sharded
// boards: member -> code.
func (k boardKeys) snapshotCodes(view, day string) string {
	return string(k) + "snapz:" + view + ":" + day
}

// snapshotCount is how many a shard's all view ranked at a day's snapshot
// ("snapn:"), on sharded boards.
func (k boardKeys) snapshotCount(view, day string) string {
	return string(k) + "snapn:" + view + ":" + day
}

// moves is a view's list of recent overtakes.
func (k boardKeys) moves(view string) string { return string(k) + "mv:" + view }

// movesTop is the merged top a sharded board's view compared last
// ("mt:"), for its overtakes.
func (k boardKeys) movesTop(view string) string { return string(k) + "mt:" + view }

// resultsIndex is a view's index of recorded results.
func (k boardKeys) resultsIndex(view string) string { return string(k) + "res:" + view }

// result holds one recorded result.
func (k boardKeys) result(view, period string) string { return string(k) + "rs:" + view + ":" + period }

// memberResults is a member's reverse index of the results listing it.
func (k boardKeys) memberResults(member string) string { return string(k) + "rm:" + member }

// removals counts the removals that began amending a sharded board's
// results ("rg").
func (k boardKeys) removals() string { return string(k) + "rg" }

// finalVersion is the version of the final periods of a board or shard
// ("fv"): rank cards keep final chart points under it.
func (k boardKeys) finalVersion() string { return string(k) + "fv" }

// outbox is the board's stream of result events not yet relayed.
func (k boardKeys) outbox() string { return string(k) + "out" }

// ingest is the board's ingest stream.
func (k boardKeys) ingest() string { return string(k) + "in" }

// leaguePlaces is a league round's placements ("lg:<round>:m").
func (k boardKeys) leaguePlaces(round string) string { return string(k) + "lg:" + round + ":m" }

// leagueRound is a league round's counters, decided markers and outcomes
// ("lg:<round>:f").
func (k boardKeys) leagueRound(round string) string { return string(k) + "lg:" + round + ":f" }

// leagueResult holds one cohort's recorded result ("lg:<round>:rs:<level>:<cohort>").
func (k boardKeys) leagueResult(round string, level, cohort int) string {
	return string(k) + "lg:" + round + ":rs:" + itoa(int64(level)) + ":" + itoa(int64(cohort))
}

// leagueRounds lists the league rounds with cohorts left to decide.
func (k boardKeys) leagueRounds() string { return string(k) + "lr" }

// leagueMember is a member's record of its last league round.
func (k boardKeys) leagueMember(member string) string { return string(k) + "lm:" + member }

// leagueMemberResults lists the recorded cohort results that list a
// member ("lc:<member>"), so a removal finds them after its record and
// seats are gone.
func (k boardKeys) leagueMemberResults(member string) string { return string(k) + "lc:" + member }

// dead is the board's dead-letter stream.
func (k boardKeys) dead() string { return string(k) + "dead" }

// StreamKey is the ingest stream of a board.
func (s *Store) StreamKey(boardID string) string { return s.keysOfID(boardID).ingest() }

// DeadKey is the dead-letter stream of a board.
func (s *Store) DeadKey(boardID string) string { return s.keysOfID(boardID).dead() }

// rateKey is the key of one API key's budget; its own hash tag, so that
// a cluster spreads the keys.
func (s *Store) rateKey(apiKey string) string {
	sum := sha256.Sum256([]byte(apiKey))
	return s.prefix + "rate:{" + hex.EncodeToString(sum[:16]) + "}"
}

// ResultsStream is the shared stream every recorded result is relayed to:
// "standings:results" under the default prefix.
func (s *Store) ResultsStream() string { return s.prefix + "results" }

// relayedKey remembers relayed outbox entries, in the results stream's slot.
func (s *Store) relayedKey() string { return "{" + s.ResultsStream() + "}:relayed" }

// hookKey is a webhook delivery index: DeliveryPending (score: when due,
// or when the lease of an attempt in flight ends), DeliveryDelivered and
// DeliveryFailed (score: when). All webhook keys share the results
// stream's slot, so relay.lua creates deliveries in the same step as the
// stream entry.
func (s *Store) hookKey(state string) string { return "{" + s.ResultsStream() + "}:wh:" + state }

// deliveryKey holds one delivery.
func (s *Store) deliveryKey(id string) string { return "{" + s.ResultsStream() + "}:wh:d:" + id }

// Channel is the pub/sub channel of the change feed.
func (s *Store) Channel() string { return s.prefix + "changes" }

// metaRecord is the board's record of what its data was written with
// ("meta": field shards, the shard count; fields enc:<view>, each view's
// score encoding).
func (k boardKeys) metaRecord() string { return string(k) + "meta" }

// serving lists the instances serving the board: instance -> until ms.
func (k boardKeys) serving() string { return string(k) + "serving" }

// reshardProgress is the position of a reshard under way.
func (k boardKeys) reshardProgress() string { return string(k) + "reshard" }
