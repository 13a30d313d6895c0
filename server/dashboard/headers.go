package dashboard

import (
	"net/http"
	"net/url"
	"strings"
)

// contentSecurityPolicy allows scripts, frames and connections only from our origin and the
// Embedded Signup SDK's origin (sdkURL; "" for none); no inline script or style.
// With Meta's SDK (a host under facebook.net or facebook.com) Meta's sign-up window and
// frames at www.facebook.com and web.facebook.com are allowed too.
func contentSecurityPolicy(sdkURL string) string {
	extra := ""
	if u, err := url.Parse(sdkURL); err == nil && u.Host != "" && (u.Scheme == "https" || u.Scheme == "http") {
		extra = " " + u.Scheme + "://" + u.Host
		h := strings.ToLower(u.Hostname())
		for _, meta := range []string{"facebook.net", "facebook.com"} {
			if h == meta || strings.HasSuffix(h, "."+meta) {
				extra += " https://www.facebook.com https://web.facebook.com"
				break
			}
		}
	}
	return "default-src 'self'; script-src 'self'" + extra + "; style-src 'self'; img-src 'self' data:" + extra +
		"; connect-src 'self'" + extra + "; frame-src" + orNone(extra) + "; form-action 'self'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'"
}

func orNone(s string) string {
	if s == "" {
		return " 'none'"
	}
	return s
}

// hstsMaxAge is one year: browsers that saw the dashboard over https use only https for it.
// includeSubDomains is left out: the dashboard does not know the domain's other hosts.
const hstsMaxAge = "max-age=31536000"

// isConnectPage reports whether the path is the connect page (the overview, where Embedded
// Signup runs, and the connect posts that show it again): only it loads the platform's SDK.
func isConnectPage(path string) bool {
	return path == Prefix+"/" || strings.HasPrefix(path, Prefix+"/connect/")
}

// securityHeaders sets the headers every response of the dashboard carries. Outside
// development (where the session cookie is Secure, so the dashboard is served over https)
// that includes Strict-Transport-Security.
func (d *Dashboard) securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		if isConnectPage(r.URL.Path) {
			h.Set("Content-Security-Policy", d.connectCSP)
		} else {
			h.Set("Content-Security-Policy", d.csp)
		}
		if !d.cfg.Development {
			h.Set("Strict-Transport-Security", hstsMaxAge)
		}
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "same-origin")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Cross-Origin-Opener-Policy", "same-origin-allow-popups")
		if !strings.HasPrefix(r.URL.Path, Prefix+"/static/") {
			h.Set("Cache-Control", "no-store")
		}
		next.ServeHTTP(w, r)
	})
}

func cacheStatic(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=300")
		next.ServeHTTP(w, r)
	})
}
