package eventhook

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// SecretPrefix starts every signing secret.
const SecretPrefix = "whsec_"

// secretBytes is the number of random bytes in a secret made by NewSecret.
const secretBytes = 32

// ErrMalformedSecret is returned (wrapped) by StandardSignature and
// Request.Headers when a secret is not "whsec_" followed by non-empty
// standard base64.
var ErrMalformedSecret = errors.New("webhook: malformed signing secret")

// NewSecret returns a fresh signing secret: "whsec_" followed by the standard
// base64 encoding (with padding) of 32 bytes from crypto/rand. It returns an
// error only if the system's random source fails.
func NewSecret() (string, error) {
	b := make([]byte, secretBytes)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("webhook: new secret: %w", err)
	}
	return SecretPrefix + base64.StdEncoding.EncodeToString(b), nil
}

// Signature returns the X-Service-Signature value for body: "sha256=" followed
// by the lowercase hex HMAC-SHA256 of the raw body, keyed with the bytes of the
// whole secret string as shown to the customer (prefix included). It cannot
// fail; any string, even an empty one, is used as the key.
func Signature(secret string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	var sum [sha256.Size]byte
	out := make([]byte, 0, len("sha256=")+2*sha256.Size)
	out = append(out, "sha256="...)
	out = hex.AppendEncode(out, mac.Sum(sum[:0]))
	return string(out)
}

// TimestampSignature returns one X-Service-Timestamp-Signature value: "sha256="
// followed by the lowercase hex HMAC-SHA256 of the unix seconds of ts in decimal
// (the X-Service-Timestamp value), a ".", and the raw body, keyed as Signature
// is (the whole secret string). Unlike Signature it binds the body to the time
// of the attempt, so a receiver that rejects old timestamps rejects replays.
func TimestampSignature(secret string, ts time.Time, body []byte) string {
	return timestampSignature(secret, ts.Unix(), body)
}

func timestampSignature(secret string, unix int64, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	var buf [24]byte
	mac.Write(strconv.AppendInt(buf[:0], unix, 10))
	mac.Write([]byte{'.'})
	mac.Write(body)
	var sum [sha256.Size]byte
	out := make([]byte, 0, len("sha256=")+2*sha256.Size)
	out = append(out, "sha256="...)
	out = hex.AppendEncode(out, mac.Sum(sum[:0]))
	return string(out)
}

// StandardSignature returns the Standard Webhooks webhook-signature value
// "v1,<base64 HMAC-SHA256(msgID + "." + unix seconds of ts + "." + body)>",
// keyed with the base64-decoded part of secret after "whsec_". It returns an
// error wrapping ErrMalformedSecret when secret lacks the prefix, is not valid
// standard base64 after it, or decodes to no bytes.
func StandardSignature(secret, msgID string, ts time.Time, body []byte) (string, error) {
	key, err := standardKey(secret)
	if err != nil {
		return "", err
	}
	return standardSignature(key, msgID, ts.Unix(), body), nil
}

// standardKey decodes the HMAC key of the Standard Webhooks signature.
func standardKey(secret string) ([]byte, error) {
	enc, ok := strings.CutPrefix(secret, SecretPrefix)
	if !ok {
		return nil, fmt.Errorf("%w: missing %q prefix", ErrMalformedSecret, SecretPrefix)
	}
	if strings.ContainsAny(enc, "\r\n") {
		// The decoder would skip line breaks, which Signature would not.
		return nil, fmt.Errorf("%w: line break", ErrMalformedSecret)
	}
	key, err := base64.StdEncoding.DecodeString(enc)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformedSecret, err)
	}
	if len(key) == 0 {
		return nil, fmt.Errorf("%w: empty key", ErrMalformedSecret)
	}
	return key, nil
}

func standardSignature(key []byte, msgID string, unix int64, body []byte) string {
	mac := hmac.New(sha256.New, key)
	var buf [24]byte
	mac.Write([]byte(msgID))
	mac.Write([]byte{'.'})
	mac.Write(strconv.AppendInt(buf[:0], unix, 10))
	mac.Write([]byte{'.'})
	mac.Write(body)
	var sum [sha256.Size]byte
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(sum[:0]))
}
