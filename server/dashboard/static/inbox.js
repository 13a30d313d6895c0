// The team inbox, live (served from our origin; no inline script anywhere). Every signed-in
// page carries the navigation's unread badge; the inbox list (data-live-inbox) and a thread
// (data-conversation) also show conversations that change. While the page is visible, this
// script asks /dashboard/live/inbox what changed since its last question, every second, and:
// puts the new unread count in the badge; on the list, fetches the page again and puts its new
// list in place; on a thread whose conversation changed, fetches the thread again and puts its
// messages and team section in place (the composer stays as it is, and a note being typed or a
// teammate being chosen in the team section is kept).
// It stops after a quarter of an hour on the page (so an open tab does not keep a session
// alive) or when the answer is not the JSON it expects (a session that ended). Without the
// script, the pages show what they showed when loaded.
"use strict";

(function () {
  var maxFails = 5, stopAfter = 15 * 60 * 1000;
  var started = Date.now(), fails = 0, timer = 0, busy = false;
  var badge = document.getElementById("nav-unread");
  if (!badge) return;
  var inbox = document.querySelector("[data-live-inbox]");
  var conversation = document.querySelector("[data-conversation-id]");
  var conv = conversation ? conversation.dataset.conversationId : "";
  // The page's position in the change feed when it was made ("" on other pages: the first
  // poll only takes the position). The inbox and a thread follow every second, the badge of
  // other pages every five.
  var live = inbox || conversation;
  var since = live ? live.dataset.liveSince : "";
  var every = live ? 1000 : 5000;

  function schedule(ms) {
    clearTimeout(timer);
    timer = setTimeout(poll, ms);
  }

  // showUnread puts the count in the navigation's badge and in the phone's Menu button.
  function showUnread(n) {
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
  // field that should have the focus, if one of now's had it.
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
    return focused;
  }

  function poll() {
    if (Date.now() - started > stopAfter) return;
    if (document.hidden) return; // visibilitychange polls again when the page is shown
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
        showUnread(body.unread);
        if (first) return;
        var changed = body.reload || (body.changed || []).length > 0;
        if (inbox && changed) return refresh(["inbox-list"]);
        if (conv && (body.reload || (body.changed || []).map(String).indexOf(conv) >= 0)) return refresh(["thread-messages", "team"]);
      })
      .then(function () { busy = false; schedule(every); })
      .catch(function () {
        busy = false;
        if (++fails < maxFails) schedule(every * Math.pow(2, fails));
      });
  }

  document.addEventListener("visibilitychange", function () { if (!document.hidden) schedule(0); });
  schedule(every);
})();
