package whatsapp

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"net/url"
	"strings"
)

// SignatureHeaderName is the header that carries a webhook's signature.
const SignatureHeaderName = "X-Hub-Signature-256"

const signaturePrefix = "sha256="

// SignatureHeader returns the X-Hub-Signature-256 value for body under the app
// secret: "sha256=" followed by the lowercase hex HMAC-SHA256 of the raw bytes.
// It cannot fail.
func SignatureHeader(secret, body []byte) string {
	mac := hmac.New(sha256.New, secret)
	mac.Write(body)
	return signaturePrefix + hex.EncodeToString(mac.Sum(nil))
}

// VerifySignature reports whether header, an X-Hub-Signature-256 value, is the
// HMAC-SHA256 of the raw body under the app secret, comparing in constant time.
// It returns false for an empty secret, a missing header, a missing or differently
// cased "sha256=" prefix, and anything but 64 hex digits after it. Hex digits are
// accepted in either case (they denote the same MAC; Meta sends lowercase).
func VerifySignature(secret, body []byte, header string) bool {
	if len(secret) == 0 || !strings.HasPrefix(header, signaturePrefix) {
		return false
	}
	hexSig := header[len(signaturePrefix):]
	if len(hexSig) != 2*sha256.Size {
		return false
	}
	got, err := hex.DecodeString(hexSig)
	if err != nil {
		return false
	}
	mac := hmac.New(sha256.New, secret)
	mac.Write(body)
	return hmac.Equal(got, mac.Sum(nil))
}

// VerifyChallenge answers the webhook verification handshake (a GET with
// hub.mode, hub.verify_token and hub.challenge). When hub.mode is "subscribe" and
// hub.verify_token equals verifyToken (compared in constant time) it returns
// hub.challenge and true; the handler writes that value as a plain-text 200.
// Otherwise, or when verifyToken is empty, it returns "" and false (answer 403).
func VerifyChallenge(query url.Values, verifyToken string) (challenge string, ok bool) {
	if verifyToken == "" || query.Get("hub.mode") != "subscribe" {
		return "", false
	}
	if subtle.ConstantTimeCompare([]byte(query.Get("hub.verify_token")), []byte(verifyToken)) != 1 {
		return "", false
	}
	return query.Get("hub.challenge"), true
}
