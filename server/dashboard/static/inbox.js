// The team inbox, live (served from our origin; no inline script anywhere). Every signed-in
// page carries the navigation's unread badge; the inbox list (data-live-inbox) and a thread
// (data-conversation) also show conversations that change. While the page is visible, this
// script follows the account's changes on the server's event stream (/dashboard/live/inbox/stream,
// EventSource) and:
// puts the new unread count in the badge; on the list, puts the changed rows the event carries
// in place (a row moves to where its latest activity puts it, a row that left the view goes),
// or, when the event has no rows for this page (a search, a later page, the empty inbox, too
// many changes at once) or the page fell behind, fetches the list again, at most once every
// few seconds while changes keep coming; on a thread whose conversation changed, fetches the
// thread again and puts its messages and team section in place (the composer stays as it is,
// and a note being typed or a teammate being chosen in the team section is kept).
// Without EventSource, or when the stream cannot be opened, it asks /dashboard/live/inbox what
// changed every second (every five seconds on other pages) instead.
// It stops after a quarter of an hour on the page (so an open tab does not keep a session
// alive) or when the server no longer answers as it expects (a session that ended). Without the
// script, the pages show what they showed when loaded.
"use strict";

(function () {
  var maxFails = 5, stopAfter = 15 * 60 * 1000, listGap = 3000, maxRows = 100;
  var stopped = false;
  var badge = document.getElementById("nav-unread");
  if (!badge) return;
  var inbox = document.querySelector("[data-live-inbox]");
  var conversation = document.querySelector("[data-conversation-id]");
  var conv = conversation ? conversation.dataset.conversationId : "";
  // The page's position in the change feed when it was made ("" on other pages: the stream or
  // the first poll only takes the position), then the position of the last change shown.
  var live = inbox || conversation;
  var since = live ? live.dataset.liveSince : "";

  // showUnread puts the count in the navigation's badge and in the phone's Menu button.
  function showUnread(n) {
    if (n === undefined) return;
    badge.hidden = !n;
    var count = document.getElementById("nav-unread-count");
    if (count) count.textContent = n;
    var menu = document.getElementById("menu-unread"), menuCount = document.getElementById("menu-unread-count");
    if (menu && menuCount) {
      menu.hidden = !n;
      menuCount.textContent = n;
    }
  }

  // refresh fetches the page again and replaces the elements of those ids with the new ones.
  function refresh(ids) {
    var url = location.pathname + location.search.replace(/([?&])notice=[^&]*&?/, "$1").replace(/[?&]$/, "");
    return fetch(url, { credentials: "same-origin", redirect: "error" })
      .then(function (resp) {
        if (!resp.ok) throw new Error("no page");
        return resp.text();
      })
      .then(function (html) {
        var doc = new DOMParser().parseFromString(html, "text/html");
        ids.forEach(function (id) {
          var now = document.getElementById(id), next = doc.getElementById(id);
          if (!now || !next) return;
          next = document.importNode(next, true);
          var focused = keepTyped(now, next);
          now.replaceWith(next);
          if (focused) focused.focus();
        });
        var count = doc.getElementById("nav-unread-count");
        if (count) showUnread(count.textContent);
      });
  }

  // keepTyped carries what the person changed in now's fields (a note being typed, a teammate
  // chosen) over to the same fields of next, the section that replaces it; it returns next's
  // field that should have the focus, if one of now's had it (a conversation's link too).
  function keepTyped(now, next) {
    var focused = null;
    now.querySelectorAll("textarea[id], input[id], select[id]").forEach(function (f) {
      var g = next.querySelector("#" + CSS.escape(f.id));
      if (!g || g.tagName !== f.tagName) return;
      var changed = f.tagName === "SELECT"
        ? Array.prototype.some.call(f.options, function (o) { return o.selected !== o.defaultSelected; })
        : f.type !== "file" && f.type !== "hidden" && f.value !== f.defaultValue;
      if (changed) g.value = f.value;
      if (document.activeElement !== f) return;
      focused = g;
      if (f.tagName === "TEXTAREA") {
        var start = f.selectionStart, end = f.selectionEnd;
        focused = { focus: function () { g.focus(); g.setSelectionRange(start, end); } };
      }
    });
    var a = document.activeElement;
    if (!focused && a && now.contains(a) && a.matches("a.conv-link")) {
      focused = next.querySelector('a.conv-link[href="' + a.getAttribute("href") + '"]');
    }
    return focused;
  }

  // section fetches a part of the page again: one fetch at a time, another one after it when a
  // change came meanwhile, and at most one every gap milliseconds.
  function section(ids, gap) {
    var fetching = false, again = false, last = 0, timer = 0;
    function run() {
      if (fetching) { again = true; return; }
      var wait = last + gap - Date.now();
      if (wait > 0) {
        if (!timer) timer = setTimeout(function () { timer = 0; run(); }, wait);
        return;
      }
      fetching = true;
      last = Date.now();
      refresh(ids).catch(function () {}).then(function () {
        fetching = false;
        if (again) { again = false; run(); }
      });
    }
    return { run: run, busy: function () { return fetching || timer !== 0; } };
  }
  var list = section(["inbox-list"], listGap), thread = section(["thread-messages", "team"], 0);

  // patchList puts the event's rows in place in the list; it returns false when the list
  // cannot take them (no list yet, a fetch under way or waiting, too many rows), for the
  // caller to fetch the list instead.
  function patchList(ev) {
    var ul = document.getElementById("conversations");
    if (!ul || list.busy() || ul.children.length > maxRows) return false;
    var rows = {};
    (ev.rows || []).forEach(function (r) { rows[r.id] = r; });
    var later = !!document.getElementById("older-conversations");
    ev.changed.forEach(function (id) {
      var old = ul.querySelector('li.conv[data-conversation="' + id + '"]'), r = rows[id];
      var focused = old && old.contains(document.activeElement);
      if (old) old.remove();
      if (!r) return; // it left this view
      var t = document.createElement("template");
      t.innerHTML = r.html.trim();
      var li = t.content.firstElementChild, next = null;
      for (var c = ul.firstElementChild; c; c = c.nextElementSibling) {
        if ((c.dataset.activity || "") < r.activity) { next = c; break; }
      }
      if (!next && later) return; // older than this page's last row: it is on a later page
      ul.insertBefore(li, next);
      if (focused) li.querySelector("a.conv-link").focus();
    });
    if (!ul.firstElementChild) list.run(); // the view is empty now: its page says so
    return true;
  }

  // show applies one change event: the badge, then the list or the thread.
  function show(ev) {
    showUnread(ev.unread);
    var changed = ev.changed || [];
    if (inbox) {
      if (ev.reload || (changed.length && !(ev.patch && patchList(ev)))) list.run();
      return;
    }
    if (conv && (ev.reload || changed.map(String).indexOf(conv) >= 0)) thread.run();
  }

  // The stream. EventSource reconnects by itself after a network error or when the server ends
  // a stream (sending the last event's id, so nothing is missed); a refusal closes it for good:
  // before it ever opened, the page polls instead; after, the session has ended and it stops.
  var source = null, opened = false;
  function open() {
    if (stopped || source || document.hidden) return;
    var q = "?since=" + encodeURIComponent(since || "");
    if (inbox) {
      q += "&view=" + encodeURIComponent(inbox.dataset.liveView || "all");
      if (inbox.hasAttribute("data-live-patch")) q += "&patch=1";
    }
    var s = new EventSource("/dashboard/live/inbox/stream" + q);
    source = s;
    s.onopen = function () { opened = true; };
    s.addEventListener("change", function (e) {
      var first = !since;
      if (e.lastEventId) since = e.lastEventId;
      var ev = JSON.parse(e.data);
      if (first) ev.changed = []; // the position only
      show(ev);
    });
    s.addEventListener("reload", function () { show({ reload: true }); });
    s.onerror = function () {
      if (s.readyState !== EventSource.CLOSED) return;
      source = null;
      if (!opened) startPolling();
    };
  }
  function close() {
    if (source) source.close();
    source = null;
  }

  // Polling, where the stream is not available.
  var polling = false, fails = 0, timer = 0, busy = false, every = live ? 1000 : 5000;
  function startPolling() {
    polling = true;
    schedule(every);
  }
  function schedule(ms) {
    clearTimeout(timer);
    timer = setTimeout(poll, ms);
  }
  function poll() {
    if (stopped || document.hidden) return; // visibilitychange polls again when the page is shown
    if (busy) return schedule(every);
    busy = true;
    fetch("/dashboard/live/inbox?since=" + encodeURIComponent(since || "0"), { credentials: "same-origin", headers: { "Accept": "application/json" }, redirect: "error" })
      .then(function (resp) {
        if (!resp.ok || (resp.headers.get("Content-Type") || "").indexOf("application/json") !== 0) throw new Error("no live answer");
        return resp.json();
      })
      .then(function (body) {
        fails = 0;
        var first = !since;
        since = body.next;
        if (first) body.changed = [];
        show(body);
      })
      .then(function () { busy = false; schedule(every); })
      .catch(function () {
        busy = false;
        if (++fails < maxFails) schedule(every * Math.pow(2, fails));
      });
  }

  setTimeout(function () { stopped = true; close(); clearTimeout(timer); }, stopAfter);
  document.addEventListener("visibilitychange", function () {
    if (document.hidden) return close();
    if (polling) schedule(0);
    else open();
  });
  if (typeof EventSource === "undefined") startPolling();
  else open();
})();
