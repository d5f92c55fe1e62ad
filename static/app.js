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

  // Live feed: frames are whole fragments (a table or a card headline)
  // whose id names the element they replace.
  function live(status) {
    var url = (location.protocol === "https:" ? "wss://" : "ws://") + location.host + status.dataset.ws;
    var tries = 0, updated = 0;

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

    function scoreOf(tr) {
      var el = tr.querySelector("[data-live-score]");
      var n = el ? parseFloat(el.textContent.replace(/[^0-9.+-]/g, "")) : NaN;
      return n;
    }

    function rowsOf(el) {
      var out = {};
      el.querySelectorAll("tr[data-member]").forEach(function (tr) {
        var rank = tr.querySelector("[data-live-rank]");
        var score = tr.querySelector("[data-live-score]");
        out[tr.dataset.member] = (rank ? rank.textContent : "") + "|" + (score ? score.textContent : "");
      });
      return out;
    }

    function apply(html) {
      var tpl = document.createElement("template");
      tpl.innerHTML = html;
      var next = tpl.content.firstElementChild;
      if (!next || !next.id) return;
      var cur = document.getElementById(next.id);
      if (!cur) return;
      // The current period rolled over: the page around the table is stale.
      if (cur.dataset.period && next.dataset.period && cur.dataset.period !== next.dataset.period) {
        location.reload();
        return;
      }
      var before = rowsOf(cur), after = rowsOf(next);
      // Where each row was, and its score: rows that moved slide from
      // their old place to the new one, and a changed score shows its
      // delta (+8) for a moment.
      var old = {};
      cur.querySelectorAll("tr[data-member]").forEach(function (tr) {
        old[tr.dataset.member] = { top: tr.getBoundingClientRect().top, score: scoreOf(tr) };
      });
      next.querySelectorAll("tr[data-member]").forEach(function (tr) {
        if (before[tr.dataset.member] === after[tr.dataset.member]) return;
        tr.classList.add("moved");
        var was = old[tr.dataset.member], now = scoreOf(tr);
        if (was && !isNaN(was.score) && !isNaN(now) && now !== was.score) {
          var d = Math.round((now - was.score) * 1e6) / 1e6;
          var badge = document.createElement("span");
          badge.className = "delta " + (d > 0 ? "up" : "down");
          badge.setAttribute("aria-hidden", "true");
          badge.textContent = (d > 0 ? "+" : "") + d;
          var cell = tr.querySelector("td.score");
          if (cell) cell.appendChild(badge);
          setTimeout(function () { badge.remove(); }, 2500);
        }
      });
      var nh = next.querySelector("dl.headline"), ch = cur.querySelector("dl.headline");
      if (nh && ch && nh.textContent !== ch.textContent) nh.classList.add("changed");
      cur.replaceWith(next);
      updated = Date.now();
      freshness();
      var still = window.matchMedia && window.matchMedia("(prefers-reduced-motion: reduce)").matches;
      if (still) return;
      next.querySelectorAll("tr[data-member]").forEach(function (tr) {
        var was = old[tr.dataset.member];
        if (!was) return;
        var dy = was.top - tr.getBoundingClientRect().top;
        if (Math.abs(dy) < 1) return;
        tr.animate([{ transform: "translateY(" + dy + "px)" }, { transform: "none" }], { duration: 450, easing: "ease-out" });
      });
    }

    function connect() {
      setState("connecting", tries ? "Reconnecting…" : "Connecting…");
      var ws;
      try { ws = new WebSocket(url); } catch (e) { retry(); return; }
      ws.onopen = function () { tries = 0; updated = 0; setState("live", "Live"); };
      ws.onmessage = function (ev) { if (typeof ev.data === "string") apply(ev.data); };
      ws.onclose = function (ev) {
        // 1013 "too slow": come back at once; 1012: the server restarts.
        // 1013 for any other reason: a live connection limit (too many
        // from this address, or the server is full). Retrying soon would
        // only be refused again, so back off for long; the page itself
        // stays usable meanwhile.
        var limited = ev.code === 1013 && ev.reason.indexOf("too slow") !== 0;
        setState("reconnecting", limited ? "Live updates paused (server busy)" : "Reconnecting…");
        retry(ev.code, limited);
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
          setTimeout(function () { location.reload(); }, 1500 + Math.random() * 1500);
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
