// The dashboard's script (served from our origin; no inline script anywhere; live.js beside it
// keeps statuses current): the time zone cookie, copy buttons, the Embedded Signup launcher on the overview and the header's menu
// on wide screens. Every page works without it (times are then in UTC).
"use strict";

// The browser's time zone, for the server to show times in (the "tz" cookie; UTC without it).
(function () {
  var tz = "";
  try { tz = Intl.DateTimeFormat().resolvedOptions().timeZone || ""; } catch (e) { return; }
  var had = /(?:^|; )tz=([^;]*)/.exec(document.cookie);
  if (!tz || (had && decodeURIComponent(had[1]) === tz)) return;
  document.cookie = "tz=" + encodeURIComponent(tz) + "; path=/dashboard; max-age=31536000; samesite=lax" +
    (location.protocol === "https:" ? "; secure" : "");
})();

document.addEventListener("click", function (ev) {
  var b = ev.target.closest("button.copy");
  if (!b) return;
  var el = document.getElementById(b.dataset.copy);
  if (!el || !navigator.clipboard) return;
  navigator.clipboard.writeText(el.textContent.trim()).then(function () {
    var label = b.textContent;
    b.textContent = "Copied";
    setTimeout(function () { b.textContent = label; }, 1500);
  });
});

(function () {
  var btn = document.getElementById("connect-whatsapp");
  if (!btn) return;
  var status = document.getElementById("es-status");
  var form = document.getElementById("es-form");
  var sdkURL = btn.dataset.sdkUrl, appID = btn.dataset.appId, configID = btn.dataset.configId;
  var sdkOrigin = "";
  try { sdkOrigin = new URL(sdkURL, location.href).origin; } catch (e) { /* shown below */ }
  var session = { waba_id: "", phone_number_id: "" };
  var code = "";

  function say(msg) { status.textContent = msg; }
  function submitIfReady() {
    if (!code || !session.waba_id || !session.phone_number_id) return;
    form.elements.code.value = code;
    form.elements.waba_id.value = session.waba_id;
    form.elements.phone_number_id.value = session.phone_number_id;
    say("Connecting your number…");
    form.submit();
  }

  // Embedded Signup reports the WABA and number the person chose with a message event.
  window.addEventListener("message", function (ev) {
    if (ev.origin !== sdkOrigin && !/^https:\/\/([a-z0-9-]+\.)*facebook\.com$/.test(ev.origin)) return;
    var data;
    try { data = typeof ev.data === "string" ? JSON.parse(ev.data) : ev.data; } catch (e) { return; }
    if (!data || data.type !== "WA_EMBEDDED_SIGNUP") return;
    if (data.event === "FINISH" || data.event === "FINISH_ONLY_WABA" || data.event === "FINISH_WHATSAPP_BUSINESS_APP_ONBOARDING") {
      session.waba_id = (data.data && data.data.waba_id) || "";
      session.phone_number_id = (data.data && data.data.phone_number_id) || "";
      submitIfReady();
    } else if (data.event === "CANCEL") {
      say("Embedded Signup was closed" + (data.data && data.data.current_step ? " at step " + data.data.current_step : "") + ". You can try again.");
    } else if (data.event === "ERROR") {
      say("Embedded Signup reported an error: " + ((data.data && data.data.error_message) || "unknown") + ". You can try again.");
    }
  });

  function launch() {
    window.FB.login(function (resp) {
      if (resp && resp.authResponse && resp.authResponse.code) {
        code = resp.authResponse.code;
        submitIfReady();
      } else {
        say("Embedded Signup did not finish. You can try again.");
      }
    }, { config_id: configID, response_type: "code", override_default_response_type: true, extras: { setup: {}, sessionInfoVersion: "3" } });
  }

  btn.addEventListener("click", function () {
    if (!sdkURL || !sdkOrigin) { say("Embedded Signup is not set up on this server. Use the token form below."); return; }
    code = ""; session = { waba_id: "", phone_number_id: "" };
    if (window.FB) { launch(); return; }
    say("Loading Embedded Signup…");
    window.fbAsyncInit = function () {
      window.FB.init({ appId: appID, autoLogAppEvents: true, xfbml: false, version: "v23.0" });
      say("");
      launch();
    };
    var s = document.createElement("script");
    s.src = sdkURL; s.async = true;
    s.onerror = function () { say("Could not load the Embedded Signup script. Check your connection and try again."); };
    document.head.appendChild(s);
  });
})();

// The header's menu (a <details>) is always open on wide screens, where its button is hidden;
// the stylesheet does the same in browsers that style a disclosure's content.
(function () {
  var menu = document.getElementById("menu");
  if (!menu || !window.matchMedia) return;
  var wide = window.matchMedia("(min-width: 701px)");
  function sync() { menu.open = wide.matches; }
  sync();
  if (wide.addEventListener) wide.addEventListener("change", sync);
})();
