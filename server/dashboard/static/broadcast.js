// A broadcast's live progress (served from our origin; no inline script anywhere). The
// broadcast page marks its progress section with data-broadcast-progress="URL"; while the page
// is visible, this script asks that URL for the progress every
// two seconds, as live.js does for statuses, and puts the counts, the bar, the rate, the
// estimated end and the state in place, showing the buttons the state allows. Once the
// broadcast is completed or cancelled it asks every ten seconds (its messages' delivered and
// read still change). It stops after a quarter of an hour on the page, or when the answer is
// not the JSON it expects (a session that ended). Without the script the page shows the
// progress as it was when loaded.
"use strict";

(function () {
  var section = document.querySelector("[data-broadcast-progress]");
  if (!section) return;
  var url = section.dataset.broadcastProgress;
  var every = 2000, finished = 10000, maxFails = 5, stopAfter = 15 * 60 * 1000;
  var started = Date.now(), fails = 0, timer = 0;

  function fmt(n) { return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ","); }
  function set(id, text) { var el = document.getElementById(id); if (el && el.textContent !== text) el.textContent = text; }
  function offer(id, on) { var el = document.getElementById(id); if (el) el.hidden = !on; }

  function show(p) {
    var badge = document.getElementById("b-state");
    if (badge) { badge.className = "badge " + p.state_tone; badge.textContent = p.state_text; }
    set("b-reason", p.reason || "");
    var bar = document.getElementById("b-bar");
    if (bar) { bar.max = Math.max(p.total, 1); bar.value = p.done; bar.textContent = p.percent + "%"; }
    set("b-done", fmt(p.done)); set("b-total", fmt(p.total)); set("b-percent", String(p.percent));
    ["waiting", "sent", "delivered", "read", "failed", "unknown", "cancelled"].forEach(function (k) { set("b-" + k, fmt(p[k])); });
    set("b-rate", p.rate_text); set("b-eta", p.eta_text);
    offer("pause-button", p.can_pause); offer("resume-button", p.can_resume); offer("cancel-link", p.can_cancel);
  }

  function schedule(ms) { clearTimeout(timer); timer = setTimeout(poll, ms); }

  function poll() {
    if (Date.now() - started > stopAfter) return;
    if (document.hidden) return; // visibilitychange polls again when the page is shown
    fetch(url, { credentials: "same-origin", headers: { "Accept": "application/json" }, redirect: "error" })
      .then(function (resp) {
        if (!resp.ok || (resp.headers.get("Content-Type") || "").indexOf("application/json") !== 0) throw new Error("no progress");
        return resp.json();
      })
      .then(function (p) {
        fails = 0;
        show(p);
        schedule(p.final ? finished : every);
      })
      .catch(function () { if (++fails < maxFails) schedule(every * Math.pow(2, fails)); });
  }

  document.addEventListener("visibilitychange", function () { if (!document.hidden) schedule(0); });
  schedule(section.dataset.final === "true" ? finished : every);
})();
