package simulator

import (
	"encoding/base64"
	"encoding/hex"
	"math/rand/v2"
	"net/http"
	"strings"
)

// maxRequestBody bounds a Graph request body.
const maxRequestBody = 4 << 20

// serveHTTP routes Graph paths and the control API.
func (s *Simulator) serveHTTP(w http.ResponseWriter, r *http.Request) {
	path := strings.Trim(r.URL.Path, "/")
	if s.serveBrowser(w, r, path) {
		return
	}
	if strings.HasPrefix("/"+path, mediaPathPrefix) {
		s.serveMediaDownload(w, r, strings.TrimPrefix("/"+path, mediaPathPrefix))
		return
	}
	if path == "_sim" || strings.HasPrefix(path, "_sim/") {
		s.serveControl(w, r, strings.TrimPrefix(strings.TrimPrefix(path, "_sim"), "/"))
		return
	}
	trace := traceID()
	w.Header().Set("x-fb-trace-id", trace)
	w.Header().Set("x-fb-request-id", trace)
	segs := strings.Split(path, "/")
	if len(segs) < 2 || !isVersion(segs[0]) {
		unknownPathError("/"+path).write(w, trace)
		return
	}
	w.Header().Set("facebook-api-version", segs[0])
	id := segs[1]
	switch {
	case len(segs) == 3 && segs[1] == "oauth" && segs[2] == "access_token":
		s.serveExchange(w, r, trace)
	case len(segs) == 3 && segs[2] == "subscribed_apps":
		s.serveSubscribedApps(w, r, id, trace)
	case len(segs) == 3 && segs[2] == "phone_numbers":
		s.servePhoneNumbers(w, r, id, trace)
	case len(segs) == 3 && segs[2] == "register":
		s.serveRegister(w, r, id, trace)
	case len(segs) == 3 && segs[2] == "messages":
		if r.Method != http.MethodPost {
			unknownObjectError(strings.ToLower(r.Method), id).write(w, trace)
			return
		}
		s.serveSend(w, r, id, trace)
	case len(segs) == 3 && segs[2] == "media":
		if r.Method != http.MethodPost {
			unknownObjectError(strings.ToLower(r.Method), id).write(w, trace)
			return
		}
		s.serveUpload(w, r, id, trace)
	case len(segs) == 2 && (r.Method == http.MethodGet || r.Method == http.MethodDelete) && s.isMedia(id):
		s.serveMediaObject(w, r, id, trace)
	case len(segs) == 3 && segs[2] == "message_templates":
		if r.Method != http.MethodGet {
			unknownObjectError(strings.ToLower(r.Method), id).write(w, trace)
			return
		}
		s.serveTemplateList(w, r, id, trace)
	case len(segs) == 2 && r.Method == http.MethodGet:
		s.serveNumber(w, r, id, trace)
	case len(segs) == 2:
		unknownObjectError(strings.ToLower(r.Method), id).write(w, trace)
	default:
		unknownPathError("/"+strings.Join(segs[2:], "/")).write(w, trace)
	}
}

// isMedia reports whether id is a media object's id.
func (s *Simulator) isMedia(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.media[id] != nil
}

// isVersion reports whether seg is "v{N}.{M}".
func isVersion(seg string) bool {
	if len(seg) < 4 || seg[0] != 'v' {
		return false
	}
	maj, minor, ok := strings.Cut(seg[1:], ".")
	return ok && allDigits(maj) && allDigits(minor)
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// bearer returns the request's access token: the Authorization Bearer value
// or, as Graph also allows, the access_token query parameter.
func bearer(r *http.Request) string {
	if h := r.Header.Get("Authorization"); h != "" {
		scheme, tok, ok := strings.Cut(strings.TrimSpace(h), " ")
		if ok && strings.EqualFold(scheme, "Bearer") {
			return strings.TrimSpace(tok)
		}
		return ""
	}
	return r.URL.Query().Get("access_token")
}

// traceID returns a random fbtrace_id-like string ("A" + 22 characters).
func traceID() string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	b := make([]byte, 23)
	b[0] = 'A'
	for i := 1; i < len(b); i++ {
		b[i] = alphabet[rand.IntN(len(alphabet))]
	}
	return string(b)
}

// randomHex returns n random bytes as upper-case hex.
func randomHex(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rand.Uint32())
	}
	return strings.ToUpper(hex.EncodeToString(b))
}

// newWamid returns a WhatsApp message id shaped like Meta's: "wamid." and the
// base64 of a small binary record holding the user's wa_id and a random
// hex id (18 characters outbound, 20 inbound).
func newWamid(waID string, outbound bool) string {
	b := make([]byte, 0, 64)
	b = append(b, 0x1c, 0x18, byte(len(waID)))
	b = append(b, waID...)
	b = append(b, 0x15, 0x02, 0x00)
	if outbound {
		b = append(b, 0x11, 0x18, 0x12)
		b = append(b, randomHex(9)...)
	} else {
		b = append(b, 0x12, 0x18, 0x14)
		b = append(b, randomHex(10)...)
	}
	b = append(b, 0x00)
	return "wamid." + base64.StdEncoding.EncodeToString(b)
}

// ---- GET /{version}/{phone-number-id} ----

// serveNumber returns the public fields of a business phone number (those named by the
// fields parameter, with id; all of them when it is absent).
func (s *Simulator) serveNumber(w http.ResponseWriter, r *http.Request, id, trace string) {
	tok := bearer(r)
	s.mu.Lock()
	n, known := s.numbers[id]
	_, tokenKnown := s.tokens[tok]
	s.mu.Unlock()
	switch {
	case tok == "" || !tokenKnown:
		tokenError().write(w, trace)
	case !known:
		unknownObjectError("get", id).write(w, trace)
	case n.AccessToken != tok:
		tokenError().write(w, trace)
	default:
		writeGraphJSON(w, http.StatusOK, numberFields(n, requestedFields(r)))
	}
}
