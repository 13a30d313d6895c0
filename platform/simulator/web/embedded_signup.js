// The platform simulator's Embedded Signup window: once the server has answered (FINISH,
// CANCEL or ERROR), tell the page that opened the window, as Meta's window does, then close.
(function () {
  "use strict";
  var r = document.getElementById("es-result");
  if (!r || !window.opener) { return; }
  var target = r.getAttribute("data-origin");
  var ev = r.getAttribute("data-event");
  var data = {};
  if (ev === "FINISH") {
    data = { phone_number_id: r.getAttribute("data-phone-number-id"), waba_id: r.getAttribute("data-waba-id") };
  } else if (ev === "CANCEL") {
    data = { current_step: r.getAttribute("data-current-step") };
  } else {
    data = { error_message: r.getAttribute("data-error-message"), error_id: "0", session_id: r.getAttribute("data-session-id") };
  }
  window.opener.postMessage(JSON.stringify({ type: "WA_EMBEDDED_SIGNUP", event: ev, version: "3", data: data }), target);
  var code = r.getAttribute("data-code");
  window.opener.postMessage(JSON.stringify({ type: "FB_SIM_LOGIN", authResponse: code ? { code: code } : null }), target);
  setTimeout(function () { window.close(); }, 200);
})();
