package domain

import (
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"hash/crc32"
	"math/big"
	"strings"
)

// Key modes, told apart by the key's prefix.
const (
	ModeLive = "live"
	ModeTest = "test"
	ModeDemo = "demo"
)

const (
	base62       = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	keyBodyLen   = 32
	keyCheckLen  = 6
	keyPrefixLen = len("svc_live_")
)

// errMalformedKey is returned for a key that cannot be one of ours (refused without a lookup).
var errMalformedKey = errors.New("malformed API key")

// GenerateKey returns a new key "svc_<mode>_" + 32 base62 characters + a 6-character checksum,
// its SHA-256 hash (the only thing stored) and a short display prefix. It fails only for an
// unknown mode or when the system's randomness fails.
func GenerateKey(mode string) (key string, hash []byte, display string, err error) {
	if mode != ModeLive && mode != ModeTest && mode != ModeDemo {
		return "", nil, "", errors.New("mode must be live, test or demo")
	}
	var b strings.Builder
	b.WriteString("svc_" + mode + "_")
	max := big.NewInt(int64(len(base62)))
	for i := 0; i < keyBodyLen; i++ {
		n, err := rand.Int(rand.Reader, max)
		if err != nil {
			return "", nil, "", err
		}
		b.WriteByte(base62[n.Int64()])
	}
	b.WriteString(keyChecksum(b.String()))
	key = b.String()
	h := HashKey(key)
	return key, h, key[:keyPrefixLen+4], nil
}

// keyChecksum is CRC-32 (IEEE) of the prefix and body, as 6 base62 digits.
func keyChecksum(s string) string {
	n := crc32.ChecksumIEEE([]byte(s))
	out := make([]byte, keyCheckLen)
	for i := keyCheckLen - 1; i >= 0; i-- {
		out[i] = base62[n%62]
		n /= 62
	}
	return string(out)
}

// ParseKey checks a key's shape and checksum and returns its mode; errMalformedKey otherwise.
// No database is touched, so typos and random strings are refused cheaply.
func ParseKey(key string) (mode string, err error) {
	if len(key) != keyPrefixLen+keyBodyLen+keyCheckLen || !strings.HasPrefix(key, "svc_") {
		return "", errMalformedKey
	}
	mode = key[4:8]
	if (mode != ModeLive && mode != ModeTest && mode != ModeDemo) || key[8] != '_' {
		return "", errMalformedKey
	}
	for i := keyPrefixLen; i < len(key); i++ {
		if strings.IndexByte(base62, key[i]) < 0 {
			return "", errMalformedKey
		}
	}
	body := key[:len(key)-keyCheckLen]
	if keyChecksum(body) != key[len(key)-keyCheckLen:] {
		return "", errMalformedKey
	}
	return mode, nil
}

// HashKey is the SHA-256 of the whole key, the only form in which keys are stored.
func HashKey(key string) []byte {
	h := sha256.Sum256([]byte(key))
	return h[:]
}
