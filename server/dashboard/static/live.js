// Live statuses (served from our origin; no inline script anywhere). Any page can show a
// message's status that follows the platform's reports without a reload: it wraps the status
// badge in an element with data-live-message="ID" (and may show the problem of a failed message
// in an element with data-live-problem="ID"). While the page is visible, this script asks
// /dashboard/live/messages for the messages whose status can still change, every few seconds,
// and puts each new status in place. It stops when every status is final, after a quarter of an
// hour on the page (so an open tab does not keep a session alive), or when the answer is not
// the JSON it expects (a session that ended). Without the script the page shows the status as
// it was when loaded.
"use strict";

(function () {
  var every = 3000, maxFails = 5, stopAfter = 15 * 60 * 1000;
  var started = Date.now(), fails = 0, timer = 0;

  function pending() {
    var ids = [];
    document.querySelectorAll("[data-live-message]").forEach(function (el) {
      if (el.dataset.liveFinal === "true") return;
      var badge = el.querySelector(".badge");
      var st = badge ? badge.dataset.status : "";
      if (st === "read" || st === "failed" || st === "received") { el.dataset.liveFinal = "true"; return; }
      if (ids.indexOf(el.dataset.liveMessage) < 0) ids.push(el.dataset.liveMessage);
    });
    return ids.slice(0, 100);
  }

  function show(m) {
    document.querySelectorAll('[data-live-message="' + m.id + '"]').forEach(function (el) {
      var badge = el.querySelector(".badge");
      if (!badge) return;
      if (badge.dataset.status !== m.status) {
        badge.className = "badge " + m.tone;
        badge.dataset.status = m.status;
        badge.textContent = m.text;
        el.classList.add("live-changed");
      }
      if (m.final) el.dataset.liveFinal = "true";
    });
    if (m.status !== "failed") return;
    document.querySelectorAll('[data-live-problem="' + m.id + '"]').forEach(function (el) {
      if (el.dataset.liveShown) return;
      el.dataset.liveShown = "true";
      el.textContent = "";
      var what = document.createElement("span");
      what.className = "problem-what";
      what.textContent = m.problem;
      el.appendChild(what);
      if (m.next) {
        var next = document.createElement("span");
        next.className = "problem-next";
        next.textContent = " Next step: " + m.next;
        el.appendChild(next);
      }
      if (m.code) {
        var code = document.createElement("span");
        code.className = "muted problem-code";
        code.textContent = " (code " + m.code + ")";
        el.appendChild(code);
      }
      el.hidden = false;
      el.classList.remove("none");
    });
  }

  function schedule(ms) {
    clearTimeout(timer);
    timer = setTimeout(poll, ms);
  }

  function poll() {
    if (Date.now() - started > stopAfter) return;
    if (document.hidden) return; // visibilitychange polls again when the page is shown
    var ids = pending();
    if (!ids.length) return;
    var q = ids.map(function (id) { return "id=" + encodeURIComponent(id); }).join("&");
    fetch("/dashboard/live/messages?" + q, { credentials: "same-origin", headers: { "Accept": "application/json" }, redirect: "error" })
      .then(function (resp) {
        if (!resp.ok || (resp.headers.get("Content-Type") || "").indexOf("application/json") !== 0) throw new Error("no live answer");
        return resp.json();
      })
      .then(function (body) {
        fails = 0;
        (body.messages || []).forEach(show);
        schedule(every);
      })
      .catch(function () {
        if (++fails < maxFails) schedule(every * Math.pow(2, fails));
      });
  }

  if (!document.querySelector("[data-live-message]")) return;
  document.addEventListener("visibilitychange", function () { if (!document.hidden) schedule(0); });
  schedule(every);
})();
