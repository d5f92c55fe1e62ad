// Standings: progressive enhancement. Every page works without this file;
// with it, live pages follow the websocket feed and keyboard users get "/".
// The ids and data- attributes it reads are defined in views/ids.go
// (views/ids_test.go checks that every one it names is); data-testid
// attributes are for tests and never read here.
(function () {
  "use strict";

  // "/" focuses the member search, as on most sites with a search box.
  document.addEventListener("keydown", function (e) {
    if (e.key !== "/" || e.ctrlKey || e.metaKey || e.altKey) return;
    var t = e.target;
    if (t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA" || t.isContentEditable)) return;
    var s = document.getElementById("member-search");
    if (s) { e.preventDefault(); s.focus(); }
  });

  // A live page's period ended (a frame of another period, or its
  // countdown ran out): say so to whoever listens, then reload unless one
  // of them takes over (see standings:rollover in docs/design.md).
  var rolledOver = false;
  function rollover(period) {
    if (rolledOver) return;
    rolledOver = true;
    var status = document.getElementById("live-status");
    var m = /^\/ws\/([^\/?]+)\/([^\/?]+)/.exec(status && status.dataset.ws || "");
    var ev = new CustomEvent("standings:rollover", { cancelable: true, detail: {
      period: period, board: m ? decodeURIComponent(m[1]) : "", view: m ? decodeURIComponent(m[2]) : "" } });
    if (document.dispatchEvent(ev)) location.reload();
  }

  // Classes that scripts add to live elements, which frames keep.
  var clientClasses = ["scored", "changed", "me", "friend"];

  // morph makes element a look like b (attributes, then children by
  // position), keeping every node that stays the same: a focused link, a
  // text selection and the script's own badges (standingsKeep) survive.
  function morph(a, b) {
    if (a.nodeType !== 1) {
      if (a.nodeValue !== b.nodeValue) a.nodeValue = b.nodeValue;
      return;
    }
    morphAttrs(a, b);
    var ac = Array.prototype.filter.call(a.childNodes, function (c) { return !c.standingsKeep; });
    var kept = Array.prototype.filter.call(a.childNodes, function (c) { return c.standingsKeep; })[0] || null;
    morphChildren(a, ac, Array.prototype.slice.call(b.childNodes), kept);
  }

  // morphChildren morphs the children ac of element a into bc, by
  // position; children bc has more of go before the node before.
  function morphChildren(a, ac, bc, before) {
    for (var i = 0; i < bc.length; i++) {
      var x = ac[i], y = bc[i];
      if (x && x.nodeType === y.nodeType && x.nodeName === y.nodeName) morph(x, y);
      else if (x) a.replaceChild(y, x);
      else a.insertBefore(y, before);
    }
    for (; i < ac.length; i++) a.removeChild(ac[i]);
  }

  // morphAround makes element a look like b but for its child keep, which
  // stands for b's child keepB and is left to the caller: the children
  // before it and after it are morphed on each side.
  function morphAround(a, b, keep, keepB) {
    morphAttrs(a, b);
    var ac = Array.prototype.slice.call(a.childNodes), bc = Array.prototype.slice.call(b.childNodes);
    var ai = ac.indexOf(keep), bi = bc.indexOf(keepB);
    morphChildren(a, ac.slice(0, ai), bc.slice(0, bi), keep);
    morphChildren(a, ac.slice(ai + 1), bc.slice(bi + 1), null);
  }

  // morphAttrs gives element a the attributes of b, keeping the classes
  // scripts add.
  function morphAttrs(a, b) {
    var i, n;
    // An opened <details> ("12 more moves") is the reader's choice: a
    // frame never closes it.
    var keepOpen = a.nodeName === "DETAILS";
    for (i = a.attributes.length - 1; i >= 0; i--) {
      n = a.attributes[i].name;
      if (n !== "class" && !(keepOpen && n === "open") && !b.hasAttribute(n)) a.removeAttribute(n);
    }
    for (i = 0; i < b.attributes.length; i++) {
      n = b.attributes[i];
      if (n.name !== "class" && a.getAttribute(n.name) !== n.value) a.setAttribute(n.name, n.value);
    }
    // Classes the script adds (a flash, "me" and friends) stay.
    var cls = (b.getAttribute("class") || "").split(/\s+/).filter(Boolean);
    clientClasses.forEach(function (c) { if (a.classList.contains(c) && cls.indexOf(c) < 0) cls.push(c); });
    if ((a.getAttribute("class") || "") !== cls.join(" ")) {
      if (cls.length || b.hasAttribute("class")) a.setAttribute("class", cls.join(" "));
      else a.removeAttribute("class");
    }
  }

  // longestRun returns, for a list of old positions (-1: new), which
  // entries keep their place: a longest increasing run of them, so that
  // the fewest rows move.
  function longestRun(seq) {
    var tails = [], prev = [], keep = [];
    seq.forEach(function (x, i) {
      keep.push(false);
      if (x < 0) return;
      var lo = 0, hi = tails.length;
      while (lo < hi) { var mid = (lo + hi) >> 1; if (seq[tails[mid]] < x) lo = mid + 1; else hi = mid; }
      prev[i] = lo > 0 ? tails[lo - 1] : -1;
      tails[lo] = i;
    });
    for (var k = tails.length ? tails[tails.length - 1] : -1; k >= 0; k = prev[k]) keep[k] = true;
    return keep;
  }

  // placeRows puts a table's rows in order, moving as few as it can; a
  // focused element in a row that moved gets its focus back, and a text
  // selection its range.
  function placeRows(tbody, order) {
    var active = document.activeElement;
    var sel = window.getSelection ? window.getSelection() : null;
    var saved = sel && sel.rangeCount && !sel.isCollapsed ? [sel.anchorNode, sel.anchorOffset, sel.focusNode, sel.focusOffset] : null;
    var at = new Map();
    Array.prototype.forEach.call(tbody.children, function (tr, i) { at.set(tr, i); });
    var want = new Set(order);
    Array.prototype.slice.call(tbody.children).forEach(function (tr) { if (!want.has(tr)) tr.remove(); });
    var keep = longestRun(order.map(function (tr) { return at.has(tr) ? at.get(tr) : -1; }));
    for (var i = order.length - 1, next = null; i >= 0; i--) {
      if (!keep[i]) tbody.insertBefore(order[i], next);
      next = order[i];
    }
    if (active && active !== document.activeElement && active.isConnected && active.focus) active.focus({ preventScroll: true });
    if (saved && saved[0].isConnected && saved[2].isConnected) {
      try { sel.setBaseAndExtent(saved[0], saved[1], saved[2], saved[3]); } catch (e) { /* the text changed under it */ }
    }
  }

  // flash marks a row whose score changed, for the animation's length
  // (with reduced motion, an outline as long).
  function flash(tr) {
    clearTimeout(tr.standingsFlash);
    if (tr.classList.contains("scored")) {
      tr.classList.remove("scored");
      void tr.offsetWidth; // restarts the animation
    }
    tr.classList.add("scored");
    tr.standingsFlash = setTimeout(function () { tr.classList.remove("scored"); }, 1600);
  }

  // badge shows a row's score change as the server said it (the board's
  // format, "−4.915 s"), green when better by the board's order, red when
  // worse. It lives 2.5 s from its last change, across frames.
  function badge(tr, text, better) {
    var cell = tr.querySelector("td.score");
    if (!cell) return;
    var b = tr.standingsBadge;
    if (!b || !b.isConnected) {
      b = document.createElement("span");
      b.standingsKeep = true;
      b.setAttribute("aria-hidden", "true");
      cell.appendChild(b);
      tr.standingsBadge = b;
    }
    b.className = "delta " + (better > 0 ? "up" : "down");
    b.textContent = text;
    b.standingsSince = performance.now();
    clearTimeout(b.standingsTimer);
    b.standingsTimer = setTimeout(function () { b.remove(); }, 2500);
  }

  function setRank(tr, rank) {
    var el = tr.querySelector("[data-live-rank]");
    if (el && el.textContent !== String(rank)) el.textContent = String(rank);
  }

  function rankOf(tr) {
    var el = tr.querySelector("[data-live-rank]");
    return el ? parseInt(el.textContent, 10) : 0;
  }

  function scoreText(tr) {
    var el = tr.querySelector("[data-live-score]");
    return el ? el.textContent : "";
  }

  // setMove replaces a row's rank change (▲2, new) with the server's
  // markup ("" for none); it follows the rank and a space.
  function setMove(tr, html) {
    var old = tr.querySelector("td.rank .move");
    var next = null;
    if (html) {
      var tpl = document.createElement("template");
      tpl.innerHTML = html;
      next = tpl.content.firstElementChild;
    }
    if (old && next) morph(old, next);
    else if (old) old.remove();
    else if (next) {
      var rank = tr.querySelector("[data-live-rank]");
      if (rank) rank.parentNode.insertBefore(next, rank.nextSibling ? rank.nextSibling.nextSibling : null);
    }
  }

  function parseRow(html) {
    var tpl = document.createElement("template");
    tpl.innerHTML = html;
    return tpl.content.querySelector("tr");
  }

  function still() {
    return window.matchMedia && window.matchMedia("(prefers-reduced-motion: reduce)").matches;
  }

  // Where each row is on screen, to slide moved rows from there (nothing
  // with reduced motion).
  function rowTops(tbody) {
    var tops = new Map();
    if (still()) return tops;
    Array.prototype.forEach.call(tbody.children, function (tr) { tops.set(tr, tr.getBoundingClientRect().top); });
    return tops;
  }

  // slide animates each row that moved from where it was. Every position
  // is read before any animation starts, so layout runs once, not once a
  // row.
  function slide(tbody, tops) {
    if (!tops.size) return;
    var moves = [];
    Array.prototype.forEach.call(tbody.children, function (tr) {
      if (!tops.has(tr) || !tr.animate) return;
      var dy = tops.get(tr) - tr.getBoundingClientRect().top;
      if (Math.abs(dy) >= 1) moves.push([tr, dy]);
    });
    moves.forEach(function (m) {
      m[0].animate([{ transform: "translateY(" + m[1] + "px)" }, { transform: "none" }], { duration: 450, easing: "ease-out" });
    });
  }

  // A block of a table (the ticker) sent whole when it changed.
  function setBlock(table, name, html) {
    var cur = table.querySelector('[data-live-block="' + name + '"]');
    var tpl = document.createElement("template");
    tpl.innerHTML = html;
    var next = tpl.content.firstElementChild;
    if (cur && next) morph(cur, next);
  }

  // applyWhole applies a whole fragment (the first frame, or the next one
  // after a frame was missed): a table's rows are patched by member, the
  // rest morphed; nothing is replaced.
  function applyWhole(html) {
    var tpl = document.createElement("template");
    tpl.innerHTML = html;
    var next = tpl.content.firstElementChild;
    if (!next || !next.id) return null;
    var cur = document.getElementById(next.id);
    if (!cur) return null;
    if (cur.dataset.period && next.dataset.period && cur.dataset.period !== next.dataset.period) {
      rollover(cur.dataset.period);
      return null;
    }
    // A live table's rows are its own table's; a card (with a table of
    // neighbours inside) is morphed whole.
    var ct = cur.querySelector(":scope > table > tbody"), nt = next.querySelector(":scope > table > tbody");
    if (!ct || !nt) {
      // A card's headline, or a table that emptied or filled.
      var nh = next.querySelector("dl.headline"), ch = cur.querySelector("dl.headline");
      var changed = nh && ch && nh.textContent !== ch.textContent;
      morph(cur, next);
      var head = cur.querySelector("dl.headline");
      if (changed && head) {
        head.classList.remove("changed");
        void head.offsetWidth; // restarts the animation
        head.classList.add("changed");
      }
      return cur;
    }
    var tops = rowTops(ct), by = {};
    Array.prototype.forEach.call(ct.children, function (tr) { by[tr.dataset.member] = tr; });
    var order = Array.prototype.map.call(nt.querySelectorAll("tr[data-member]"), function (ntr) {
      var tr = by[ntr.dataset.member];
      if (!tr) { flash(ntr); return ntr; }
      var was = scoreText(tr);
      morph(tr, ntr);
      if (scoreText(tr) !== was) flash(tr);
      return tr;
    });
    placeRows(ct, order);
    // Everything around the rows is morphed: the table's attributes (a
    // first page's podium comes and goes), caption and head, and the
    // fragment's other parts (the ticker, a league round's status).
    morphAround(ct.parentNode, nt.parentNode, ct, nt);
    morphAround(cur, next, ct.parentNode, nt.parentNode);
    slide(ct, tops);
    return cur;
  }

  // applyDiff applies a diff frame (its format: web/hub_diff.go); false
  // when it does not fit the table shown, which only a whole fragment
  // can then put right.
  function applyDiff(d) {
    var cur = document.getElementById(d.id);
    if (!cur) return null;
    if (cur.dataset.period !== d.period) {
      rollover(cur.dataset.period);
      return null;
    }
    var tbody = cur.querySelector(":scope > table > tbody");
    if (!tbody) return false;
    var old = Array.prototype.slice.call(tbody.children);
    var by = {}, at = {}, gone = {}, placed = {};
    old.forEach(function (tr, i) { by[tr.dataset.member] = tr; at[tr.dataset.member] = i; });
    // Rows only slide when some row changes place: reading where rows
    // are costs a layout, so a frame that only changes scores skips it.
    var moving = (d.gone && d.gone.length) || (d.rows || []).some(function (r) { return at[r.m] !== r.i; });
    var tops = moving ? rowTops(tbody) : new Map();
    (d.gone || []).forEach(function (m) { gone[m] = true; });
    (d.rows || []).forEach(function (r) { placed[r.m] = true; });
    var rest = old.filter(function (tr) { return !gone[tr.dataset.member] && !placed[tr.dataset.member]; });
    var order = new Array(d.n);
    var ok = (d.rows || []).every(function (r) {
      var tr = by[r.m];
      if (r.h) {
        var ntr = parseRow(r.h);
        if (!ntr) return false;
        if (tr) morph(tr, ntr);
        else tr = ntr;
        if (r.d) { flash(tr); badge(tr, r.d, r.b); } else if (!by[r.m]) flash(tr);
      } else {
        if (!tr) return false;
        setRank(tr, r.r);
        if (r.mv !== undefined) setMove(tr, r.mv);
      }
      if (r.i < 0 || r.i >= d.n || order[r.i]) return false;
      order[r.i] = tr;
      return true;
    });
    var deltas = [];
    (d.ranks || []).forEach(function (run) { for (var j = 0; j < run[0]; j++) deltas.push(run[1]); });
    if (d.ranks && deltas.length !== rest.length) ok = false;
    for (var i = 0, k = 0; ok && i < d.n; i++) {
      if (order[i]) continue;
      if (k >= rest.length) { ok = false; break; }
      if (deltas[k]) setRank(rest[k], rankOf(rest[k]) + deltas[k]);
      order[i] = rest[k++];
    }
    if (!ok || k !== rest.length) return false;
    placeRows(tbody, order);
    if (d.ticker) setBlock(cur, "ticker", d.ticker);
    var cap = cur.querySelector("caption");
    if (d.caption && cap) cap.textContent = d.caption;
    slide(tbody, tops);
    return cur;
  }

  // Live feed: the first frame is a whole fragment (a table or a card
  // headline) whose id names the element it stands for; a table's later
  // frames are diffs. Both patch the page in place, then say so with a
  // standings:frame event.
  function live(status) {
    var url = (location.protocol === "https:" ? "wss://" : "ws://") + location.host + status.dataset.ws;
    var tries = 0, updated = 0, ws = null;

    function setState(state, text) {
      status.dataset.state = state;
      status.textContent = text;
    }

    // "Live · updated 4 s ago": the time since the last frame, ticking.
    function freshness() {
      if (status.dataset.state !== "live" || !updated) return;
      var s = Math.floor((Date.now() - updated) / 1000);
      var ago = s < 2 ? "just now" : s < 60 ? s + " s ago" : Math.floor(s / 60) + " min ago";
      status.textContent = "Live · updated " + ago;
    }
    setInterval(freshness, 1000);

    function onFrame(data) {
      if (rolledOver || typeof data !== "string") return;
      var el;
      if (data.charAt(0) === "{") {
        var d;
        try { d = JSON.parse(data); } catch (e) { return; }
        try { el = applyDiff(d); } catch (e) { el = false; }
        if (el === false) {
          // The page and the feed disagree: a new connection starts
          // with the whole table.
          ws.close(4000, "resync");
          return;
        }
      } else {
        el = applyWhole(data);
      }
      if (!el) return;
      updated = Date.now();
      freshness();
      document.dispatchEvent(new CustomEvent("standings:frame", { detail: { el: el } }));
    }

    function connect() {
      setState("connecting", tries ? "Reconnecting…" : "Connecting…");
      try { ws = new WebSocket(url); } catch (e) { retry(); return; }
      ws.onopen = function () { tries = 0; updated = 0; setState("live", "Live"); };
      ws.onmessage = function (ev) { onFrame(ev.data); };
      ws.onclose = function (ev) {
        // 1013 "too slow": come back at once; 1012: the server restarts.
        // 1013 for any other reason: a live connection limit (too many
        // from this address, or the server is full). Retrying soon would
        // only be refused again, so back off for long; the page itself
        // stays usable meanwhile.
        var limited = ev.code === 1013 && ev.reason.indexOf("too slow") !== 0;
        setState("reconnecting", limited ? "Live updates paused (server busy)" : "Reconnecting…");
        retry(ev.code === 4000 ? 1013 : ev.code, limited);
      };
    }

    function retry(code, limited) {
      tries++;
      var base;
      if (limited) base = Math.min(300000, 30000 * Math.pow(2, Math.min(tries - 1, 4)));
      else if (code === 1013) base = 250;
      else base = Math.min(10000, 500 * Math.pow(2, Math.min(tries, 5)));
      setTimeout(connect, base / 2 + Math.random() * base / 2);
    }

    connect();
  }

  // A score from the JSON API as the board shows it: a time for
  // format: duration (194.727 -> 3:14.727), else the number and unit.
  function shownScore(raw, format, unit) {
    var text = String(raw);
    if (format !== "duration") return unit ? text + " " + unit : text;
    var neg = text.charAt(0) === "-";
    if (neg) text = text.slice(1);
    var parts = text.split("."), secs = Number(parts[0]), frac = parts[1] ? "." + parts[1] : "";
    var h = Math.floor(secs / 3600), m = Math.floor(secs % 3600 / 60), sec = secs % 60;
    var pad = function (n) { return (n < 10 ? "0" : "") + n; };
    return (neg ? "-" : "") + (h > 0 ? h + ":" + pad(m) : String(m)) + ":" + pad(sec) + frac;
  }

  // When a live board's period ends, announce its winners in place of
  // a silent reload: the podium read from the JSON API, "Won by …" (or
  // who led when it closed, while late scores may arrive), the recap,
  // and a way on to the new period, taken by itself after a while.
  function announceRollover(box) {
    document.addEventListener("standings:rollover", function (e) {
      if (!e.detail || !e.detail.period || !window.fetch) return;
      e.preventDefault();
      var period = e.detail.period, d = box.dataset, late = d.rolloverLate === "true";
      var q = "period=" + encodeURIComponent(period);
      var wait = 30, timer = 0;
      function el(tag, cls, text) {
        var n = document.createElement(tag);
        if (cls) n.className = cls;
        if (text) n.textContent = text;
        return n;
      }
      function show(entries) {
        var h = el("h2", "", "The " + d.rolloverNoun + " has ended");
        var parts = [h];
        if (entries.length) {
          var top = entries[0], name = top.name || top.member;
          parts.push(el("p", "rollover-winner", (late ? "Leading when the " + d.rolloverNoun + " closed: " : "Won by ") +
            name + " with " + shownScore(top.score, d.scoreFormat, d.scoreUnit)));
          var ol = el("ol", "podium");
          entries.slice(0, 3).forEach(function (x) {
            var li = el("li", "place-" + Math.min(x.rank, 4));
            li.value = x.rank;
            li.appendChild(el("span", "rank", String(x.rank)));
            li.appendChild(el("span", "", x.name || x.member));
            li.appendChild(el("span", "score", shownScore(x.score, d.scoreFormat, d.scoreUnit)));
            ol.appendChild(li);
          });
          parts.push(ol);
          if (late) parts.push(el("p", "muted", "Late scores may still change it; the results become final later."));
        } else {
          parts.push(el("p", "", "Nobody scored."));
        }
        var links = el("p", "rollover-links");
        var on = el("a", "btn primary", "Go to the new " + d.rolloverNoun);
        on.href = d.rolloverNext;
        links.appendChild(on);
        if (entries.length) {
          var recap = el("a", "btn", "See the recap");
          recap.href = d.rolloverRecap + "?" + q;
          links.appendChild(recap);
        }
        var stay = el("button", "btn", "Stay here");
        stay.type = "button";
        links.appendChild(stay);
        var note = el("p", "muted rollover-auto");
        parts.push(links, note);
        box.replaceChildren.apply(box, parts);
        box.hidden = false;
        function tick() {
          if (wait <= 0) { location.href = d.rolloverNext; return; }
          note.textContent = "Moving on to the new " + d.rolloverNoun + " in " + wait + " s.";
          wait--;
        }
        tick();
        timer = setInterval(tick, 1000);
        stay.addEventListener("click", function () {
          clearInterval(timer);
          note.textContent = "Staying on the " + d.rolloverNoun + " that ended.";
          stay.remove();
        });
      }
      fetch(d.rolloverApi + "?" + q + "&limit=3", { headers: { Accept: "application/json" } })
        .then(function (r) { return r.ok ? r.json() : { entries: [] }; })
        .then(function (body) { show(body.entries || []); })
        .catch(function () { location.reload(); });
    });
  }

  // Countdowns: "Ends in 2d 4h 12m", the same text the server renders
  // (web/board_page.go countdownText). The page carries Redis's clock at
  // the read, so a browser with a wrong clock still counts right.
  function countdownText(ms) {
    var secs = Math.floor(ms / 1000);
    if (secs <= 0) return "Ended";
    var d = Math.floor(secs / 86400), h = Math.floor(secs % 86400 / 3600),
      m = Math.floor(secs % 3600 / 60), s = secs % 60;
    if (d > 0) return "Ends in " + d + "d " + h + "h " + m + "m";
    if (h > 0) return "Ends in " + h + "h " + m + "m " + s + "s";
    return "Ends in " + m + "m " + s + "s";
  }

  function countdowns() {
    var els = document.querySelectorAll("[data-countdown-end]");
    if (!els.length) return;
    var items = [];
    els.forEach(function (el) {
      var end = Number(el.dataset.countdownEnd), now = Number(el.dataset.countdownNow);
      if (!isFinite(end) || !isFinite(now)) return;
      items.push({ el: el, end: end, skew: now - Date.now(), running: end > now });
    });
    var reloading = false;
    function tick() {
      items.forEach(function (it) {
        var left = it.end - (Date.now() + it.skew);
        var text = countdownText(left);
        if (it.el.textContent !== text) it.el.textContent = text;
        // A period that ran out while the page was open: show the next
        // one. Only then, so that a page that loads already ended (a
        // clock behind) never reloads in a loop.
        if (left <= 0 && it.running && !reloading) {
          reloading = true;
          var shown = document.querySelector("[data-period]");
          setTimeout(function () { rollover(shown ? shown.dataset.period : ""); }, 1500 + Math.random() * 1500);
        }
      });
    }
    tick();
    setInterval(tick, 1000);
  }

  // The member search suggests names as you type, from the name search
  // API; without JavaScript the form still takes an id or a name. A
  // suggestion puts the member's name in the field and its id in a hidden
  // "id" field, so that a name that is also the start of others still
  // opens the card of the member picked; a name several members share
  // sends no id, and the answer lists them with their ranks.
  function suggest(input) {
    var list = document.getElementById(input.getAttribute("list"));
    if (!list || !window.fetch || !input.form) return;
    var timer = 0, seq = 0, byName = Object.create(null);
    var id = document.createElement("input");
    id.type = "hidden";
    id.name = "id";
    input.form.appendChild(id);
    function pick() {
      var m = byName[input.value];
      id.value = m || "";
    }
    input.addEventListener("input", function () {
      pick();
      clearTimeout(timer);
      var q = input.value.trim();
      if (q === "" || q.length > 64) { list.replaceChildren(); return; }
      timer = setTimeout(function () {
        var mine = ++seq;
        fetch(input.dataset.suggest + "?q=" + encodeURIComponent(q), { headers: { Accept: "application/json" } })
          .then(function (r) { return r.ok ? r.json() : { members: [] }; })
          .then(function (body) {
            if (mine !== seq) return; // a newer keystroke answered first
            byName = Object.create(null);
            var opts = (body.members || []).map(function (m) {
              var name = m.name || m.member;
              byName[name] = name in byName ? null : m.member;
              var o = document.createElement("option");
              o.value = name;
              if (m.name && m.name !== m.member) o.label = m.member;
              return o;
            });
            list.replaceChildren.apply(list, opts);
            pick();
          })
          .catch(function () {});
      }, 150);
    });
  }

  // The segment picker shows its choice at once; without JavaScript its
  // button does. A picker with many values is a text field whose
  // suggestions (NAME:VALUE) are read once, when it is first focused.
  function segmentPicker(form) {
    var select = form.querySelector("select");
    if (select) {
      select.addEventListener("change", function () { form.submit(); });
      var show = form.querySelector("button[data-submit]");
      if (show) show.hidden = true;
      return;
    }
    var input = form.querySelector("input[data-segment-values]");
    var list = input && document.getElementById(input.getAttribute("list"));
    if (!list || !window.fetch) return;
    input.addEventListener("focus", function () {
      var urls = input.dataset.segmentValues.split(" ");
      input.removeAttribute("data-segment-values");
      Promise.all(urls.map(function (u) {
        return fetch(u, { headers: { Accept: "application/json" } })
          .then(function (r) { return r.ok ? r.json() : { values: [] }; });
      })).then(function (bodies) {
        var frag = document.createDocumentFragment();
        bodies.forEach(function (b) {
          (b.values || []).forEach(function (v) {
            var o = document.createElement("option");
            o.value = b.segment + ":" + v;
            frag.appendChild(o);
          });
        });
        list.replaceChildren(frag);
      }).catch(function () {});
    }, { once: true });
    input.addEventListener("change", function () { if (input.value.indexOf(":") > 0) form.submit(); });
  }

  // The index follows its boards: every few seconds it reads itself again
  // (current leaders come from a shared read per tick, so this is cheap)
  // and swaps in each board's leaders and winners when they changed.
  function liveIndex(list) {
    if (!window.fetch || !window.DOMParser) return;
    setInterval(function () {
      if (document.hidden) return;
      fetch(location.pathname, { headers: { Accept: "text/html" } })
        .then(function (r) { return r.ok ? r.text() : null; })
        .then(function (html) {
          if (!html) return;
          var doc = new DOMParser().parseFromString(html, "text/html");
          doc.querySelectorAll("[data-board]").forEach(function (card) {
            var cur = list.querySelector('[data-board="' + card.dataset.board + '"]');
            if (!cur) return;
            var next = card.querySelectorAll(".leaders-block"), old = cur.querySelectorAll(".leaders-block");
            if (next.length !== old.length) return;
            old.forEach(function (el, i) {
              if (el.innerHTML !== next[i].innerHTML) el.replaceWith(document.importNode(next[i], true));
            });
          });
        })
        .catch(function () {});
    }, 5000);
  }

  // Copy buttons (the embed builder's snippet); shown only with a
  // clipboard to copy to.
  function copyButtons() {
    if (!navigator.clipboard) return;
    document.querySelectorAll("button[data-copy]").forEach(function (b) {
      var src = document.getElementById(b.dataset.copy);
      if (!src) return;
      b.hidden = false;
      b.addEventListener("click", function () {
        navigator.clipboard.writeText(src.textContent).then(function () {
          b.textContent = "Copied";
          setTimeout(function () { b.textContent = "Copy"; }, 1500);
        }).catch(function () {});
      });
    });
  }

  // On a narrow screen the view tabs scroll sideways: the current one is
  // brought into sight (the tab strip scrolls, not the page).
  function currentTab(nav) {
    var ul = nav.querySelector("ul"), cur = nav.querySelector("a[aria-current]");
    if (!ul || !cur) return;
    var u = ul.getBoundingClientRect(), c = cur.parentElement.getBoundingClientRect();
    if (c.left >= u.left && c.right <= u.right) return;
    ul.scrollLeft += c.left - u.left - (u.width - c.width) / 2;
  }

  // A widget's highlighted member (?me=) stays marked whatever live
  // frames do to its rows: rows are re-marked whenever rows change.
  function widgetMe(me) {
    function mark() {
      document.querySelectorAll("tr[data-member]").forEach(function (tr) {
        var self = tr.dataset.member === me;
        if (tr.classList.contains("self") !== self) tr.classList.toggle("self", self);
      });
    }
    mark();
    document.addEventListener("standings:frame", mark);
    if (window.MutationObserver) new MutationObserver(mark).observe(document.body, { childList: true, subtree: true });
  }

  // The embed builder follows its controls: a change reads the builder
  // again with the form's values and takes its snippet, preview and fit
  // note; choosing another view opens that view's builder. Without
  // JavaScript the Update button does the same.
  function widgetBuilder(form) {
    if (!window.fetch || !window.DOMParser || !window.URLSearchParams) return;
    var update = form.querySelector("button[data-submit]");
    if (update) update.hidden = true;
    var timer = 0, seq = 0;
    function query() { return new URLSearchParams(new FormData(form)).toString(); }
    function refresh() {
      if (!form.checkValidity()) return; // wait for a value the server takes
      var url = form.action + "?" + query(), mine = ++seq;
      fetch(url, { headers: { Accept: "text/html" } })
        .then(function (r) { return r.ok ? r.text() : null; })
        .then(function (html) {
          if (!html || mine !== seq) return;
          var doc = new DOMParser().parseFromString(html, "text/html");
          ["widget-snippet", "widget-fit"].forEach(function (id) {
            var from = doc.getElementById(id), to = document.getElementById(id);
            if (from && to && to.textContent !== from.textContent) to.textContent = from.textContent;
          });
          var next = doc.getElementById("widget-preview-frame"), frame = document.getElementById("widget-preview-frame");
          if (next && frame) {
            ["width", "height"].forEach(function (a) { frame.setAttribute(a, next.getAttribute(a)); });
            if (frame.getAttribute("src") !== next.getAttribute("src")) frame.setAttribute("src", next.getAttribute("src"));
          }
          history.replaceState(null, "", url);
        })
        .catch(function () {});
    }
    function later() { clearTimeout(timer); timer = setTimeout(refresh, 300); }
    form.addEventListener("input", later);
    form.addEventListener("change", function (e) {
      if (e.target.name === "view") { form.submit(); return; }
      later();
    });
  }

  // Me and friends, with no account: kept in this browser only, one
  // localStorage entry a board, {"me": ID, "friends": [ID, ...]}. A stored
  // value of any other shape, or too big, is ignored, never trusted.
  var FRIENDS_MAX = 100, ID_MAX = 128, STORED_MAX = 16384, LIST_MAX = 100;

  // The board a page belongs to, from its path (/boards/B/… or /embed/B/…).
  function pageBoard() {
    var m = /^\/(?:boards|embed)\/([^\/]+)/.exec(location.pathname);
    if (!m) return "";
    try { return decodeURIComponent(m[1]); } catch (e) { return ""; }
  }

  function peopleKey(board) { return "standings.people." + board; }

  function readPeople(board) {
    var none = { me: "", friends: [] }, raw, v;
    try { raw = window.localStorage.getItem(peopleKey(board)); } catch (e) { return none; }
    if (!raw || raw.length > STORED_MAX) return none;
    try { v = JSON.parse(raw); } catch (e) { return none; }
    var isID = function (x) { return typeof x === "string" && x.length > 0 && x.length <= ID_MAX; };
    if (!v || typeof v !== "object" || (v.me !== "" && !isID(v.me))) return none;
    if (!Array.isArray(v.friends) || v.friends.length > FRIENDS_MAX || !v.friends.every(isID)) return none;
    return { me: v.me, friends: v.friends.filter(function (f, i, all) { return f !== v.me && all.indexOf(f) === i; }) };
  }

  function writePeople(board, p) {
    try {
      window.localStorage.setItem(peopleKey(board), JSON.stringify({ me: p.me, friends: p.friends }));
      return true;
    } catch (e) { return false; }
  }

  // Marks my row and my friends' rows in every standings table under
  // root (board, neighbours, compare, widget), with a word as well as a
  // colour; run again after every live frame.
  function highlightPeople(root, p) {
    var friends = {};
    p.friends.forEach(function (f) { friends[f] = true; });
    root.querySelectorAll("tr[data-member]").forEach(function (tr) {
      var m = tr.dataset.member, me = m === p.me, friend = !me && friends[m] === true;
      tr.classList.toggle("me", me);
      tr.classList.toggle("friend", friend);
      var who = tr.querySelector(".who");
      if (!who) return;
      var tag = who.querySelector(".tag"), word = me ? "You" : friend ? "Friend" : "";
      if (!word) { if (tag) tag.remove(); return; }
      if (!tag) {
        tag = document.createElement("span");
        tag.className = "tag";
        who.appendChild(tag);
      }
      if (tag.textContent !== word) tag.textContent = word;
    });
  }

  // Overtakes about me or my friends are shown even when the ticker
  // collapses the rest; "12 more moves", once opened, stays open across
  // live frames.
  var tickerOpen = false;
  document.addEventListener("toggle", function (e) {
    if (e.target.matches && e.target.matches("[data-ticker] details")) tickerOpen = e.target.open;
  }, true);
  function tickerPeople(p) {
    var t = document.querySelector("[data-ticker]");
    var top = t && t.querySelector("ol"), more = t && t.querySelector("details");
    if (!top) return;
    if (more && tickerOpen && !more.open) more.open = true;
    var mine = {};
    if (p.me) mine[p.me] = true;
    p.friends.forEach(function (f) { mine[f] = true; });
    t.querySelectorAll("li[data-mover]").forEach(function (li) {
      var is = mine[li.dataset.mover] === true || mine[li.dataset.passed] === true;
      li.classList.toggle("mine", is);
      if (is && more && more.contains(li)) top.appendChild(li);
    });
    if (!more) return;
    var left = more.querySelectorAll("li").length;
    more.hidden = left === 0;
    var summary = more.querySelector("summary");
    if (summary && left) summary.textContent = left + (left === 1 ? " more move" : " more moves");
  }

  // A rank card's "This is me" and "Add to friends" buttons.
  function meControls(box, board, changed) {
    var member = box.dataset.meControls;
    var meBtn = box.querySelector("[data-me-toggle]"), friendBtn = box.querySelector("[data-friend-toggle]"),
      note = box.querySelector("[data-me-note]");
    if (!member || !meBtn || !friendBtn) return;
    function show() {
      var p = readPeople(board), isMe = p.me === member;
      meBtn.setAttribute("aria-pressed", isMe ? "true" : "false");
      friendBtn.hidden = isMe;
      friendBtn.textContent = p.friends.indexOf(member) >= 0 ? "Remove from friends" : "Add to friends";
    }
    function save(p, said) {
      if (note) note.textContent = writePeople(board, p) ? said : "This browser does not let the page remember it.";
      show();
      changed();
    }
    meBtn.addEventListener("click", function () {
      var p = readPeople(board);
      if (p.me === member) { p.me = ""; save(p, "No longer marked as you."); return; }
      p.me = member;
      p.friends = p.friends.filter(function (f) { return f !== member; });
      save(p, "Marked as you, in this browser only.");
    });
    friendBtn.addEventListener("click", function () {
      var p = readPeople(board), i = p.friends.indexOf(member);
      if (i >= 0) { p.friends.splice(i, 1); save(p, "Removed from your friends."); return; }
      if (p.friends.length >= FRIENDS_MAX) {
        if (note) note.textContent = "You can follow up to " + FRIENDS_MAX + " friends; remove one first.";
        return;
      }
      p.friends.push(member);
      save(p, "Added to your friends, in this browser only.");
    });
    box.hidden = false;
    show();
  }

  // The board page's "You & friends" link: the member list of me and my
  // friends on this board.
  function friendsLink(a, p) {
    var list = (p.me ? [p.me] : []).concat(p.friends).slice(0, LIST_MAX);
    a.hidden = list.length === 0;
    if (!list.length) return;
    var u = new URL(a.getAttribute("href"), location.href);
    u.searchParams.set("members", list.join(","));
    a.href = u.pathname + u.search;
    var title = document.getElementById("compare-title");
    var shown = new URL(location.href).searchParams.get("members");
    if (title && p.me && shown && shown.split(",").indexOf(p.me) >= 0) title.textContent = "You & friends";
  }

  // Scores as the board writes them (web/score.go scoreText): scaled
  // integers, in seconds for format: duration ("1:02.250").
  function scaledText(v, decimals) {
    var neg = v < 0, scale = Math.pow(10, decimals);
    v = Math.abs(v);
    var ip = Math.floor(v / scale), fp = v % scale, s = String(ip);
    if (fp) s += "." + String(fp + scale).slice(1).replace(/0+$/, "");
    return (neg ? "-" : "") + s;
  }

  function durationText(v, decimals) {
    var neg = v < 0, scale = Math.pow(10, decimals);
    v = Math.abs(v);
    var secs = Math.floor(v / scale), fp = v % scale, h = Math.floor(secs / 3600), m = Math.floor(secs % 3600 / 60), s = secs % 60;
    var two = function (n) { return (n < 10 ? "0" : "") + n; };
    var out = h > 0 ? h + ":" + two(m) + ":" + two(s) : m + ":" + two(s);
    if (decimals > 0) out += "." + String(fp + scale).slice(1);
    return (neg ? "-" : "") + out;
  }

  // A score's text back to a scaled integer ("1:02.250" and "1,024.5" too).
  function textScaled(text, decimals) {
    var parts = text.replace(/[^0-9.:-]/g, "").split(":"), v = 0;
    parts.forEach(function (x) { v = v * 60 + Number(x); });
    return Math.round(v * Math.pow(10, decimals));
  }

  // The pinned bar: while my row is out of view, "You: #412 · 1,024 · 36
  // to pass #411" and "Jump to me". My row on the page gives the numbers;
  // else the member API does, at most every few seconds and only while
  // the page is visible.
  function meBar(bar, board) {
    var text = bar.querySelector("[data-me-text]"), jump = bar.querySelector("[data-me-jump]");
    var dec = Number(bar.dataset.decimals) || 0, asc = bar.dataset.order === "asc",
      duration = bar.dataset.scoreFormat === "duration", pageSize = Number(bar.dataset.pageSize) || 100;
    var fetched = null, fetchedFor = "", lastFetch = 0, busy = false, queued = false;
    if (!text || !jump) return function () {};

    function myRow(me) {
      var t = document.getElementById(bar.dataset.meTable);
      return t && me ? t.querySelector('tr[data-member="' + CSS.escape(me) + '"]') : null;
    }
    function rankOf(tr) {
      var r = tr.querySelector("[data-live-rank]");
      return r ? Number(r.textContent) : NaN;
    }
    function gapText(d, rank) {
      if (!asc) return scaledText(d, dec) + " to pass #" + rank;
      if (duration) {
        var t = d < 60 * Math.pow(10, dec) ? scaledText(d, dec) + " s" : durationText(d, dec);
        return t + " faster to pass #" + rank;
      }
      return scaledText(d, dec) + " lower to pass #" + rank;
    }
    function say(rank, scoreText, score, above) {
      var parts = ["You: #" + rank, scoreText];
      if (above) parts.push(gapText(Math.abs(above.score - score) + 1, above.rank));
      else if (rank === 1) parts.push("leading");
      text.textContent = parts.join(" · ");
      var u = new URL(location.href), page = Math.ceil(rank / pageSize);
      if (page > 1) u.searchParams.set("page", page); else u.searchParams.delete("page");
      jump.href = u.pathname + u.search + "#me";
    }
    function showBar(on) {
      bar.hidden = !on;
      document.body.classList.toggle("with-me-bar", on);
    }
    function fromAPI(me) {
      if (fetchedFor === me && fetched) {
        if (fetched.rank > 0) say(fetched.rank, fetched.text, fetched.score, fetched.above);
        showBar(fetched.rank > 0);
      }
      if (busy || document.hidden || !window.fetch) return;
      var wait = lastFetch + 5000 - Date.now();
      if (wait > 0) {
        if (!queued) { queued = true; setTimeout(function () { queued = false; update(); }, wait); }
        return;
      }
      busy = true;
      lastFetch = Date.now();
      fetch(bar.dataset.meBar + encodeURIComponent(me) + bar.dataset.meQuery, { headers: { Accept: "application/json" }, cache: "no-cache" })
        .then(function (r) { return r.ok ? r.json() : null; })
        .then(function (c) {
          busy = false;
          fetchedFor = me;
          fetched = { rank: 0 };
          if (c && c.rank > 0) {
            var score = Math.round(Number(c.score) * Math.pow(10, dec)), above = null;
            (c.around || []).forEach(function (e) {
              if (e.rank < c.rank && (!above || e.rank > above.rank)) above = { rank: e.rank, score: Math.round(Number(e.score) * Math.pow(10, dec)) };
            });
            fetched = { rank: c.rank, score: score, above: above, text: duration ? durationText(score, dec) : scaledText(score, dec) };
          }
          update();
        })
        .catch(function () { busy = false; });
    }
    function update() {
      var me = readPeople(board).me;
      if (!me) { showBar(false); return; }
      var tr = myRow(me);
      if (!tr) { fromAPI(me); return; }
      var box = tr.getBoundingClientRect(), rank = rankOf(tr);
      if ((box.bottom > 0 && box.top < window.innerHeight) || isNaN(rank)) { showBar(false); return; }
      var scoreEl = tr.querySelector("[data-live-score]"), scoreText = scoreEl ? scoreEl.textContent.trim() : "";
      var above = null;
      for (var up = tr.previousElementSibling; up; up = up.previousElementSibling) {
        var r = rankOf(up), s = up.querySelector("[data-live-score]");
        if (r < rank && s) { above = { rank: r, score: textScaled(s.textContent, dec) }; break; }
      }
      say(rank, scoreText, textScaled(scoreText, dec), above);
      showBar(true);
    }
    jump.addEventListener("click", function (e) {
      var tr = myRow(readPeople(board).me);
      if (!tr) return; // the link opens the page that has my row
      e.preventDefault();
      tr.scrollIntoView({ block: "center" });
      var a = tr.querySelector("a");
      if (a) a.focus({ preventScroll: true });
      update();
    });
    var pending = false;
    window.addEventListener("scroll", function () {
      if (pending) return;
      pending = true;
      requestAnimationFrame(function () { pending = false; update(); });
    }, { passive: true });
    window.addEventListener("resize", update);
    document.addEventListener("visibilitychange", function () { if (!document.hidden) update(); });
    if (location.hash === "#me") {
      var tr = myRow(readPeople(board).me);
      if (tr) tr.scrollIntoView({ block: "center" });
    }
    update();
    return update;
  }

  // The member list (?members=) follows the live table: after a frame it
  // reads the page again, at most every few seconds and only while the
  // page is visible, and swaps in its table when it changed.
  function compareLive(box, after) {
    if (!window.fetch || !window.DOMParser) return;
    var served = box.innerHTML, last = 0, timer = 0, missed = false;
    function refresh() {
      timer = 0;
      if (document.hidden) { missed = true; return; }
      last = Date.now();
      // no-cache: pages are kept stale for a few seconds, and this wants now.
      fetch(location.href, { headers: { Accept: "text/html" }, cache: "no-cache" })
        .then(function (r) { return r.ok ? r.text() : null; })
        .then(function (html) {
          if (!html) return;
          var next = new DOMParser().parseFromString(html, "text/html").getElementById("compare-live");
          if (!next || next.innerHTML === served) return;
          served = next.innerHTML;
          var focused = document.activeElement, row = focused && box.contains(focused) ? focused.closest("tr[data-member]") : null;
          box.innerHTML = served;
          after();
          if (row) {
            var again = box.querySelector('tr[data-member="' + CSS.escape(row.dataset.member) + '"] a');
            if (again) again.focus({ preventScroll: true });
          }
        })
        .catch(function () {});
    }
    document.addEventListener("standings:frame", function () {
      if (!timer) timer = setTimeout(refresh, Math.max(0, last + 3000 - Date.now()));
    });
    document.addEventListener("visibilitychange", function () {
      if (!document.hidden && missed) { missed = false; refresh(); }
    });
  }

  // Sets up me and friends on a board page, rank card or widget.
  function people() {
    var board = pageBoard();
    if (!board) return;
    var bar = document.querySelector("[data-me-bar]"), link = document.querySelector("a[data-friends-link]");
    var updateBar = function () {};
    function apply() {
      var p = readPeople(board);
      highlightPeople(document, p);
      tickerPeople(p);
      if (link) friendsLink(link, p);
      updateBar();
    }
    var cmp = document.getElementById("compare-live");
    if (cmp) compareLive(cmp, apply);
    var controls = document.querySelector("[data-me-controls]");
    if (controls) meControls(controls, board, apply);
    if (bar) updateBar = meBar(bar, board);
    apply();
    document.addEventListener("standings:frame", apply);
    window.addEventListener("storage", function (e) { if (e.key === peopleKey(board)) apply(); });
  }

  // A league group's table (its page or the league widget) follows the
  // live feed like a board's: live() patches its rows by member. Every
  // viewer gets the same frames, so the row of ?me= is marked here and
  // the widget's sentence follows its member's row. When the round ends
  // the page goes to the group's page of that round (not the next
  // round's), and the frame that brings the outcomes is the last one: the
  // page is read again, decided and without the feed.
  function cohortLive(box, status) {
    var feed = new URL(status.dataset.ws, location.href).searchParams;
    var me = document.body.dataset.me || new URLSearchParams(location.search).get("me") || "";
    if (me && !document.body.dataset.me) widgetMe(me);
    var place = document.getElementById("league-me-place"), page = !feed.get("widget");
    function roundPage() {
      var u = new URL(location.href);
      u.searchParams.set("round", feed.get("round") || "");
      location.replace(u.pathname + u.search);
    }
    if (page) document.addEventListener("standings:rollover", function (e) { e.preventDefault(); roundPage(); });
    document.addEventListener("standings:frame", function (e) {
      if (!e.detail || e.detail.el !== box) return;
      var tr = me && box.querySelector('tr[data-member="' + CSS.escape(me) + '"]');
      var name = tr && tr.querySelector("th a");
      if (place && name && tr.dataset.place) place.textContent = name.textContent + " " + tr.dataset.place;
      if (page && box.querySelector("tr[data-final]")) roundPage();
    });
  }

  function start() {
    copyButtons();
    var rollover = document.getElementById("rollover");
    if (rollover) announceRollover(rollover);
    people();
    var status = document.getElementById("live-status");
    if (status && status.dataset.ws && "WebSocket" in window) live(status);
    countdowns();
    var search = document.querySelector("input[data-suggest]");
    if (search) suggest(search);
    var index = document.querySelector("[data-live-index]");
    if (index) liveIndex(index);
    var picker = document.querySelector("form[data-autosubmit]");
    if (picker) segmentPicker(picker);
    var tabs = document.querySelector("nav.tabs");
    if (tabs) currentTab(tabs);
    if (document.body.dataset.me) widgetMe(document.body.dataset.me);
    var builder = document.querySelector("form[data-builder]");
    if (builder) widgetBuilder(builder);
    var cohort = document.getElementById("cohort-live");
    if (cohort && status && status.dataset.ws) cohortLive(cohort, status);
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
