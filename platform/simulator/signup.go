package simulator

import (
	"embed"
	"html/template"
	"net/http"
	"net/url"
	"strings"
)

// The browser side of Embedded Signup, for local runs and browser tests:
//
//	GET  /sdk.js (or /<locale>/sdk.js)  a stand-in of Meta's JavaScript SDK (web/sdk.js)
//	GET  /dialog/embedded_signup        the sign-up window FB.login opens: "Create a new
//	                                    WhatsApp Business Account", a business name, and the
//	                                    buttons Finish and Cancel
//	POST /dialog/embedded_signup        Finish: Signup (a fresh WABA and number with the
//	                                    standard templates, a code); Cancel
//	GET  /dialog/embedded_signup.js     posts the outcome to the opener and closes the window
//	GET  /dialog/embedded_signup.css
//
// The pages carry no inline script or style (Content-Security-Policy: default-src 'self'), so a
// dashboard with a strict policy only needs to allow the simulator's origin in script-src,
// connect-src and frame-src.

//go:embed web/sdk.js web/embedded_signup.js web/embedded_signup.css
var webFiles embed.FS

var signupPage = template.Must(template.New("signup").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Connect WhatsApp – platform simulator</title>
<link rel="stylesheet" href="/dialog/embedded_signup.css">
</head>
<body>
<main>
<h1>Connect your business to WhatsApp</h1>
{{- if .Result}}
<div id="es-result" data-origin="{{.Origin}}" data-event="{{.Result}}" data-code="{{.Code}}" data-waba-id="{{.WabaID}}"
 data-phone-number-id="{{.PhoneNumberID}}" data-current-step="BUSINESS_ACCOUNT_SELECTION" data-error-message="{{.Error}}"
 data-session-id="{{.Session}}">
{{- if eq .Result "FINISH"}}
<p>Your WhatsApp Business Account {{.WabaID}} and the number {{.Display}} are ready. This window closes by itself.</p>
{{- else if eq .Result "CANCEL"}}
<p>Sign-up cancelled. This window closes by itself.</p>
{{- else}}
<p class="error" role="alert">{{.Error}}</p>
{{- end}}
</div>
<script src="/dialog/embedded_signup.js"></script>
{{- else}}
<p class="note">Platform simulator: this stands in for Meta's Embedded Signup. Nothing leaves this machine.</p>
<form method="post" action="/dialog/embedded_signup">
<input type="hidden" name="app_id" value="{{.AppID}}">
<input type="hidden" name="config_id" value="{{.ConfigID}}">
<input type="hidden" name="origin" value="{{.Origin}}">
<fieldset>
<legend>WhatsApp Business Account</legend>
<label><input type="radio" name="account" value="new" checked> Create a new WhatsApp Business Account</label>
</fieldset>
<label for="business_name">Business name</label>
<input type="text" id="business_name" name="business_name" value="{{.BusinessName}}" required maxlength="100">
<div class="actions">
<button type="submit" class="primary" name="action" value="finish">Finish</button>
<button type="submit" name="action" value="cancel">Cancel</button>
</div>
</form>
{{- end}}
</main>
</body>
</html>
`))

type signupView struct {
	AppID, ConfigID, Origin, BusinessName string
	Result                                string // FINISH, CANCEL, ERROR; "" = the form
	Code, WabaID, PhoneNumberID, Display  string
	Error, Session                        string
}

// serveBrowser serves the SDK stand-in and the sign-up window; it reports false for any other
// path.
func (s *Simulator) serveBrowser(w http.ResponseWriter, r *http.Request, path string) bool {
	static := map[string]string{
		"dialog/embedded_signup.js":  "web/embedded_signup.js",
		"dialog/embedded_signup.css": "web/embedded_signup.css",
	}
	file, ok := static[path]
	if !ok && (path == "sdk.js" || strings.HasSuffix(path, "/sdk.js") && strings.Count(path, "/") == 1) {
		file, ok = "web/sdk.js", true
	}
	if ok {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return true
		}
		b, err := webFiles.ReadFile(file)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return true
		}
		ct := "text/javascript; charset=utf-8"
		if strings.HasSuffix(file, ".css") {
			ct = "text/css; charset=utf-8"
		}
		w.Header().Set("Content-Type", ct)
		w.Header().Set("Cache-Control", "no-cache")
		w.Header().Set("Access-Control-Allow-Origin", "*")
		w.Header().Set("Cross-Origin-Resource-Policy", "cross-origin")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		_, _ = w.Write(b)
		return true
	}
	if path != "dialog/embedded_signup" {
		return false
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		q := r.URL.Query()
		v := signupView{AppID: q.Get("app_id"), ConfigID: q.Get("config_id"), Origin: q.Get("origin"),
			BusinessName: "Test Business " + randomDigits(3)}
		s.writeSignup(w, s.checkSignup(v))
	case http.MethodPost:
		if err := r.ParseForm(); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return true
		}
		v := signupView{AppID: r.PostForm.Get("app_id"), ConfigID: r.PostForm.Get("config_id"), Origin: r.PostForm.Get("origin"),
			BusinessName: r.PostForm.Get("business_name")}
		if v = s.checkSignup(v); v.Result != "" {
			s.writeSignup(w, v)
			return true
		}
		if r.PostForm.Get("action") == "cancel" {
			v.Result = "CANCEL"
			s.writeSignup(w, v)
			return true
		}
		su := s.Signup(v.BusinessName)
		v.Result, v.Code, v.WabaID, v.PhoneNumberID, v.Display = "FINISH", su.Code, su.WabaID, su.PhoneNumberID, su.DisplayPhoneNumber
		s.writeSignup(w, v)
	default:
		w.Header().Set("Allow", "GET, HEAD, POST")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	}
	return true
}

// checkSignup turns a request with an unusable app id, configuration id or opener origin into
// an ERROR result.
func (s *Simulator) checkSignup(v signupView) signupView {
	fail := func(msg string) signupView {
		v.Result, v.Error, v.Session = "ERROR", msg, randomHex(8)
		return v
	}
	u, err := url.Parse(v.Origin)
	switch {
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/"):
		v.Origin = ""
		return fail("The page that opened this window did not give its origin.")
	case v.AppID == "" || (s.appID != "" && v.AppID != s.appID):
		return fail("Invalid App ID: the app id given to FB.init is not the platform app's id.")
	case strings.TrimSpace(v.ConfigID) == "":
		return fail("Missing config_id: FB.login needs the Embedded Signup configuration id.")
	}
	v.Origin = u.Scheme + "://" + u.Host
	return v
}

func (s *Simulator) writeSignup(w http.ResponseWriter, v signupView) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", "default-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'self'")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-store")
	_ = signupPage.Execute(w, v)
}
