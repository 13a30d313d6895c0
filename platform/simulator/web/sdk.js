// A stand-in of Meta's JavaScript SDK (sdk.js), served by the platform simulator so that
// Embedded Signup runs locally: FB.init({appId, version}) and FB.login(callback, {config_id,
// response_type: "code", override_default_response_type: true, extras}) open the simulator's
// sign-up window. The window posts Meta's message event to the page (a JSON string, origin =
// the simulator's origin): {type: "WA_EMBEDDED_SIGNUP", event: "FINISH", data:
// {phone_number_id, waba_id}}, or event "CANCEL" ({current_step}) or "ERROR"
// ({error_message}). Then the login callback receives {status: "connected", authResponse:
// {code}} — or {status: "unknown", authResponse: null} when the person cancelled or closed
// the window.
(function () {
  "use strict";

  function scriptOrigin() {
    var s = document.currentScript;
    if (!s) {
      var all = document.getElementsByTagName("script");
      for (var i = all.length - 1; i >= 0; i--) {
        if (/\/sdk\.js(\?|$)/.test(all[i].src)) { s = all[i]; break; }
      }
    }
    return s ? new URL(s.src, location.href).origin : location.origin;
  }

  var origin = scriptOrigin();
  var appId = null;
  var version = null;
  var pending = null;
  var popup = null;
  var timer = null;

  function parse(d) {
    if (typeof d !== "string") { return d; }
    try { return JSON.parse(d); } catch (e) { return null; }
  }

  function finish(resp) {
    var cb = pending;
    pending = null;
    if (timer) { clearInterval(timer); timer = null; }
    if (cb) { cb(resp); }
  }

  var notConnected = function () { return { status: "unknown", authResponse: null }; };

  window.addEventListener("message", function (ev) {
    if (ev.origin !== origin || !pending) { return; }
    var m = parse(ev.data);
    if (!m || m.type !== "FB_SIM_LOGIN") { return; }
    if (m.authResponse && m.authResponse.code) {
      finish({ status: "connected", authResponse: m.authResponse });
    } else {
      finish(notConnected());
    }
  });

  window.FB = {
    init: function (opts) {
      opts = opts || {};
      appId = opts.appId ? String(opts.appId) : null;
      version = opts.version || null;
    },
    getLoginStatus: function (cb) { if (typeof cb === "function") { cb(notConnected()); } },
    logout: function (cb) { if (typeof cb === "function") { cb(notConnected()); } },
    login: function (cb, opts) {
      opts = opts || {};
      if (!appId) {
        if (window.console) { console.error("FB.login() called before FB.init()."); }
        return;
      }
      if (pending) { finish(notConnected()); }
      var q = new URLSearchParams();
      q.set("app_id", appId);
      q.set("config_id", opts.config_id || "");
      q.set("origin", location.origin);
      if (version) { q.set("version", version); }
      if (opts.extras) { q.set("extras", JSON.stringify(opts.extras)); }
      pending = typeof cb === "function" ? cb : function () {};
      popup = window.open(origin + "/dialog/embedded_signup?" + q.toString(), "fb_embedded_signup",
        "popup,width=600,height=720");
      if (!popup) { finish(notConnected()); return; }
      timer = setInterval(function () {
        if (popup && popup.closed) {
          clearInterval(timer);
          timer = null;
          // Messages posted just before the window closed are delivered first.
          setTimeout(function () { if (pending) { finish(notConnected()); } }, 300);
        }
      }, 250);
    },
    AppEvents: { logPageView: function () {} },
    XFBML: { parse: function () {} }
  };

  if (typeof window.fbAsyncInit === "function") {
    setTimeout(window.fbAsyncInit, 0);
  }
})();
