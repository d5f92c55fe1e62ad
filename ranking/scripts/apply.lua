-- apply.lua: apply a batch of score events to every view of one board.
-- Each event changes all of its views or none; events apply in order.
--
-- (lib.lua is prepended: fmt, num, split, fmt_score, publish, redis_now.)
--
-- Go       apply_proto.go: applyRequest, decodeApply
-- KEYS     (every key shares the board's hash tag, so the script runs on
--          one cluster node)
--   1 the names hash n, 2 the registry k, 3 the search index ni, 4 its
--   blocks' bounds nx, 5 its blocks nb, then per view and period row in
--   ARGV order: z:<view>:<period>, x:<view>:<period> (only when exact_times
--   is 1), r:<view>:<period> (only for kind "w"), then per segment board
--   (below) and per view and period row: z:<view>@<name>=<value>:<period>
--   and, for kind "w", its r key; on a league board, before the segment
--   boards' keys: per round row z:~lg:<round>, x:~lg:<round> (only when
--   exact_times is 1), lg:<round>:m, lg:<round>:f, then the rounds to
--   decide lr; then per original row (below) z:<view>:<period>; then, when
--   the board has segments, the
--   member record sm and seg:<name> for each of the board's segment names;
--   then per event in event order: lm:<member> (league boards), e:<id>
--   (when it carries an id).
-- ARGV     (flat)
--   policy ("increment"|"best"|"latest"), ties ("first"|"shared"),
--   order ("desc"|"asc"), min, max (scaled integers), lateness_ms,
--   dedupe_ms, channel, board id, exact_times (1 when "latest" needs the
--   event time kept beside the code), decimals, ranks (1: answer ranks;
--   0: leave them out, see Ranks below), nviews,
--   per view: name, unit_ms, span, kind, days, lo, hi (the value range its
--     codes hold: [min, max], or ±N·S for a window, ±S for day totals),
--     nperiods,
--     kind: "p" a calendar view (one period holds the event), "h" the hidden
--     day totals (like "p", but not answered, and bounded by ±S only; its
--     rows also hold the days that derive unbuilt windows, see derive), "w"
--     a rolling window of `days` days (every ready window covering the
--     event's day changes; every one up to tomorrow's, built or not, is
--     checked against [min, max]);
--     per period: id, start_ms, end_ms, base_unit, expire_at_ms (0 = never),
--       last_day_ms (windows: start of the window's last day; else 0).
--       Window rows are consecutive days in order.
--   nrounds (0: the board has no league, and nothing more of it follows),
--     then unit_ms, span, lo, hi of the rounds' codec, cohort_size,
--     promote, demote, ntiers, and per round row: id, start_ms, end_ms,
--     base_unit, expire_at_ms (see place),
--   noriginals, per original row: view name, period id (a period a
--     duplicate's original event answered that is not among the view's
--     rows; read only, to answer the duplicate: see -5),
--   nsegs, per segment board: tag ("@<name>=<value>"), name, value (its
--     rows are the board's; exact times go to the board's x hash under
--     "<member>\0<tag>"),
--   nnames (0 when the board has no segments, else its segment names), the cap of
--     values per name, then the names,
--   nevents, per event: member, value, then "" for a plain event (no
--     at_ms, name or id, no segment value, the id folded for search is
--     the id), "s", nseg and nseg 1-based segment board indexes for one
--     that differs from a plain event only by its segment values, or "1"
--     and at_ms ("" = Redis now), name ("" = none), the name folded for
--     search ("" = none), the member id folded, id ("" = none), nseg, then
--     nseg 1-based segment board indexes,
--   moves_top (0 = no overtakes kept; else KEYS mv:<view> per view but the
--     day totals, in view order, after the events' keys),
--   snap_top (0 = none; else the all view's 1-based index, shape ("h": a
--     hash of ranks; "z", on a shard of a sharded board: a sorted set of
--     the shard's codes and its count in snapn), ndays, per day start_ms,
--     end_ms, with KEYS per day snap:<view>:<day> ("h") or snapz:<view>:<day>
--     and snapn:<view>:<day> ("z"))
-- Returns  {1, now_ms, periods, {n_1, r_1..., n_2, r_2..., ...}}: per
--          event its reply r (n entries), in event order in one flat list
--          (n < 0: an applied event, not a duplicate, whose event_ms and at
--          are those of the last such reply written in full; its -n
--          entries are its scores and ranks):
--            1, duplicate(0|1), event_ms (0 for a duplicate), at, score_1, rank_1, ...,
--             score_V, rank_V   (answered views only; the event's period
--             of view v is periods[at + v - 1], periods being a list of
--             period ids shared by the events; a window answers the
--             window ending today; with ranks 0 each view is score_v only)
--            0, code, message, event_ms
--          {-1, now_ms} when Redis's now (or an event without at_ms) falls in
--          no listed period: the caller's clock estimate was off; nothing
--          was written; the caller retries with periods around now_ms.
--          {-2, now_ms, view, window id, segment name, segment value, ...}
--          (4 per window; "" "" for the board's own) when today's window of
--          the board or of a segment board is not built yet: nothing was
--          written; the caller runs ensure.lua for each and retries.
--          {-3, now_ms, round id, ...} when a member new to the current
--          round last played a round not listed (its outcome decides the
--          tier): no event was written (the day's snapshot may have been
--          taken, as the retry would); the caller lists those rounds and
--          retries.
--          {-4, now_ms, round id, level, cohort, ...} (3 per cohort) when
--          such a member's last cohort, in a closed round, is not decided
--          yet: nothing was written, as for -3; the caller decides those
--          cohorts (decide.lua, a bounded number of members per call) and
--          retries.
--          {-5, now_ms, view, period, ...} (2 per period) when a duplicate
--          (an id already remembered, same event) answered, the first time,
--          a period that is neither among its view's rows nor an original
--          row: nothing was written; the caller lists those periods as
--          original rows and retries. A period past its retention has no
--          key left, and the duplicate answers score 0 (and rank 0) there.
-- An event tagged with segments also changes, in the same step, the same
-- targets of each of its segment boards: all of them or none (bounds hold
-- in each). A new value of a name whose index holds the cap is refused.
-- On a league board an event dated in the round holding Redis's now also
-- changes that round's standings (z:~lg:<round>, like a view's period,
-- its score kept within [min, max]), and a member new to the round is
-- seated there in the same step (place, which reads the outcome of the
-- member's last cohort: a few commands per member, never a whole cohort).
-- Before the first write of a local day the all view's best snap_top ranks
-- are kept (the ranks at midnight: nothing changed since); a write that
-- moves a member up past others within the best moves_top ranks of a
-- view's current period is kept as an overtake.
--
-- Cost: the board's own period keys, and the keys that derive its unbuilt
-- windows, read the batch's members with one ZMSCORE per key; every key's
-- writes are queued and sent as one multi-pair ZADD per key (codes as
-- '%d' text) when its order must be read (a rank, an overtake) and at the
-- end. Ranks: with ranks 0 no rank is read, except for an overtake: a
-- member that rose in a view's current period gets its exact rank only
-- when its new code is not worse than the code at rank moves_top (read
-- once per batch and view, kept as a bound while members enter the top,
-- read again after a write takes one out of it); a worse code ranks below
-- moves_top. A segment board's period key gets its expiry and registry
-- entry in the batch that creates it (one EXISTS over the batch's segment
-- keys, before any write, tells which); the batch's registry entries go in
-- one ZADD; the batch's segment values are looked up in their names'
-- indexes with one ZMSCORE per name. The batch's idempotency records are
-- read with one MGET, none when no event carries an id.

local i = 1
local function nextarg()
  local v = ARGV[i]
  i = i + 1
  return v
end
local names_key, reg, name_index = KEYS[1], KEYS[2], KEYS[3]
local index_bounds, index_blocks = KEYS[4], KEYS[5]
local ki = 6
local function nextkey()
  local k = KEYS[ki]
  ki = ki + 1
  return k
end

local policy = nextarg()
local ties = nextarg()
local order = nextarg()
local vmin = tonumber(nextarg())
local vmax = tonumber(nextarg())
local lateness = tonumber(nextarg())
local dedupe = tonumber(nextarg())
local channel = nextarg()
local board = nextarg()
local exact = nextarg() == '1'
local decimals = tonumber(nextarg())
local ranks = nextarg() == '1'
local nviews = tonumber(nextarg())

local call = redis.call
local floor = math.floor
local sfmt = string.format
local desc = order == 'desc'

local views = {}
for v = 1, nviews do
  -- Numbers are read with s + 0, one parse each (tonumber parses twice).
  local a = i
  local view = {name = ARGV[a], unit = ARGV[a + 1] + 0, span = ARGV[a + 2] + 0,
                kind = ARGV[a + 3], days = ARGV[a + 4] + 0, lo = ARGV[a + 5] + 0,
                hi = ARGV[a + 6] + 0, periods = {}, by_id = {}}
  local np = ARGV[a + 7] + 0
  a = a + 8
  local name, w, periods, by_id = view.name, view.kind == 'w', view.periods, view.by_id
  for p = 1, np do
    local id = ARGV[a]
    local per = {id = id, s = ARGV[a + 1] + 0, e = ARGV[a + 2] + 0,
                 base = ARGV[a + 3] + 0, exp = ARGV[a + 4] + 0, last = ARGV[a + 5] + 0, j = p,
                 suffix = name .. ':' .. id, zkey = KEYS[ki], xkey = false, rkey = false}
    a = a + 6
    ki = ki + 1
    if exact then per.xkey = KEYS[ki]; ki = ki + 1 end
    if w then per.rkey = KEYS[ki]; ki = ki + 1 end
    periods[p] = per
    by_id[id] = per
  end
  i = a
  views[v] = view
end
-- The day totals (kind "h", listed last), found by their start.
local day_totals, day_vi = nil, nil
for v = 1, nviews do
  if views[v].kind == 'h' then
    day_totals, day_vi = views[v], v
    day_totals.by_start = {}
    for j, per in ipairs(day_totals.periods) do day_totals.by_start[per.s] = j end
  end
end

-- League: the hidden view of rounds (kind "l"), views[nviews + 1], out of
-- every loop over the board's views: it answers nothing, has no segment
-- boards and is not in the change message. Its rows carry the round's
-- placements (mkey) and counters, decided markers and outcomes (fkey).
local league = nil
do
  local nrounds = tonumber(nextarg())
  if nrounds > 0 then
    league = {name = '~lg', kind = 'l', unit = tonumber(nextarg()), span = tonumber(nextarg()),
              lo = tonumber(nextarg()), hi = tonumber(nextarg()), size = tonumber(nextarg()),
              promote = tonumber(nextarg()), demote = tonumber(nextarg()), ntiers = tonumber(nextarg()),
              periods = {}, by_id = {}, vi = nviews + 1}
    for p = 1, nrounds do
      local per = {id = nextarg(), s = tonumber(nextarg()), e = tonumber(nextarg()),
                   base = tonumber(nextarg()), exp = tonumber(nextarg()), last = 0, j = p}
      per.suffix = '~lg:' .. per.id
      per.zkey = nextkey()
      if exact then per.xkey = nextkey() end
      per.mkey, per.fkey = nextkey(), nextkey()
      league.periods[p] = per
      league.by_id[per.id] = per
    end
    league.rkey = nextkey()
    views[league.vi] = league
    -- A member's league record (its last round's tier) lasts as long as
    -- its scores do, so that skipping rounds keeps the tier: until the
    -- latest expiry of the board's periods in this call, or for ever on a
    -- board with a period that never expires (the all view); but at least
    -- as long as the round's keys.
    league.lm_exp = 0
    for v = 1, nviews do
      for _, per in ipairs(views[v].periods) do
        if per.exp == 0 then league.lm_exp = false end
        if league.lm_exp and per.exp > league.lm_exp then league.lm_exp = per.exp end
      end
    end
  end
end

-- Original rows: periods that duplicates of the batch answered the first
-- time and that are not among the rows (a remembered id can outlive its
-- period's neighbours), read-only in view.orig_by_id.
local by_name = {}
for v = 1, nviews do
  by_name[views[v].name] = views[v]
  views[v].orig_by_id = {}
end
for _ = 1, tonumber(nextarg()) do
  local view, pid = by_name[nextarg()], nextarg()
  local zkey = nextkey()
  if view then view.orig_by_id[pid] = {id = pid, zkey = zkey} end
end

-- Segment boards: each has every view's period rows of the board (same
-- periods, own keys). segrow(sb, v, j) mirrors views[v].periods[j]; rows
-- are made when first used (a batch may name many segment boards, each
-- touching few of its rows) and listed in seg_rows.
local seg_rows = {}
local nsegs = tonumber(nextarg())
local segs = {}
local seg_keys, voff = 0, {} -- keys per segment board; offset of each view's
for v = 1, nviews do
  voff[v] = seg_keys
  local stride = 1
  if views[v].kind == 'w' then stride = 2 end
  seg_keys = seg_keys + stride * #views[v].periods
end
for g = 1, nsegs do
  local tag = nextarg()
  local xtag = nil
  if exact then xtag = '\0' .. tag end
  -- rows[voff[v] + j]: row j of view v (one table for every view).
  segs[g] = {tag = tag, name = nextarg(), value = nextarg(), k0 = ki, rows = {}, xtag = xtag}
  ki = ki + seg_keys
end
local function segrow(sb, v, j)
  local per = sb.rows[voff[v] + j]
  if per then return per end
  local view, bp = views[v], views[v].periods[j]
  local zkey, rkey
  if view.kind == 'w' then
    local k = sb.k0 + voff[v] + 2 * (j - 1)
    zkey, rkey = KEYS[k], KEYS[k + 1]
  else
    zkey = KEYS[sb.k0 + voff[v] + j - 1]
  end
  -- Exact times share the board's hash, under the field
  -- "<member>\0@<name>=<value>": member ids hold no NUL, so no field of
  -- the board itself looks like one of a segment board. The row reads the
  -- board period's own fields (id, times, expiry, xkey) through its
  -- metatable: a batch makes a few rows per event, and each field set is
  -- a hash insertion. Every own field is in the constructor, which sizes
  -- the table once.
  local meta = bp.meta
  if not meta then
    meta = {__index = bp}
    bp.meta = meta
  end
  per = setmetatable({seg = true, suffix = view.name .. sb.tag .. ':' .. bp.id, zkey = zkey, rkey = rkey,
                      xtag = sb.xtag, fresh = false, created = false}, meta)
  sb.rows[voff[v] + j] = per
  seg_rows[#seg_rows + 1] = per
  return per
end
-- The member record (sm) and the values index of each segment name.
local nindex = tonumber(nextarg())
local seg_cap = tonumber(nextarg())
local sm_key, index_key, seg_names = nil, {}, {}
if nindex > 0 then
  sm_key = nextkey()
  for g = 1, nindex do
    seg_names[g] = nextarg()
    index_key[seg_names[g]] = nextkey()
  end
end

local now = redis_now()

-- known says whether a segment board's value is in its name's index; full,
-- whether it is new and the index already holds seg_cap values (then every
-- event naming it is refused and nothing is built for it).
local function known(sb)
  if sb.known == nil then
    sb.known = call('ZSCORE', index_key[sb.name], sb.value) ~= false
  end
  return sb.known
end
local function full(sb)
  return not known(sb) and call('ZCARD', index_key[sb.name]) >= seg_cap
end
-- Every segment board of the batch is asked known (every event naming it
-- checks full): one ZMSCORE per name answers them all.
do
  local by = {}
  for _, sb in ipairs(segs) do
    local l = by[sb.name]
    if not l then
      l = {}
      by[sb.name] = l
    end
    l[#l + 1] = sb
  end
  for nm, l in pairs(by) do
    if not index_key[nm] then break end -- known() says what is wrong
    local vals = {}
    for k, sb in ipairs(l) do vals[k] = sb.value end
    local got = call('ZMSCORE', index_key[nm], unpack(vals))
    for k, sb in ipairs(l) do sb.known = got[k] ~= false end
  end
end

-- Windows: find today's row by Redis's clock; it and tomorrow's row must be
-- listed, and today's window must be built (ready) before anything changes,
-- on the board and on every segment board of the batch.
local ready_cache = {}
local function ready(per)
  local r = ready_cache[per]
  if r == nil then
    r = call('EXISTS', per.rkey) == 1
    ready_cache[per] = r
  end
  return r
end

local function window_row(view, ms)
  for k, per in ipairs(view.periods) do
    if ms >= per.last and ms < per.e then return k end
  end
  return nil
end

-- find_today sets each window view's today row and returns the reply that
-- stops the batch when one is missing ({-1, now}) or not built ({-2, ...}),
-- else nil.
local function find_today()
  local unbuilt = {-2, now}
  for v = 1, nviews do
    local view = views[v]
    if view.kind == 'w' then
      local k = window_row(view, now)
      if not k or not view.periods[k + 1] then
        return {-1, now}
      end
      view.today = k
      if not ready(view.periods[k]) then
        unbuilt[#unbuilt + 1] = view.name
        unbuilt[#unbuilt + 1] = view.periods[k].id
        unbuilt[#unbuilt + 1] = ''
        unbuilt[#unbuilt + 1] = ''
      end
      for _, sb in ipairs(segs) do
        if ready(segrow(sb, v, k)) or full(sb) then
          -- built, or every event naming it is refused
        elseif not known(sb) then
          -- A value never written has no data at all: its window is empty,
          -- and the write that first fills it also marks it built.
          segrow(sb, v, k).fresh = true
        else
          unbuilt[#unbuilt + 1] = view.name
          unbuilt[#unbuilt + 1] = view.periods[k].id
          unbuilt[#unbuilt + 1] = sb.name
          unbuilt[#unbuilt + 1] = sb.value
        end
      end
    end
  end
  if #unbuilt > 2 then return unbuilt end
  return nil
end
do
  local stop = find_today()
  if stop then return stop end
end
-- The open round is the one holding Redis's now; it must be listed.
if league then
  for _, per in ipairs(league.periods) do
    if now >= per.s and now < per.e then league.cur = per end
  end
  if not league.cur then return {-1, now} end
end

-- The rest of the script runs in two nested functions, events (from
-- here) and writes (from the batch's sorted-set state on), for a call's
-- fixed cost. Lua 5.1 gives a new closure each local of the enclosing
-- function it uses by searching that function's open upvalues, a list
-- that grows with every local captured: defined in the main chunk, the
-- script's functions made about 400 such searches per call over up to
-- 160 entries, an eighth of a one-event call's Redis CPU. A closure
-- copies its enclosing function's upvalues without a search, so the
-- functions below find the locals above them that way. A Lua function
-- holds at most 60 upvalues; each cut keeps below that.
local function events()

-- Pass 1: resolve every event's time and targets; write nothing. Events
-- with the same at and the same segment boards share one target list:
-- in a batch of events at Redis's now, most events share one.
local nevents = tonumber(nextarg())
local ev_member, ev_value, ev_at, ev_name, ev_name_fold, ev_member_fold, ev_id, ev_idkey, ev_targets =
  {}, {}, {}, {}, {}, {}, {}, {}, {}
local ev_lmkey = {}
local any_id = false -- whether an event carries an id

-- A window that is not built is derived, for the bounds check only (it is
-- never built here), from today's window T, which is always built, and the
-- day totals in between: walking from T to the window ending on day E,
--   window(E-1) = window(E) - day(E) + day(E-N)   (E <= T)
--   window(T+1) = window(T) + day(T+1) - day(T-N+1),
-- so a late event costs reads in proportion to its lateness in days, not
-- to N. steps lists the walk's day starts (window rows are consecutive
-- days: row j-1 starts on day E-N) with the sign of each day's total.
local function steps(view, j)
  local rows, T, out = view.periods, view.today, {}
  if j <= T then
    for r = T, j + 1, -1 do
      out[#out + 1] = rows[r].last
      out[#out + 1] = -1
      out[#out + 1] = rows[r - 1].s
      out[#out + 1] = 1
    end
  else
    for r = T + 1, j do
      out[#out + 1] = rows[r].last
      out[#out + 1] = 1
      out[#out + 1] = rows[r - 1].s
      out[#out + 1] = -1
    end
  end
  return out
end

-- derivable says whether every day total the check c needs is listed: the
-- walk's, the event's day and, when 0 is outside [min, max] (then whether
-- a member with a zero sum is present matters, see derive), every day of
-- the window. For the board's own windows it adds the keys derive reads
-- to prefetch, read for the whole batch at once.
local function derivable(view, c, prefetch)
  local st, by = c.steps, day_totals.by_start
  if not by[c.d_s] then return false end
  for r = 1, #st, 2 do
    if not by[st[r]] then return false end
  end
  if vmin > 0 or vmax < 0 then
    local w, days = view.periods[c.j], 0
    for _, per in ipairs(day_totals.periods) do
      if per.s >= w.s and per.s < w.e then days = days + 1 end
    end
    if days < view.days then return false end
  end
  if prefetch then
    prefetch[#prefetch + 1] = view.periods[view.today]
    prefetch[#prefetch + 1] = day_totals.periods[by[c.d_s]]
    for r = 1, #st, 2 do prefetch[#prefetch + 1] = day_totals.periods[by[st[r]]] end
  end
  return true
end

-- target_list resolves the targets of an event at at (its time t) tagged
-- with the segment boards esegs: for target k, view_of[k] its view index,
-- period_of[k] the period row, mirror_of[k] (segment targets) the index of
-- the board's target of the same row, board_of[k] the segment board;
-- answer[v] the period that answers for view v; checks the windows checked
-- against the bounds; prefetch the keys derive reads; err when the event
-- is refused. nil when an event at Redis's now falls in no listed period.
local tl_view, tl_period, tl_mirror, tl_board, tl_unit = {}, {}, {}, {}, {}
local function target_list(at, esegs)
  local tl = {segs = esegs, view_of = {}, period_of = {}, mirror_of = {}, board_of = {}, unit_of = {}, n = 0,
              answer = {}, carried = {}, checks = {}, prefetch = {}}
  for _, sb in ipairs(esegs) do tl.carried[sb.name] = sb.value end
  if at == '' then
    tl.t = now
  else
    tl.t = tonumber(at)
    if tl.t < now - lateness or tl.t > now + 5000 then
      tl.err = 'at ' .. at .. 'ms is outside the accepted range [now - lateness, now + 5s] (now is ' .. fmt(now) .. 'ms)'
      return tl
    end
  end
  local t = tl.t
  -- The targets are gathered in arrays reused across lists and copied
  -- into tables of their final size at the end: a table grown an entry at
  -- a time is rehashed as it grows, and events naming segment values
  -- often have a list each. A board's own target has mirror and board
  -- false.
  local view_of, period_of, mirror_of, board_of = tl_view, tl_period, tl_mirror, tl_board
  local checks, prefetch = tl.checks, tl.prefetch
  local n = 0
  for v = 1, nviews do
    local view = views[v]
    if view.kind == 'w' then
      local k = window_row(view, t)
      if not k then
        if at == '' then return nil end
        tl.err = 'no window of view ' .. view.name .. ' covers the event time'
        return tl
      end
      -- Every window whose days include the event's day, up to
      -- tomorrow's, is checked against the bounds (tl.checks, in this order
      -- whatever is built, so the same event gets the same answer); the
      -- ready ones are also targets (c.k), the others are derived from
      -- today's window and the day totals in between (see derive).
      local d_s = view.periods[k].last
      for j = k, math.min(k + view.days - 1, view.today + 1) do
        local per = view.periods[j]
        local m = nil
        if ready(per) then
          n = n + 1
          view_of[n], period_of[n], mirror_of[n], board_of[n] = v, per, false, false
          m = n
          checks[#checks + 1] = {v = v, j = j, k = n}
        else
          local c = {v = v, j = j, d_s = d_s, steps = steps(view, j)}
          if not derivable(view, c, prefetch) then return nil end
          checks[#checks + 1] = c
        end
        for _, sb in ipairs(esegs) do
          local sper = segrow(sb, v, j)
          if sper.fresh or ready(sper) then
            n = n + 1
            view_of[n], period_of[n], mirror_of[n], board_of[n] = v, sper, m, sb
            checks[#checks + 1] = {v = v, j = j, k = n, sb = sb}
          else
            local c = {v = v, j = j, d_s = d_s, sb = sb, steps = steps(view, j)}
            if not derivable(view, c) then return nil end
            checks[#checks + 1] = c
          end
        end
      end
      tl.answer[v] = view.periods[view.today]
    else
      local found = nil
      for _, per in ipairs(view.periods) do
        if t >= per.s and t < per.e then
          found = per
          break
        end
      end
      if not found then
        if at == '' then return nil end
        tl.err = 'no period of view ' .. view.name .. ' covers the event time'
        return tl
      end
      n = n + 1
      view_of[n], period_of[n], mirror_of[n], board_of[n] = v, found, false, false
      local m = n
      if view.name == 'all' then tl.all = found end
      for _, sb in ipairs(esegs) do
        n = n + 1
        view_of[n], period_of[n], mirror_of[n], board_of[n] = v, segrow(sb, v, found.j), m, sb
      end
      tl.answer[v] = found
    end
  end
  -- An event counts in the open round only: one dated in a closed round
  -- (or in one not begun) counts in the views alone.
  if league and t >= league.cur.s and t < league.cur.e then
    n = n + 1
    view_of[n], period_of[n], mirror_of[n], board_of[n] = league.vi, league.cur, false, false
    tl.lg = n
  end
  tl.n = n
  -- A plain list (see apply_plain): one target per view, in view order;
  -- on a league board, an event in the open round also has the round's
  -- target, last (apply_event seats the member).
  tl.plain = #esegs == 0 and not tl.lg and n == nviews
  tl.plain_lg = #esegs == 0 and tl.lg == nviews + 1 and n == nviews + 1
  -- Every event of the list has its time t: each target's time unit is
  -- computed here, once.
  for k = 1, n do tl_unit[k] = floor(t / views[view_of[k]].unit) - period_of[k].base end
  tl.view_of, tl.period_of = {unpack(view_of, 1, n)}, {unpack(period_of, 1, n)}
  tl.mirror_of, tl.board_of = {unpack(mirror_of, 1, n)}, {unpack(board_of, 1, n)}
  tl.unit_of = {unpack(tl_unit, 1, n)}
  return tl
end

-- Without windows, an event naming segment values gets a light list
-- (light_list): the board's own list at its time (base) and, per segment
-- board, the row of each of base's targets, made once per base and
-- segment board. Events naming segment values mostly differ in their
-- values, so each has its own list, and resolving one view by view was
-- most of such an event's work. A member pure in every name it carries
-- (mirrored, see apply_event) is planned on the board's targets alone and
-- each code is written to the segment boards' rows too; any other member
-- gets the full list (seg_list), whose shape depends only on the event
-- time and how many segment boards the event names: per view the board's
-- target, then one per segment board, the round last.
local has_windows = false
for v = 1, nviews do
  if views[v].kind == 'w' then has_windows = true end
end
-- seg_shape lists, per target of the shape, its view, its mirror (the
-- index of the board's target of the same row; false for the board's
-- own), its time unit, its segment board's index in esegs (0: the
-- board's own) and the index of the row's target in base.
local function seg_shape(base, nseg)
  local view_of, mirror_of, unit_of, g_of, m_of = {}, {}, {}, {}, {}
  local n, lg = 0, nil
  for m = 1, base.n do
    n = n + 1
    local b = n
    view_of[n], mirror_of[n], unit_of[n], g_of[n], m_of[n] = base.view_of[m], false, base.unit_of[m], 0, m
    if m == base.lg then
      lg = n
    else
      for g = 1, nseg do
        n = n + 1
        view_of[n], mirror_of[n], unit_of[n], g_of[n], m_of[n] = base.view_of[m], b, base.unit_of[m], g, m
      end
    end
  end
  return {n = n, lg = lg, view_of = view_of, mirror_of = mirror_of, unit_of = unit_of, g_of = g_of, m_of = m_of}
end
local function seg_list(light)
  local base, esegs = light.base, light.segs
  local nseg = #esegs
  local shapes = base.shapes
  if not shapes then
    shapes = {}
    base.shapes = shapes
  end
  local sh = shapes[nseg]
  if not sh then
    sh = seg_shape(base, nseg)
    shapes[nseg] = sh
  end
  local n, g_of, m_of, view_of, bp = sh.n, sh.g_of, sh.m_of, sh.view_of, base.period_of
  -- Copies sized at once, then overwritten.
  local period_of, board_of = {unpack(m_of, 1, n)}, {unpack(g_of, 1, n)}
  for k = 1, n do
    local per, g = bp[m_of[k]], g_of[k]
    if g == 0 then
      period_of[k], board_of[k] = per, false
    else
      local sb, v = esegs[g], view_of[k]
      period_of[k], board_of[k] = sb.rows[voff[v] + per.j] or segrow(sb, v, per.j), sb
    end
  end
  -- The light list's carried values and record lines serve (see purity).
  return {segs = esegs, carried = light.carried, t = base.t, n = n, lg = sh.lg, all = base.all,
          answer = base.answer, view_of = view_of, period_of = period_of, mirror_of = sh.mirror_of,
          board_of = board_of, unit_of = sh.unit_of, checks = base.checks, prefetch = base.prefetch, pl = false,
          light = light}
end

-- light_list is the light list of esegs at base's time.
local function light_list(base, esegs)
  local nseg = #esegs
  local rows_of = base.rows_of
  if not rows_of then
    rows_of = {}
    base.rows_of = rows_of
  end
  local srows = {unpack(esegs, 1, nseg)}
  for g = 1, nseg do
    local sb = esegs[g]
    local rows = rows_of[sb]
    if not rows then
      rows = {}
      for k = 1, base.n do
        local per = base.period_of[k]
        if k == base.lg then rows[k] = false else rows[k] = segrow(sb, base.view_of[k], per.j) end
      end
      rows_of[sb] = rows
    end
    srows[g] = rows
  end
  local carried
  if nseg == 2 then -- sized at once, as the usual count
    carried = {[esegs[1].name] = esegs[1].value, [esegs[2].name] = esegs[2].value}
  else
    carried = {}
    for _, sb in ipairs(esegs) do carried[sb.name] = sb.value end
  end
  return {segs = esegs, carried = carried, t = base.t, n = base.n, lg = base.lg, all = base.all,
          answer = base.answer, view_of = base.view_of, period_of = base.period_of, mirror_of = base.mirror_of,
          board_of = base.board_of, unit_of = base.unit_of, checks = base.checks, prefetch = base.prefetch,
          pl = false, new_pure = false, new_none = false, base = base, srows = srows, full = false}
end

-- read_events reads every event's arguments and resolves its target list;
-- false when one at Redis's now falls in no listed period.
local seg_scratch = {}
local function read_events()
  local lists, nosegs = {}, {}
  local a = i
  local plain_tl = nil -- the list of events at Redis's now naming no segment value
  for e = 1, nevents do
    local member = ARGV[a]
    local form = ARGV[a + 2]
    local plain = form == '' -- no time, name, id or segment value
    if plain and plain_tl and not league then
      -- The usual event: ev_at, ev_name, ev_name_fold, ev_member_fold
      -- and ev_id stay nil (index_names reads them so).
      ev_member[e], ev_value[e], ev_targets[e] = member, ARGV[a + 1] + 0, plain_tl
      a = a + 3
    else
      local at, nseg = '', 0
      if plain then
        ev_member[e], ev_value[e], ev_at[e], ev_name[e], ev_name_fold[e], ev_member_fold[e], ev_id[e] =
          member, tonumber(ARGV[a + 1]), '', '', '', member, ''
        a = a + 3
      elseif form == 's' then
        -- Segment values only: ev_at, ev_name, ev_name_fold,
        -- ev_member_fold and ev_id stay nil, as for a plain event.
        ev_member[e], ev_value[e] = member, ARGV[a + 1] + 0
        nseg = ARGV[a + 3] + 0
        a = a + 4
      else
        at = ARGV[a + 3]
        ev_member[e], ev_value[e], ev_at[e], ev_name[e], ev_name_fold[e], ev_member_fold[e], ev_id[e] =
          member, tonumber(ARGV[a + 1]), at, ARGV[a + 4], ARGV[a + 5], ARGV[a + 6], ARGV[a + 7]
        nseg = tonumber(ARGV[a + 8])
        a = a + 9
      end
      -- The list's key, in one concatenation for the usual counts.
      local tkey = at
      if nseg == 1 then
        tkey = at .. ',' .. ARGV[a]
      elseif nseg == 2 then
        tkey = at .. ',' .. ARGV[a] .. ',' .. ARGV[a + 1]
      elseif nseg > 2 then
        for g = 1, nseg do tkey = tkey .. ',' .. ARGV[a + g - 1] end
      end
      local tl = lists[tkey]
      if not tl then
        local esegs = nosegs
        if nseg > 0 then
          for g = 1, nseg do seg_scratch[g] = segs[tonumber(ARGV[a + g - 1])] end
          esegs = {unpack(seg_scratch, 1, nseg)}
        end
        local base = nil
        if nseg > 0 and not has_windows then
          -- The board's own list of the time, kept as the list of events
          -- naming no segment value.
          base = lists[at]
          if not base then
            base = target_list(at, nosegs)
            if not base then return false end
            lists[at] = base
          end
        end
        if base and not base.err then tl = light_list(base, esegs) else tl = target_list(at, esegs) end
        if not tl then return false end
        lists[tkey] = tl
      end
      plain_tl = lists['']
      a = a + nseg
      ev_targets[e] = tl
      if league then ev_lmkey[e] = nextkey() end
      local id = ev_id[e]
      if id and id ~= '' then
        ev_idkey[e] = nextkey()
        any_id = true
      end
    end
  end
  i = a
  return true
end
if not read_events() then return {-1, now} end

-- fingerprint is what an idempotency record remembers of its event.
local function fingerprint(e)
  return ev_member[e] .. '\n' .. fmt(ev_value[e]) .. '\n' .. ev_at[e]
end

-- The batch's idempotency records, read with one MGET before anything is
-- written (id_rec[key]: the record, false when none) and kept up to date
-- as events are applied, so a repeated id within the batch is seen too.
-- A duplicate whose original periods are not all listed stops the batch
-- ({-5, ...}) so that it can answer their state.
local id_rec = {}
if any_id then
  local ks, seen = {}, {}
  for e = 1, nevents do
    local k = ev_idkey[e]
    if k and not seen[k] then
      seen[k] = true
      ks[#ks + 1] = k
    end
  end
  if #ks > 0 then
    local got = call('MGET', unpack(ks))
    for j, k in ipairs(ks) do id_rec[k] = got[j] or false end
  end
  local needs, asked = {-5, now}, {}
  for e = 1, nevents do
    local record = ev_idkey[e] and id_rec[ev_idkey[e]]
    local sep = record and string.find(record, '\0', 1, true)
    -- A different event under the id is a conflict, which needs no period.
    if sep and string.sub(record, 1, sep - 1) == fingerprint(e) then
      for name, pid in string.gmatch(string.sub(record, sep + 1), '([^\t\n]+)\t([^\n]+)') do
        local view = by_name[name]
        if view and view.kind ~= 'h' and not view.by_id[pid] and not view.orig_by_id[pid] and
            not asked[name .. '\t' .. pid] then
          asked[name .. '\t' .. pid] = true
          needs[#needs + 1] = name
          needs[#needs + 1] = pid
        end
      end
    end
  end
  if #needs > 2 then return needs end
end

-- Movement: the overtakes' keys, and the all view's snapshot of the day,
-- taken now, before anything of this batch is written.
local moves_top = tonumber(nextarg())
local top_at = sfmt('%d', moves_top - 1) -- the last rank of the top, as ZRANGE and LTRIM take it
if moves_top > 0 then
  for v = 1, nviews do
    local view = views[v]
    if view.kind ~= 'h' then
      view.mvkey = nextkey()
      if view.kind == 'w' then
        view.cur = view.periods[view.today]
      else
        for _, per in ipairs(view.periods) do
          if now >= per.s and now < per.e then view.cur = per end
        end
      end
    end
  end
end
-- keep_day_snapshot keeps the all view's best snap_top ranks as the
-- day's snapshot before the first write of a local day (keep_snapshot).
local function keep_day_snapshot(snap_top)
  local av = views[tonumber(nextarg())]
  local shape = nextarg()
  local skey, nkey, sexp = nil, nil, 0
  for d = 1, tonumber(nextarg()) do
    local s0, e0 = tonumber(nextarg()), tonumber(nextarg())
    local k, kn = nextkey(), nil
    if shape == 'z' then kn = nextkey() end
    if now >= s0 and now < e0 then skey, nkey, sexp = k, kn, e0 end
  end
  if skey then keep_snapshot(av.periods[1].zkey, shape, snap_top, ties, skey, nkey, sexp + 86400000) end
end
do
  local snap_top = tonumber(nextarg())
  if snap_top > 0 then keep_day_snapshot(snap_top) end
end
local moves = {} -- per view: the overtakes of this batch, oldest first

local function writes()

-- The batch's sorted-set state, kept in Lua. codes[per][member] is the
-- member's code in that period key (false: absent) once read or written.
-- Writes to a period key are queued (pending[per]: code, member pairs,
-- the first pending[per].n entries; the table is kept across flushes, as
-- a ranked batch flushes once per event) and sent as one ZADD when
-- something must read the key's order (a rank, a neighbour) and at the
-- end: a member's own code is always read from codes first, so queued
-- writes never hide it. Codes go to ZADD as '%d' text (exact for integers
-- below 2^53): Redis 7.0 renders a Lua number argument with %.17g, several
-- times dearer.
local codes, pending, pending_list = {}, {}, {}
local function codes_of(per)
  local c = codes[per]
  if not c then
    c = {}
    codes[per] = c
  end
  return c
end
local function code_of(per, member)
  local c = codes_of(per)
  local code = c[member]
  if code == nil then
    code = call('ZSCORE', per.zkey, member)
    if code then code = num(code) end
    c[member] = code
  end
  return code
end
local function flush(per)
  local p = pending[per]
  local np = p and p.n or 0
  if np > 0 then
    p.n = 0
    call('ZADD', per.zkey, unpack(p, 1, np))
  end
end

-- The board's own period keys read the batch's members with one ZMSCORE
-- each (segment targets read on demand: most copy the board's plan), and
-- so do the keys that derive the board's unbuilt windows. Members are
-- gathered per target list first (a batch at Redis's now has one list,
-- or one per segment combination), then each list's keys take them.
do
  local want = {}
  local function wanted(per, member)
    local c = codes_of(per)
    if c[member] == nil then
      c[member] = false
      local w = want[per]
      if not w then
        w = {}
        want[per] = w
      end
      w[#w + 1] = member
    end
  end
  local of_list, lists = {}, {}
  for e = 1, nevents do
    local tl = ev_targets[e]
    if not tl.err then
      local member = ev_member[e]
      -- A light list reads its base's keys (board_of false there).
      local key = tl.base or tl
      local ms = of_list[key]
      if not ms then
        ms = {n = 0, seen = {}}
        of_list[key] = ms
        lists[#lists + 1] = key
      end
      if not ms.seen[member] then
        ms.seen[member] = true
        local n = ms.n + 1
        ms.n, ms[n] = n, member
      end
      if tl.prefetch[1] and ev_value[e] ~= 0 then
        for _, per in ipairs(tl.prefetch) do wanted(per, member) end
      end
    end
  end
  -- A key's first list gives it a copy of its members, made in one call;
  -- a member listed twice for a key (lists sharing it) is read twice.
  for x = 1, #lists do
    local tl = lists[x]
    local ms, board_of, period_of = of_list[tl], tl.board_of, tl.period_of
    local nm = ms.n
    for k = 1, tl.n do
      if not board_of[k] then
        local per = period_of[k]
        if not codes[per] then codes_of(per) end
        local w = want[per]
        if not w then
          want[per] = {unpack(ms, 1, nm)}
        else
          local nw = #w
          for j = 1, nm do w[nw + j] = ms[j] end
        end
      end
    end
  end
  for per, w in pairs(want) do
    local got = call('ZMSCORE', per.zkey, unpack(w))
    local c = codes[per]
    for k = 1, #w do
      local s = got[k]
      -- s + 0 parses a score once (tonumber parses it twice) and, unlike
      -- some tonumber, accepts an exponent ("1e+09", see num).
      if s then c[w[k]] = s + 0 else c[w[k]] = false end
    end
  end
end

-- League records: lm_rec[member] is the record ("round\ttier\tcohort") of
-- a member the batch may place in the open round (false: none, or already
-- in it). A record of a round not listed stops the batch ({-3, ...}): its
-- outcome decides the member's tier; so does a record whose cohort, in a
-- closed round, is not decided yet ({-4, ...}): deciding it reads the
-- whole cohort, which decide.lua does in bounded calls.
local lm_rec = {}
if league then
  local needs, seen, undecided, asked = {}, {}, {}, {}
  for e = 1, nevents do
    local tl, member = ev_targets[e], ev_member[e]
    if tl.lg and not tl.err and lm_rec[member] == nil then
      local rec = false
      if not code_of(league.cur, member) then rec = call('GET', ev_lmkey[e]) end
      lm_rec[member] = rec
      -- Cohort 0: the round was recorded and the record holds the tier
      -- earned; no round needs listing or deciding.
      if rec and not string.find(rec, '\t0$') then
        local r = string.match(rec, '^[^\t]*')
        if r ~= league.cur.id and not league.by_id[r] and not seen[r] then
          seen[r] = true
          needs[#needs + 1] = r
        end
        local rp = league.by_id[r]
        local _, lv, c = string.match(rec, '^([^\t]*)\t(%d+)\t(%d+)$')
        if rp and r ~= league.cur.id and c and rp.e <= now then
          local level = math.min(tonumber(lv), league.ntiers)
          local field = 'd:' .. level .. ':' .. c
          local seen_at = r .. ':' .. field
          if asked[seen_at] == nil then
            -- Once per round and per cohort: a batch's members share few.
            if rp.f_exists == nil then rp.f_exists = call('EXISTS', rp.fkey) == 1 end
            asked[seen_at] = rp.f_exists and call('HEXISTS', rp.fkey, field) == 0
            if asked[seen_at] then
              undecided[#undecided + 1] = r
              undecided[#undecided + 1] = level
              undecided[#undecided + 1] = c
            end
          end
        end
      end
    end
  end
  if #needs > 0 then return {-3, now, unpack(needs)} end
  if #undecided > 0 then return {-4, now, unpack(undecided)} end
end

-- The segment boards' period keys the batch may write (every target row
-- is made by now) are asked whether they exist before anything is written
-- (per.created: the batch creates it, so it gets its expiry and registry
-- entry in finish). One EXISTS answers for a whole range when all or none
-- of it exist, the usual case; a mixed range is split in halves, so only
-- a batch that creates keys asks more than once per chunk.
do
  local list = seg_rows
  local function check(lo, hi)
    local ks = {}
    for k = lo, hi do ks[k - lo + 1] = list[k].zkey end
    local n = call('EXISTS', unpack(ks))
    if n == 0 or n == hi - lo + 1 then
      for k = lo, hi do list[k].created = n == 0 end
    else
      local mid = floor((lo + hi) / 2)
      check(lo, mid)
      check(mid + 1, hi)
    end
  end
  -- Chunks keep unpack well within Lua's stack.
  for lo = 1, #list, 1000 do check(lo, math.min(lo + 999, #list)) end
end

-- Codes count from the best end of each view's own value range [lo, hi]
-- (windows and day totals hold more than [min, max]; see codec in board.go).
local function value_of(view, rv)
  if order == 'desc' then return view.hi - rv end
  return view.lo + rv
end


-- outside is how far v lies out of [min, max] (0 within).
local function outside(v)
  if v < vmin then return vmin - v end
  if v > vmax then return v - vmax end
  return 0
end

-- derive is the member's sum and presence in the unbuilt window of check
-- c before the event (see steps). A member is in a window when it has a
-- day total on one of its days; a non-zero sum needs one. The walk reads
-- the days of the window but those also in today's, so when the sum is
-- zero and that matters (0 outside [min, max]) and today's window holds
-- the member, the window's other days are read.
local function derive(c, member)
  local view, sb = views[c.v], c.sb
  if sb and not known(sb) then return 0, false end -- a value never written: no data at all
  local function day(s)
    local j = day_totals.by_start[s]
    if sb then return segrow(sb, day_vi, j) end
    return day_totals.periods[j]
  end
  local function dayval(s)
    local code = code_of(day(s), member)
    if not code then return 0, false end
    return value_of(day_totals, (split(code, day_totals.span))), true
  end
  local w = view.periods[view.today]
  if sb then w = segrow(sb, c.v, view.today) end
  local code = code_of(w, member)
  local sum = 0
  if code then sum = value_of(view, (split(code, view.span))) end
  local e = view.periods[c.j]
  local st = c.steps
  local _, present = dayval(c.d_s)
  for r = 1, #st, 2 do
    local s = st[r]
    local dv, p = dayval(s)
    sum = sum + st[r + 1] * dv
    if p and s >= e.s and s < e.e then present = true end
  end
  if sum ~= 0 then
    present = true
  elseif not present and code and outside(0) > 0 then
    for _, per in ipairs(day_totals.periods) do
      if per.s >= e.s and per.s < e.e and code_of(day(per.s), member) then
        present = true
        break
      end
    end
  end
  return sum, present
end

local function out_of_range(view, nv, et)
  return {0, 'invalid_argument', 'the score in view ' .. view.name .. ' would be ' ..
    fmt_score(nv, decimals) .. ', outside [' .. fmt_score(vmin, decimals) .. ', ' ..
    fmt_score(vmax, decimals) .. ']', et}
end

local function better(a, b)
  if order == 'desc' then return a > b end
  return a < b
end

local function rank_of(per, member, code)
  flush(per)
  if ties == 'shared' then
    return call('ZCOUNT', per.zkey, '-inf', '(' .. fmt(code)) + 1
  end
  return call('ZRANK', per.zkey, member) + 1
end

-- state returns a member's score and rank (0 unless ranks are answered) in
-- a period (0, 0 when absent).
local function state(view, per, member)
  local code = code_of(per, member)
  if not code then return 0, 0 end
  local q = split(code, view.span)
  if not ranks then return value_of(view, q), 0 end
  return value_of(view, q), rank_of(per, member, code)
end

-- Without ranks, an overtake still needs the exact rank of a member that
-- rose, but only when it can be within the top moves_top: top[per] is the
-- code at rank moves_top of a view's current period (false: fewer
-- members), read once and kept as a bound while no write takes a member
-- out of the first moves_top entries. A code worse than it ranks below
-- moves_top.
local top = {}
local function top_code(per)
  local t = top[per]
  if t == nil then
    flush(per)
    local r = call('ZRANGE', per.zkey, top_at, top_at, 'WITHSCORES')
    t = r[2] and num(r[2]) or false
    top[per] = t
  end
  return t
end

-- segment_full explains why an event naming a new segment value is
-- refused when its name's index is full, or is nil.
local function segment_full(esegs)
  for g = 1, #esegs do
    local sb = esegs[g]
    -- A known value is never full (every value was asked known up front).
    if not sb.known and full(sb) then
      return 'segment ' .. sb.name .. ' already has ' .. fmt(seg_cap) .. ' values on board ' ..
        board .. ', so the new value ' .. sb.value .. ' is refused'
    end
  end
  return nil
end

-- The member records (sm), read for the whole batch in one HMGET and
-- written in one HSET at the end: sm_rec[member] the "name=value" lines
-- (false: none), sm_pure[member] the pure names.
local sm_rec, sm_pure, sm_out = {}, {}, {}
-- again[member]: the member has more than one event in the batch (only
-- then can a mirrored write of it be followed by a plan in full, see
-- log_mirror).
local again = {}
local function read_member_records()
  local fields, seen = {}, {}
  for e = 1, nevents do
    local member = ev_member[e]
    local s = seen[member]
    if s ~= nil then again[member] = true end
    if not s and not ev_targets[e].err then
      seen[member] = true
      fields[#fields + 1] = member
      fields[#fields + 1] = member .. '\0p'
    elseif s == nil then
      seen[member] = false
    end
  end
  if #fields > 0 then
    local got = call('HMGET', sm_key, unpack(fields))
    for k = 1, #fields, 2 do
      sm_rec[fields[k]] = got[k] or false
      sm_pure[fields[k]] = got[k + 1] or ''
    end
  end
end
if sm_key then read_member_records() end

-- parse_rec reads "name=value" lines into a table.
local function parse_rec(rec)
  local latest = {}
  if rec then
    for n, val in string.gmatch(rec, '([^=\n]+)=([^\n]*)') do latest[n] = val end
  end
  return latest
end

-- The batch's bookkeeping: the search index entries to add and each
-- view's answer of the current event (the period keys written, for
-- expiry, registry and the change message, are pending_list).
local name_pending = {}
local ans_value, ans_rank, ans_set = {}, {}, {}

-- An event's plan, one entry per target k, in arrays reused across events:
-- this is the hot path, and every table it does not allocate is time Redis
-- is not blocked. plan_code the new code, plan_value its score,
-- plan_change whether it differs, plan_present whether the member is in
-- the period after the event, plan_old the old code (false: absent),
-- plan_old_value the old score (0 when absent).
local plan_code, plan_value, plan_change, plan_present, plan_old, plan_old_value = {}, {}, {}, {}, {}, {}

-- period_ids lists the answered periods of the reply, one id per answered
-- view for each event time (pl_of_t: where its ids start) or replay: an
-- event answers where its ids start, instead of repeating the ids every
-- event of that time shares.
local period_ids, pl_of_t = {}, {}

-- replay answers a repeated idempotency id: same content answers the
-- current state in the original periods; different content is a conflict.
local function replay(e, record, et)
  local sep = string.find(record, '\0', 1, true)
  if string.sub(record, 1, sep - 1) ~= fingerprint(e) then
    return {0, 'conflict', 'event id ' .. ev_id[e] .. ' was already used for a different event', et}
  end
  local member, orig = ev_member[e], {}
  for name, pid in string.gmatch(string.sub(record, sep + 1), '([^\t\n]+)\t([^\n]+)') do
    orig[name] = pid
  end
  local res = {1, 1, 0, #period_ids + 1}
  for v = 1, nviews do
    local view = views[v]
    if view.kind ~= 'h' then
      -- The original period is a listed row or an original row (the -5
      -- stop saw to it); a view the record does not name answers nothing.
      local pid = orig[view.name] or ''
      local per = view.by_id[pid] or view.orig_by_id[pid]
      local score, rank = 0, 0
      if per then score, rank = state(view, per, member) end
      period_ids[#period_ids + 1] = pid
      res[#res + 1] = score
      if ranks then res[#res + 1] = rank end
    end
  end
  return res
end

local no_names = {} -- pure in no name; never written

-- rec_lines renders a member record's two fields: "name=value" lines of
-- the latest values, in the board's order of names, and the pure names.
local function rec_lines(latest, pure_after)
  local rec, pure = '', ''
  for _, nm in ipairs(seg_names) do
    local val = latest[nm]
    if val then
      if rec == '' then rec = nm .. '=' .. val else rec = rec .. '\n' .. nm .. '=' .. val end
    end
    if pure_after[nm] then
      if pure == '' then pure = nm else pure = pure .. '\n' .. nm end
    end
  end
  return rec, pure
end

-- new_lines is rec_lines of a member whose latest values are the list's
-- carried ones, pure in none of them (no_names) or in all (carried): made
-- once per list.
local function new_lines(tl, pure_after)
  if pure_after == no_names then
    local m = tl.new_none
    if not m then
      m = {rec_lines(tl.carried, no_names)}
      tl.new_none = m
    end
    return m
  end
  local m = tl.new_pure
  if not m then
    m = {rec_lines(tl.carried, tl.carried)}
    tl.new_pure = m
  end
  return m
end

-- purity returns the segment names the member stays pure in after an
-- event with the target list tl (see Mirrors), its latest values before
-- it, and its record and pure names as read; all nil without segments.
--
-- Mirrors: a member every one of whose events on this board carried the
-- same value of a segment name (it is "pure" in that name) has, in every
-- period of every view, the same code on that segment board as on the
-- board itself: the same events make both. Its segment targets then copy
-- the board's plan instead of reading their own codes. Purity is kept in
-- the member record's field "<member>\0p" (the pure names, one per line);
-- it starts with a member's first event on the board (known by an absent
-- record and no score in the all view) and a name leaves it for good with
-- the first event that does not carry the same value.
local function purity(member, tl)
  if not sm_key then return nil, nil, nil, nil end
  local old_rec, old_pure = sm_rec[member], sm_pure[member]
  local carried = tl.carried
  if not old_rec then
    -- Without a record, the latest values are the carried ones: the list's
    -- own table serves (record_segments sets only those same values), as
    -- it does for the pure names of a member new to the board.
    local all = tl.all
    if all and #tl.segs > 0 then
      -- code_of(all, member), written out: it runs per event.
      local c = codes[all]
      local code = c and c[member]
      if code == nil then code = code_of(all, member) end
      if not code then return carried, carried, old_rec, old_pure end
    end
    return no_names, carried, old_rec, old_pure
  end
  -- A record of exactly the carried values, pure in each (the usual one of
  -- a member whose values never change) stays as it is: its lines are
  -- those of a new record pure in them.
  local m = new_lines(tl, carried)
  if old_rec == m[1] and old_pure == m[2] then return carried, carried, old_rec, old_pure end
  local pure_after, latest = {}, parse_rec(old_rec)
  if old_pure ~= '' then
    for nm in string.gmatch(old_pure, '[^\n]+') do
      if carried[nm] and carried[nm] == latest[nm] then pure_after[nm] = carried[nm] end
    end
  end
  return pure_after, latest, old_rec, old_pure
end

-- plan computes every target's new code into the plan arrays, writing
-- nothing. It returns the refusal when a score would leave its bounds
-- (else nil), and whether the member's id entry may be missing from the
-- id index: it is new in the all view, or, on a board without one, in a
-- period (the entry goes only with a removal or once no retained period
-- holds the member).
local function plan(member, value, et, tl, pure_after)
  local view_of, period_of, mirror_of, board_of = tl.view_of, tl.period_of, tl.mirror_of, tl.board_of
  local unit_of, all = tl.unit_of, tl.all
  -- The loop runs per event and target: what it reads of the batch is
  -- held in locals, as each upvalue read is one more step per target.
  local codes, desc, incr, lo_cap, hi_cap = codes, desc, policy == 'increment', vmin, vmax
  local p_code, p_value, p_change, p_present, p_old, p_old_value =
    plan_code, plan_value, plan_change, plan_present, plan_old, plan_old_value
  local id_new = false
  for k = 1, tl.n do
    local view = views[view_of[k]]
    local per = period_of[k]
    local m = mirror_of[k]
    if m and pure_after[board_of[k].name] then
      -- Only the write reads a mirrored target's plan: a segment board
      -- answers nothing, and a pure name's windows are the board's.
      p_code[k], p_change[k] = p_code[m], p_change[m]
    else
      -- The code lookup, split and value_of are written out here rather
      -- than called.
      local span, kind = view.span, view.kind
      local unit = unit_of[k]
      local pc = codes[per]
      local old = pc and pc[member]
      if old == nil then old = code_of(per, member) end
      local nv, nt, change, ov
      if old then
        -- split(old, span) with % (no function call): r is corrected by
        -- one span where the division rounded across, then q is exact.
        local r = old % span
        if r < 0 then r = r + span elseif r >= span then r = r - span end
        if desc then ov = view.hi - (old - r) / span else ov = view.lo + (old - r) / span end
        nv, nt, change = ov, r, false
        if incr then
          if value ~= 0 then
            nv, change = ov + value, true
            if unit > r then nt = unit end
          end
        elseif policy == 'best' then
          if better(value, ov) or (value == ov and unit < r and ties ~= 'shared') then
            nv, nt, change = value, unit, true
          end
        else -- latest: the newest event by event time wins; equal times, the later write
          local ot
          if exact then
            ot = tonumber(call('HGET', per.xkey, per.xtag and member .. per.xtag or member) or '0')
          else
            ot = (per.base + r) * view.unit
          end
          if et >= ot then
            nv, nt, change = value, unit, true
          end
        end
        p_old_value[k] = ov
      else
        if per == all or not all then id_new = true end
        if incr and value == 0 then
          nv, nt, change = 0, unit, false -- adds nothing: an absent member stays absent
        else
          nv, nt, change = value, unit, true
        end
        p_old_value[k] = 0
      end
      if kind == 'h' then
        -- A day total is bounded by ±S only, so every window (N of them
        -- summed) stays within its codes' range.
        if nv < view.lo or nv > view.hi then
          return {0, 'invalid_argument', "the member's net change on " .. per.id .. ' would be ' ..
            fmt_score(nv, decimals) .. ', outside ±' .. fmt_score(view.hi, decimals) ..
            ' that rolling windows can hold', et}, id_new
        end
      elseif kind == 'l' then
        -- A round holds fewer events than the views (none of a closed
        -- round), so its score is kept within [min, max] rather than
        -- refusing an event the views take.
        if nv < lo_cap then nv = lo_cap elseif nv > hi_cap then nv = hi_cap end
      elseif kind ~= 'w' and (change or old) and (nv < lo_cap or nv > hi_cap) then
        return out_of_range(view, nv, et), id_new
      end
      if span == 1 then
        nt = 0
        if desc then p_code[k] = view.hi - nv else p_code[k] = nv - view.lo end
      elseif desc then
        p_code[k] = (view.hi - nv) * span + nt
      else
        p_code[k] = (nv - view.lo) * span + nt
      end
      p_value[k] = nv
      p_change[k] = change
      p_present[k] = change or old ~= false
      p_old[k] = old
    end
  end
  return nil, id_new
end

-- check_windows checks every window holding the event's day, built or
-- not, and returns the refusal or nil: a window that drifted out of
-- [min, max] when a day left it may move back, but no event moves a score
-- further out. A member pure in a segment name has the board's windows
-- there, checked already.
local function check_windows(member, value, et, tl, pure_after)
  for _, c in ipairs(tl.checks) do
    if not (c.sb and pure_after and pure_after[c.sb.name]) then
      local ov, nv, present
      if c.k then
        ov, nv, present = plan_old_value[c.k], plan_value[c.k], plan_old[c.k] ~= false
      else
        ov, present = derive(c, member)
        nv = ov + value
      end
      if outside(nv) > 0 and not (present and outside(nv) <= outside(ov)) then
        return out_of_range(views[c.v], nv, et)
      end
    end
  end
  return nil
end

-- overtake keeps, when a member that moved up to rank in the current
-- period per of view was ranked below it before (by its old code), who it
-- passed: the member now right behind it.
local function overtake(view, per, member, code, old, rank, et)
  local was = call('ZCOUNT', per.zkey, '-inf', '(' .. sfmt('%d', old))
  if was <= rank then return end
  -- The first member with a worse code, in one call: passed only if it
  -- was not behind the member's old code already (with shared ties, a
  -- member that only joins a tie passes nobody).
  local got = call('ZRANGE', per.zkey, '(' .. sfmt('%d', code), '+inf', 'BYSCORE', 'LIMIT', '0', '1', 'WITHSCORES')
  local behind = got[1]
  if behind and behind ~= member and got[2] + 0 <= old then
    local mv = moves[view]
    if not mv then
      mv = {}
      moves[view] = mv
    end
    mv[#mv + 1] = per.id .. '\t' .. member .. '\t' .. behind .. '\t' .. sfmt('%d\t%d', rank, et)
  end
end

-- mirror_log[member] lists the member's mirrored writes since its last
-- event planned in full, oldest first: each the light list and, per
-- target, the code written to its segment rows (false: none). Only a plan
-- in full reads a segment row's code, so such an event first copies the
-- log into codes (unmirror); until then codes may lack those rows.
local mirror_log, no_codes, any_mirrored = {}, {}, false
local function unmirror(member)
  local log = mirror_log[member]
  mirror_log[member] = nil
  for x = 1, #log do
    local snap = log[x]
    local tl = snap[1]
    local srows = tl.srows
    for k = 1, tl.n do
      local code = snap[k + 1]
      if code then
        for g = 1, #tl.segs do
          local sper = srows[g][k]
          local sc = codes[sper]
          if sc then sc[member] = code else codes[sper] = {[member] = code} end
        end
      end
    end
  end
end

-- log_mirror adds a mirrored event's entry to the member's mirror log and
-- returns it, its codes still false: the segment rows' codes go there,
-- not to codes, one table per event instead of one entry per segment row.
local scratch_snap = {}
local function log_mirror(member, tl)
  -- A member with one event in the batch needs no log: it gets no later
  -- plan in full. Its codes go to a table nothing reads.
  if not again[member] then return scratch_snap end
  local n = tl.n
  if n > #no_codes then for k = #no_codes + 1, n do no_codes[k] = false end end
  local snap = {tl, unpack(no_codes, 1, n)}
  local log = mirror_log[member]
  if log then log[#log + 1] = snap else mirror_log[member] = {snap} end
  any_mirrored = true
  return snap
end

-- queue_mirrors queues a mirrored event's code (text) of target k to the
-- same row of each of its segment boards (srows: see light_list); the
-- rows have no windows, so none is fresh.
local function queue_mirrors(srows, k, text, member, et)
  for g = 1, #srows do
    local sper = srows[g][k]
    local sp = pending[sper]
    if sp then
      local ns = sp.n
      sp[ns + 1] = text
      sp[ns + 2] = member
      sp.n = ns + 2
    else
      -- Made with its first entry in place.
      pending[sper] = {text, member, false, false, n = 2}
      pending_list[#pending_list + 1] = sper
    end
    if exact then call('HSET', sper.xkey, member .. sper.xtag, et) end
  end
end

-- write_plan queues the plan's changed codes, and fills each view's answer
-- (ans_*) from the target that answers it, reading a rank where one is
-- answered or an overtake may have happened.
local function write_plan(member, et, tl, mirrored)
  local view_of, period_of, answer = tl.view_of, tl.period_of, tl.answer
  local srows, lg = tl.srows, tl.lg
  -- Per event and target: the batch's tables are held in locals (see plan).
  local codes, pending, pending_list, top, exact, ranks = codes, pending, pending_list, top, exact, ranks
  local p_code, p_old, p_change = plan_code, plan_old, plan_change
  local last_code, last_text = nil, nil
  local snap = nil
  if mirrored then snap = log_mirror(member, tl) end
  for k = 1, tl.n do
    local per = period_of[k]
    local code = p_code[k]
    local old = p_old[k]
    local v = view_of[k]
    local view = views[v]
    -- A segment board's row is no view's current period and answers
    -- nothing, so its target is written only.
    if p_change[k] then
      if not ranks and per == view.cur then
        -- top[per] stays a bound (every code worse than it ranks below
        -- moves_top) while at least moves_top codes are at most it: a
        -- write that enters the top or moves within it keeps that true,
        -- and only one leaving it (or a set smaller than the top) drops
        -- the bound.
        local t = top[per]
        if t ~= nil and not (t and (code <= t or not old or old > t)) then top[per] = nil end
      end
      -- write(per, member, code), written out: it runs per event and target.
      -- New tables are made with room for their first entries: a segment
      -- board's key gets one or two members a batch, and every growth of
      -- a table is a rehash.
      local pc = codes[per]
      if pc then pc[member] = code else codes[per] = {[member] = code} end
      local p = pending[per]
      if not p then
        p = {false, false, false, false, n = 0}
        pending[per] = p
        pending_list[#pending_list + 1] = per
      end
      local np = p.n
      -- The segment boards' copies of a code, queued right after it,
      -- reuse its text.
      if code ~= last_code then last_code, last_text = code, sfmt('%d', code) end
      p[np + 1] = last_text
      p[np + 2] = member
      p.n = np + 2
      if exact then
        call('HSET', per.xkey, per.xtag and member .. per.xtag or member, et)
      end
      if per.fresh then
        call('SET', per.rkey, '1', 'PXAT', fmt(per.exp))
        per.fresh = false
        ready_cache[per] = true
      end
      if mirrored and k ~= lg then
        -- Mirrored: the same write to the row's segment boards (no
        -- windows, so none is fresh).
        snap[k + 1] = code
        queue_mirrors(srows, k, last_text, member, et)
      end
    end
    if per == answer[v] and view.kind ~= 'h' then
      ans_set[v] = true
      if plan_present[k] then
        ans_value[v] = plan_value[k]
        local rank = 0
        if ranks then
          rank = rank_of(per, member, code)
        elseif per == view.cur and old and code < old then
          local t = top[per]
          if t == nil then t = top_code(per) end
          if not t or code <= t then rank = rank_of(per, member, code) end
        end
        if ranks then ans_rank[v] = rank else ans_rank[v] = 0 end
        if per == view.cur and rank > 0 and rank <= moves_top and old and code < old then
          -- Moved up within the top: the rank it had (those better than
          -- its old code, itself now among them) tells whether it passed
          -- anyone.
          overtake(view, per, member, code, old, rank, et)
        end
      else
        ans_value[v], ans_rank[v] = 0, 0
      end
    end
  end
end

-- The events' replies go to one flat array, each its length then its
-- entries (see Returns): Redis checks every table of a script's reply
-- for six special fields, so one table per event cost that per event.
-- An applied event with the event time and answered periods of the last
-- applied event written in full is written short: -k, then its k values.
local flat, nflat = {}, 0
local last_et, last_pl = nil, nil

-- row_start reserves the header of an applied event's row at the end of
-- flat and returns where its values start; row_end writes the header.
local function row_start(et, pl)
  if et == last_et and pl == last_pl then return nflat + 1 end
  return nflat + 5
end
local function row_end(et, pl, n)
  local f = nflat
  if et == last_et and pl == last_pl then
    flat[f + 1] = f + 1 - n
  else
    flat[f + 1], flat[f + 2], flat[f + 3], flat[f + 4], flat[f + 5] = n - f - 1, 1, 0, et, pl
    last_et, last_pl = et, pl
  end
  nflat = n
end

-- answer_pl is where the answered periods of list tl start in period_ids.
local function answer_pl(tl)
  local pl = tl.pl
  if not pl then
    -- The answered periods depend on the event time only (segment boards
    -- share the board's periods): lists of one time share their ids.
    pl = pl_of_t[tl.t]
    if not pl then
      pl = #period_ids + 1
      pl_of_t[tl.t] = pl
      for v = 1, nviews do
        if views[v].kind ~= 'h' then period_ids[#period_ids + 1] = tl.answer[v].id end
      end
    end
    tl.pl = pl
  end
  return pl
end

-- answer appends the reply of an applied event to flat: per answered view
-- its period, score and (with ranks) rank.
local function answer(member, et, tl)
  local pl = answer_pl(tl)
  local res = flat
  local n = row_start(et, pl)
  for v = 1, nviews do
    local view = views[v]
    if view.kind ~= 'h' then
      local per = tl.answer[v]
      if ans_set[v] then
        ans_set[v] = nil
        n = n + 1
        res[n] = ans_value[v]
        if ranks then
          n = n + 1
          res[n] = ans_rank[v]
        end
      else -- a window the event's day is not in: the member's state there
        local score, rank = state(view, per, member)
        n = n + 1
        res[n] = score
        if ranks then
          n = n + 1
          res[n] = rank
        end
      end
    end
  end
  row_end(et, pl, n)
end

-- Plain lists: on a board without windows or exact times, an event
-- naming no segment value has one target per view, target v being the
-- period of view v that holds its time, which also answers view v; so has
-- a mirrored event (see Mirrors), whose codes also go to its segment
-- boards' rows. On a league board, an event dated in the open round has
-- the round's target too, last (plain_lg): kept within [min, max] rather
-- than refused, answering nothing. apply_plain plans, writes and answers
-- such an event in one pass over its targets (ranks, when read, in a
-- second), taking back what it queued when a later target is out of range
-- (undo_plain), as plan, write_plan and answer do for any list (same
-- codes, queue, mirror log, bounds, ranks and overtakes; the model and
-- equivalence tests hold both to it), without their per-target branches
-- for kinds and segment targets: it is most events of most boards. It
-- returns the refusal, or nil, whether the member's id entry is new (see
-- index_names), and whether the member entered the open round (its
-- caller seats it); the reply goes to flat.
local plain_ok = not has_windows and not exact
local incr, best = policy == 'increment', policy == 'best'
-- pl_old[k]: target k's code before the event when the event changed it
-- (false: absent), else unchanged; pl_rank: the targets whose rank the
-- event reads (without ranks: those that rose in a view's current period,
-- maybe into the top moves_top).
local pl_old, pl_rank, unchanged = {}, {}, {}

-- undo_plain takes back the queued writes of an event's first k targets
-- (apply_plain found target k + 1 out of range) and its answers so far
-- (flat up to m); npl: pending_list's length before the event. Nothing
-- reached Redis: ranks are read after the last target. A top bound
-- dropped stays dropped (top_code reads it again); one kept is still a
-- bound of the codes as they were.
local function undo_plain(member, tl, k, npl, snap, m)
  for j = nflat + 1, m do flat[j] = nil end
  local period_of, srows = tl.period_of, tl.srows
  for j = 1, k do
    local old = pl_old[j]
    if old ~= unchanged then
      local per = period_of[j]
      codes[per][member] = old
      local p = pending[per]
      p.n = p.n - 2
      if snap then
        for g = 1, #srows do
          local sp = pending[srows[g][j]]
          sp.n = sp.n - 2
        end
      end
    end
  end
  for x = #pending_list, npl + 1, -1 do
    pending[pending_list[x]] = nil
    pending_list[x] = nil
  end
  local log = snap and mirror_log[member]
  if log then
    log[#log] = nil
    if #log == 0 then mirror_log[member] = nil end
  end
end

-- plain_consts keeps on a plain list (or a light list's base, whose
-- targets it shares) what apply_plain reads of each target k: its period's
-- codes table, span, the codec's base value and signed span (code =
-- (value - base) * sspan + tie part: base hi and sspan -span descending,
-- lo and span ascending, so value = base + (code - tie part) / sspan, each
-- exact as the codec's own), the time unit (0 for a span of one unit,
-- whose codes keep no tie part), whether the target keeps the view's top
-- bound (its current period, ranks not answered), and whether a member
-- absent there is new to the board (the all view, or any on a board
-- without one).
local function plain_consts(tl)
  local n, period_of, unit_of, all = tl.n, tl.period_of, tl.unit_of, tl.all
  local c = {codes = {}, span = {}, sspan = {}, base = {}, unit = {}, track = {}, fresh = {}}
  for k = 1, n do
    local view, per = views[k], period_of[k]
    c.codes[k] = codes_of(per)
    c.span[k] = view.span
    if desc then c.base[k], c.sspan[k] = view.hi, -view.span else c.base[k], c.sspan[k] = view.lo, view.span end
    if view.span == 1 then c.unit[k] = 0 else c.unit[k] = unit_of[k] end
    c.track[k] = per == view.cur and not ranks and view.kind ~= 'l'
    c.fresh[k] = per == all or not all
  end
  tl.consts = c
  return c
end

local function apply_plain(member, value, et, tl, mirrored)
  local src = tl.base or tl
  local c = src.consts or plain_consts(src)
  local cs, spans, sspans, bases, units, track, fresh = c.codes, c.span, c.sspan, c.base, c.unit, c.track, c.fresh
  local period_of, n, lg = tl.period_of, tl.n, tl.lg
  local seat = false
  local lo_cap, hi_cap = vmin, vmax
  local pending, pending_list, top, ranks, incr = pending, pending_list, top, ranks, incr
  local p_old, p_rank, unchanged = pl_old, pl_rank, unchanged
  local id_new, nrank = false, 0
  local pl = tl.pl or answer_pl(tl)
  local res = flat
  local m0 = row_start(et, pl) -- the event's values start after m0
  local m = m0
  local npl = #pending_list
  local snap, srows = nil, tl.srows
  if mirrored then snap = log_mirror(member, tl) end
  for k = 1, n do
    local pc = cs[k]
    local old = pc[member]
    if old == nil then old = code_of(period_of[k], member) end
    local unit = units[k]
    -- One assignment per statement: a multiple assignment goes through
    -- temporaries, and this loop runs per event and view.
    local nv, nt, change
    if old then
      local span = spans[k]
      local r = old % span
      if r < 0 then r = r + span elseif r >= span then r = r - span end
      nv = bases[k] + (old - r) / sspans[k] -- the old value
      nt = r
      change = false
      if incr then
        if value ~= 0 then
          nv = nv + value
          change = true
          if unit > r then nt = unit end
        end
      elseif best then
        if better(value, nv) or (value == nv and unit < r and ties ~= 'shared') then
          nv = value
          nt = unit
          change = true
        end
      elseif et >= (period_of[k].base + r) * views[k].unit then -- latest
        nv = value
        nt = unit
        change = true
      end
    else
      if fresh[k] then id_new = true end
      nt = unit
      if incr and value == 0 then
        nv = 0 -- adds nothing: an absent member stays absent
        change = false
      else
        nv = value
        change = true
      end
    end
    if k == lg then
      -- The open round (the last target): a round holds fewer events than
      -- the views, so its score is kept within [min, max] (see plan).
      if nv < lo_cap then nv = lo_cap elseif nv > hi_cap then nv = hi_cap end
      seat = change and old == false
    elseif (change or old) and (nv < lo_cap or nv > hi_cap) then
      undo_plain(member, tl, k - 1, npl, snap, m)
      return out_of_range(views[k], nv, et), id_new
    end
    if change then
      local code = (nv - bases[k]) * sspans[k] + nt
      local per = period_of[k]
      p_old[k] = old
      if track[k] then
        -- top[per] stays a bound (see write_plan): a member that rose
        -- keeps a number bound.
        local t = top[per]
        if old and code < old then
          -- A rise still worse than a number bound stays out of the top:
          -- no rank to read.
          if not (t and code > t) then
            nrank = nrank + 1
            p_rank[nrank] = k
            if t == false then top[per] = nil end
          end
        elseif t ~= nil and not (t and (code <= t or not old or old > t)) then
          top[per] = nil
        end
      end
      pc[member] = code
      local p = pending[per]
      if not p then
        p = {false, false, false, false, n = 0}
        pending[per] = p
        pending_list[#pending_list + 1] = per
      end
      local np = p.n
      local text = sfmt('%d', code)
      p[np + 1] = text
      p[np + 2] = member
      p.n = np + 2
      if snap then
        snap[k + 1] = code
        queue_mirrors(srows, k, text, member, et)
      end
    else
      p_old[k] = unchanged
    end
    -- nv is 0 for a member absent before and after. The round answers
    -- nothing.
    if k ~= lg then
      m = m + 1
      res[m] = nv
      if ranks then
        m = m + 1
        res[m] = 0
      end
    end
  end
  -- Ranks are read once every target is queued: each target is its own
  -- key, so a rank is the same as read right after its own write.
  if ranks then
    for k = 1, n do
      local per = period_of[k]
      local code = cs[k][member]
      if code and k ~= lg then
        local rank = rank_of(per, member, code)
        res[m0 + 2 * k] = rank
        local view, old = views[k], p_old[k]
        if per == view.cur and rank <= moves_top and old and old ~= unchanged and code < old then
          overtake(view, per, member, code, old, rank, et)
        end
      end
    end
  else
    for x = 1, nrank do
      local k = p_rank[x]
      local view, per = views[k], period_of[k]
      local code, old = cs[k][member], p_old[k]
      local t = top[per]
      if t == nil then t = top_code(per) end
      if not t or code <= t then
        local rank = rank_of(per, member, code)
        if rank <= moves_top then overtake(view, per, member, code, old, rank, et) end
      end
    end
  end
  row_end(et, pl, m)
  return nil, id_new, seat
end

-- index_names keeps the names hash and the search index ni up to date
-- with an applied event.
local function index_names(e, id_new)
  local member = ev_member[e]
  -- The id's entry, to ni (compact.lua later moves it to the blocks):
  -- when the member enters the all view (new, or back after a removal)
  -- or, on a board without one, a period (see plan). Members from before
  -- the index are added by Store.IndexMemberIDs.
  if id_new then
    name_pending[#name_pending + 1] = '0'
    name_pending[#name_pending + 1] = (ev_member_fold[e] or member) .. '\0' .. member
  end
  local name = ev_name[e]
  if not name or name == '' then return end
  -- The search index follows the name: the old name's entry goes, from
  -- ni or else from the blocks (its folded form is kept beside it,
  -- "<member>\0k", as Lua cannot fold), the new one comes. A name that
  -- folds to the folded id has the id's entry, which stays while the
  -- member does: it is neither taken out nor added again.
  local got = call('HMGET', names_key, member, member .. '\0k')
  if got[1] ~= name then
    local id_fold = ev_member_fold[e] or member
    if got[2] and got[2] ~= id_fold then
      if #name_pending > 0 then
        call('ZADD', name_index, unpack(name_pending))
        name_pending = {}
      end
      local old = got[2] .. '\0' .. member
      if call('ZREM', name_index, old) == 0 then idx_del(index_bounds, index_blocks, old) end
    end
    local fold = ev_name_fold[e]
    call('HSET', names_key, member, name, member .. '\0k', fold)
    if fold ~= id_fold then
      name_pending[#name_pending + 1] = '0'
      name_pending[#name_pending + 1] = fold .. '\0' .. member
    end
  end
end

-- record_segments notes the values seen, and the member's latest value of
-- each name for its card, with the names it is pure in (see Mirrors).
local function record_segments(member, tl, latest, pure_after, old_rec, old_pure)
  local esegs = tl.segs
  for g = 1, #esegs do
    local sb = esegs[g]
    if not sb.known then
      call('ZADD', index_key[sb.name], 0, sb.value)
      sb.known = true
    end
    latest[sb.name] = sb.value
  end
  local rec, pure
  if latest == tl.carried then
    -- Both lines depend on the list alone then (see purity).
    local m = new_lines(tl, pure_after)
    rec, pure = m[1], m[2]
  else
    rec, pure = rec_lines(latest, pure_after)
  end
  if rec ~= (old_rec or '') or pure ~= old_pure then
    sm_rec[member], sm_pure[member] = rec, pure
    sm_out[#sm_out + 1] = member
    sm_out[#sm_out + 1] = rec
    sm_out[#sm_out + 1] = member .. '\0p'
    sm_out[#sm_out + 1] = pure
  end
end

-- remember_id stores an applied event's idempotency record: its
-- fingerprint and the period that answered each view.
local function remember_id(e, idkey, tl)
  local rec = {}
  for v = 1, nviews do
    if views[v].kind ~= 'h' then
      rec[#rec + 1] = views[v].name .. '\t' .. tl.answer[v].id
    end
  end
  local record = fingerprint(e) .. '\0' .. table.concat(rec, '\n')
  call('SET', idkey, record, 'PX', dedupe)
  id_rec[idkey] = record
end

-- place puts a member new to the open round into the first cohort of its
-- tier with a free seat (seats, once taken, stay taken: cohorts fill one
-- after another). Its tier: the lowest for a member without a record,
-- else its last round's tier moved by that cohort's outcome (decided
-- before the batch ran: see the -4 reply), or, once the cohort is
-- recorded (cohort 0), the tier the record says it earned.
local placed = {}
local function place(member, e)
  local rec, per = lm_rec[member], league.cur
  lm_rec[member] = false
  local level = 1
  if rec then
    local r, lv, c = string.match(rec, '^([^\t]*)\t(%d+)\t(%d+)$')
    if r == per.id then return end
    level = math.min(tonumber(lv) or 1, league.ntiers)
    local rp = league.by_id[r]
    if rp and c and c ~= '0' and rp.e <= now then
      level = level + tonumber(call('HGET', rp.fkey, 'o:' .. member) or '0')
      level = math.max(1, math.min(level, league.ntiers))
    end
  end
  local seats = call('HINCRBY', per.fkey, 'c:' .. level, 1)
  local c = math.floor((seats - 1) / league.size) + 1
  call('ZADD', per.mkey, fmt(cohort_index(level, c)), member)
  call('HINCRBY', per.fkey, 'n:' .. level .. ':' .. c, 1)
  local rec = per.id .. '\t' .. level .. '\t' .. c
  if league.lm_exp then
    call('SET', ev_lmkey[e], rec, 'PXAT', fmt(math.max(per.exp, league.lm_exp)))
  else
    call('SET', ev_lmkey[e], rec)
  end
  if seats == 1 then call('ZADD', league.rkey, fmt(per.e), per.id) end
  placed[per] = true
end

-- apply_event applies event e to all of its targets or to none, and
-- returns its reply, or nil when it appended it to flat.
local function apply_event(e)
  local member, value, tl = ev_member[e], ev_value[e], ev_targets[e]
  local et = tl.t
  local idkey = ev_idkey[e]
  -- The id is looked up before the event's own checks: a retry of an
  -- applied event is a duplicate even once its at has left the lateness
  -- window, so retrying with the same id is always safe.
  if idkey then
    local record = id_rec[idkey]
    if record then return replay(e, record, et) end
  end
  if tl.err then
    return {0, 'invalid_argument', tl.err, et}
  end
  if #tl.segs > 0 and segment_full(tl.segs) then
    return {0, 'invalid_argument', segment_full(tl.segs), et}
  end
  -- Compute every target's new code first; write only if all are in range.
  local pure_after, latest, old_rec, old_pure
  if sm_key then pure_after, latest, old_rec, old_pure = purity(member, tl) end
  -- Mirrored: the list is light and the member is pure in every name it
  -- carries, so plan and write_plan go through the board's targets only
  -- and write each one's code to its segment boards too; else a light
  -- list gives way to its full list.
  local mirrored = false
  if tl.srows then
    mirrored = pure_after == tl.carried
    if not mirrored then
      mirrored = true
      for _, sb in ipairs(tl.segs) do
        if not pure_after[sb.name] then mirrored = false end
      end
    end
    if not mirrored then
      local full = tl.full
      if not full then
        full = seg_list(tl)
        tl.full = full
      end
      tl = full
    end
  end
  if not mirrored and any_mirrored and mirror_log[member] then unmirror(member) end
  local refused, id_new
  if plain_ok and (tl.plain or tl.plain_lg or (mirrored and tl.base.plain)) then
    local seat
    refused, id_new, seat = apply_plain(member, value, et, tl, mirrored)
    if refused then return refused end
    -- As below: a member new to the open round takes a seat.
    if seat and lm_rec[member] ~= nil then place(member, e) end
  else
    refused, id_new = plan(member, value, et, tl, pure_after)
    if not refused and value ~= 0 and tl.checks[1] then
      refused = check_windows(member, value, et, tl, pure_after)
    end
    if refused then return refused end
    write_plan(member, et, tl, mirrored)
    local lg = tl.lg
    if lg and plan_present[lg] and not plan_old[lg] and lm_rec[member] ~= nil then place(member, e) end
    answer(member, et, tl)
  end
  index_names(e, id_new)
  if sm_key then record_segments(member, tl, latest, pure_after, old_rec, old_pure) end
  if idkey then remember_id(e, idkey, tl) end
  return nil
end

-- A run of plain events (see apply_run) goes view by view from
-- run_min events on: below that, run_safe's extra pass over the run
-- costs more than the run saves.
local run_min = 4

-- run_safe tells whether no event of a run (events e0..e1 of plain list
-- tl, with consts c) can be refused: apply_plain refuses an event in
-- every view when one view's score, changed or kept, would lie outside
-- [vmin, vmax], so apply_run takes runs that cannot be refused only. In a
-- view, a best or latest score is one of the run's members held or the
-- event's value; an increment's score lies between the lowest and
-- highest score the run's members held before it (0 for one absent),
-- moved by all the run's falls and rises. Codes order scores, so the
-- view's lowest and highest codes among those members give them.
local function run_safe(tl, c, e0, e1)
  local up, down = 0, 0
  for e = e0, e1 do
    local v = ev_value[e]
    if incr then
      if v > 0 then up = up + v else down = down + v end
    elseif v < vmin or v > vmax then
      return false
    end
  end
  if down < vmin or up > vmax then return false end
  local cs, members, period_of = c.codes, ev_member, tl.period_of
  for k = 1, tl.n do
    local pc = cs[k]
    local lo, hi = false, false
    for e = e0, e1 do
      local member = members[e]
      local old = pc[member]
      if old == nil then old = code_of(period_of[k], member) end
      if old then
        if not lo or old < lo then lo = old end
        if not hi or old > hi then hi = old end
      end
    end
    if lo then
      local span, base, sspan = c.span[k], c.base[k], c.sspan[k]
      local r = lo % span
      if r < 0 then r = r + span elseif r >= span then r = r - span end
      local a = base + (lo - r) / sspan
      r = hi % span
      if r < 0 then r = r + span elseif r >= span then r = r - span end
      local b = base + (hi - r) / sspan
      -- A desc board's lowest code is its highest score. (Not a swap by
      -- multiple assignment: see TestScriptsAssignPortably.)
      local low, high = a, b
      if desc then
        low = b
        high = a
      end
      if low + down < vmin or high + up > vmax then return false end
    end
  end
  return true
end

-- apply_run applies a run of plain events (e0..e1, all of list tl, none
-- carrying an id, ranks not answered) view by view, as apply_plain would
-- event by event: each view's constants are read once, and each view's
-- key takes the run's writes, rank reads and overtakes in event order,
-- which is all one key sees (keys are apart). The replies and index
-- entries are those of apply_plain. It returns false, having done
-- nothing, when run_safe does not hold.
local run_fresh = {}
local function apply_run(tl, e0, e1)
  local c = tl.consts or plain_consts(tl)
  if not run_safe(tl, c, e0, e1) then return false end
  local n, period_of, et = tl.n, tl.period_of, tl.t
  local pl = tl.pl or answer_pl(tl)
  local res, members, values, fresh_ev = flat, ev_member, ev_value, run_fresh
  local pending, top, incr = pending, top, incr
  local cs, spans, sspans, bases, units, tracks, freshs = c.codes, c.span, c.sspan, c.base, c.unit, c.track, c.fresh
  local m0 = row_start(et, pl) -- as apply_plain: event e0's values start after m0
  local stride = n + 1 -- a later event's row: its length, then its values
  for k = 1, n do
    local pc = cs[k]
    local per = period_of[k]
    local span = spans[k]
    local sspan = sspans[k]
    local base = bases[k]
    local unit = units[k]
    local track = tracks[k]
    local fresh = freshs[k]
    local p = pending[per]
    local np = 0
    if p then np = p.n end
    local m = m0 + k
    for e = e0, e1 do
      local member = members[e]
      local value = values[e]
      local old = pc[member]
      if old == nil then old = code_of(per, member) end
      -- apply_plain's step, without range checks (run_safe), written out
      -- as it is there: a call per event and view would cost more than
      -- the step; TestPlainPathMatchesGeneric holds both to the plan.
      local nv, nt, change
      if old then
        local r = old % span
        if r < 0 then r = r + span elseif r >= span then r = r - span end
        nv = base + (old - r) / sspan
        nt = r
        change = false
        if incr then
          if value ~= 0 then
            nv = nv + value
            change = true
            if unit > r then nt = unit end
          end
        elseif best then
          if better(value, nv) or (value == nv and unit < r and ties ~= 'shared') then
            nv = value
            nt = unit
            change = true
          end
        elseif et >= (per.base + r) * views[k].unit then -- latest
          nv = value
          nt = unit
          change = true
        end
      else
        if fresh then fresh_ev[e] = true end
        nt = unit
        if incr and value == 0 then
          nv = 0
          change = false
        else
          nv = value
          change = true
        end
      end
      if change then
        local code = (nv - base) * sspan + nt
        pc[member] = code
        if not p then
          p = {false, false, false, false, n = 0}
          pending[per] = p
          pending_list[#pending_list + 1] = per
        end
        p[np + 1] = sfmt('%d', code)
        p[np + 2] = member
        np = np + 2
        if track then
          -- apply_plain's bound and rank queue, the rank read right after
          -- the write.
          local t = top[per]
          if old and code < old then
            if not (t and code > t) then
              if t == false then top[per] = nil end
              p.n = np
              t = top[per]
              if t == nil then t = top_code(per) end
              if not t or code <= t then
                local rank = rank_of(per, member, code)
                if rank <= moves_top then overtake(views[k], per, member, code, old, rank, et) end
              end
              np = p.n
            end
          elseif t ~= nil and not (t and (code <= t or not old or old > t)) then
            top[per] = nil
          end
        end
      end
      res[m] = nv
      m = m + stride
    end
    if p then p.n = np end
  end
  row_end(et, pl, m0 + n)
  local f = m0 + n
  for _ = e0 + 1, e1 do
    flat[f + 1] = -n
    f = f + stride
  end
  nflat = f
  for e = e0, e1 do
    local id_new = fresh_ev[e]
    if id_new then fresh_ev[e] = nil end
    if id_new or ev_name[e] then index_names(e, id_new or false) end
  end
  return true
end

-- An event of a plain list on a board without segments, carrying no id
-- (most events), goes straight to apply_plain: apply_event's other
-- steps do nothing for it; a run of them with ranks not answered goes to
-- apply_run.
local plain_only = plain_ok and not sm_key
local function add_row(row)
  local f, n = nflat, #row
  flat[f + 1] = n
  for j = 1, n do flat[f + 1 + j] = row[j] end
  nflat = f + 1 + n
end
local function plain_one(e)
  local tl = ev_targets[e]
  local refused, id_new = apply_plain(ev_member[e], ev_value[e], tl.t, tl, false)
  -- index_names has nothing to do without a new id or a name.
  if refused then add_row(refused) elseif id_new or ev_name[e] then index_names(e, id_new) end
end
do
  local e = 1
  while e <= nevents do
    local tl = ev_targets[e]
    local last = e
    if plain_only and tl.plain and not ev_idkey[e] then
      if not ranks then
        while last < nevents and ev_targets[last + 1] == tl and not ev_idkey[last + 1] do last = last + 1 end
      end
      if last - e + 1 < run_min or not apply_run(tl, e, last) then
        for x = e, last do plain_one(x) end
      end
    else
      local row = apply_event(e)
      if row then add_row(row) end
    end
    e = last + 1
  end
end

-- finish sends what the batch queued, and once per batch the expiry and
-- registry entries of the period keys written (the registry serves member
-- removal) and one change message naming every changed answered period.
local function finish()
  -- flush(per) for each, written out: a batch with segment values has a
  -- few keys per event.
  for x = 1, #pending_list do
    local per = pending_list[x]
    local p = pending[per]
    local np = p.n
    if np > 0 then
      p.n = 0
      call('ZADD', per.zkey, unpack(p, 1, np))
    end
  end
  if #name_pending > 0 then call('ZADD', name_index, unpack(name_pending)) end
  if #sm_out > 0 then call('HSET', sm_key, unpack(sm_out)) end

  for per in pairs(placed) do
    call('PEXPIREAT', per.mkey, fmt(per.exp))
    call('PEXPIREAT', per.fkey, fmt(per.exp))
  end

  for view, mv in pairs(moves) do
    call('LPUSH', view.mvkey, unpack(mv))
    call('LTRIM', view.mvkey, '0', top_at)
  end

  if #pending_list > 0 then
    -- Entries of expired periods go as writes come, so the registry stays
    -- as small as the retained data without waiting for a removal.
    call('ZREMRANGEBYSCORE', reg, '-inf', '(' .. sfmt('%d', now))
    local changed, entries = {}, {}
    for _, per in ipairs(pending_list) do
      if per.seg and not per.created then
        -- A segment board's period key gets its expiry and registry entry
        -- once, when it is created (the exact-time hash is the board's),
        -- instead of on every batch: segment boards are many, and the
        -- entry and expiry stay as long as the key.
      elseif per.exp > 0 then
        local exp = sfmt('%d', per.exp)
        call('PEXPIREAT', per.zkey, exp)
        if exact then call('PEXPIREAT', per.xkey, exp) end
        entries[#entries + 1] = exp
        entries[#entries + 1] = per.suffix
      else
        entries[#entries + 1] = 'inf'
        entries[#entries + 1] = per.suffix
      end
      if per.seg or string.sub(per.suffix, 1, 1) ~= '~' then
        changed[#changed + 1] = per.suffix
      end
    end
    -- One ZADD for the batch's registry entries.
    if #entries > 0 then call('ZADD', reg, unpack(entries)) end
    publish(channel, board, changed)
  end
end

finish()
return {1, now, period_ids, flat}
end -- writes
return writes()
end -- events
return events()
