// A broadcast's live progress (served from our origin; no inline script anywhere). The
// broadcast page marks its progress section with data-broadcast-progress="URL"; while the page
// is visible and the broadcast not finished, this script asks that URL for the progress every
// two seconds, as live.js does for statuses, and puts the counts, the bar, the rate, the
// estimated end and the state in place, enabling the buttons the state allows. It stops when
// the broadcast is completed or cancelled, after a quarter of an hour on the page, or when the
// answer is not the JSON it expects (a session that ended). Without the script the page shows
// the progress as it was when loaded.
"use strict";

(function () {
  var section = document.querySelector("[data-broadcast-progress]");
  if (!section || section.dataset.final === "true") return;
  var url = section.dataset.broadcastProgress;
  var every = 2000, maxFails = 5, stopAfter = 15 * 60 * 1000;
  var started = Date.now(), fails = 0, timer = 0;

  function fmt(n) { return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ","); }
  function set(id, text) { var el = document.getElementById(id); if (el && el.textContent !== text) el.textContent = text; }
  function enable(id, on) { var el = document.getElementById(id); if (el) el.disabled = !on; }

  function show(p) {
    var badge = document.getElementById("b-state");
    if (badge) { badge.className = "badge " + p.state_tone; badge.textContent = p.state_text; }
    set("b-reason", p.reason || "");
    var bar = document.getElementById("b-bar");
    if (bar) { bar.max = Math.max(p.total, 1); bar.value = p.done; bar.textContent = p.percent + "%"; }
    set("b-done", fmt(p.done)); set("b-total", fmt(p.total)); set("b-percent", String(p.percent));
    ["waiting", "sent", "delivered", "read", "failed", "unknown", "cancelled"].forEach(function (k) { set("b-" + k, fmt(p[k])); });
    set("b-rate", p.rate_text); set("b-eta", p.eta_text);
    enable("pause-button", p.can_pause); enable("resume-button", p.can_resume);
    var cancel = document.getElementById("cancel-link");
    if (cancel) cancel.hidden = !p.can_cancel;
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
        if (!p.final) schedule(every);
      })
      .catch(function () { if (++fails < maxFails) schedule(every * Math.pow(2, fails)); });
  }

  document.addEventListener("visibilitychange", function () { if (!document.hidden) schedule(0); });
  schedule(every);
})();
