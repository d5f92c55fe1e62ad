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
    var i, n;
    for (i = a.attributes.length - 1; i >= 0; i--) {
      n = a.attributes[i].name;
      if (n !== "class" && !b.hasAttribute(n)) a.removeAttribute(n);
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
    var ac = Array.prototype.filter.call(a.childNodes, function (c) { return !c.standingsKeep; });
    var bc = Array.prototype.slice.call(b.childNodes);
    var kept = Array.prototype.filter.call(a.childNodes, function (c) { return c.standingsKeep; })[0] || null;
    for (i = 0; i < bc.length; i++) {
      var x = ac[i], y = bc[i];
      if (x && x.nodeType === y.nodeType && x.nodeName === y.nodeName) morph(x, y);
      else if (x) a.replaceChild(y, x);
      else a.insertBefore(y, kept);
    }
    for (; i < ac.length; i++) a.removeChild(ac[i]);
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

  // A block of a table (ticker, podium) sent whole when it changed.
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
    ["ticker", "podium"].forEach(function (name) {
      var b = next.querySelector('[data-live-block="' + name + '"]');
      if (b) setBlock(cur, name, b.outerHTML);
    });
    var cap = cur.querySelector("caption"), ncap = next.querySelector("caption");
    if (cap && ncap && cap.textContent !== ncap.textContent) cap.textContent = ncap.textContent;
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
    if (d.podium) setBlock(cur, "podium", d.podium);
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

  // The member search suggests names and ids as you type, from the name
  // search API; without JavaScript the form still takes an id or a name.
  function suggest(input) {
    var list = document.getElementById(input.getAttribute("list"));
    if (!list || !window.fetch) return;
    var timer = 0, seq = 0;
    input.addEventListener("input", function () {
      clearTimeout(timer);
      var q = input.value.trim();
      if (q === "" || q.length > 64) { list.replaceChildren(); return; }
      timer = setTimeout(function () {
        var mine = ++seq;
        fetch(input.dataset.suggest + "?q=" + encodeURIComponent(q), { headers: { Accept: "application/json" } })
          .then(function (r) { return r.ok ? r.json() : { members: [] }; })
          .then(function (body) {
            if (mine !== seq) return; // a newer keystroke answered first
            var opts = (body.members || []).map(function (m) {
              var o = document.createElement("option");
              o.value = m.member;
              o.label = m.name ? m.name + " (" + m.member + ")" : m.member;
              o.textContent = o.label;
              return o;
            });
            list.replaceChildren.apply(list, opts);
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

  function start() {
    copyButtons();
    var status = document.getElementById("live-status");
    if (status && status.dataset.ws && "WebSocket" in window) live(status);
    countdowns();
    var search = document.querySelector("input[data-suggest]");
    if (search) suggest(search);
    var index = document.querySelector("[data-live-index]");
    if (index) liveIndex(index);
    var picker = document.querySelector("form[data-autosubmit]");
    if (picker) segmentPicker(picker);
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
