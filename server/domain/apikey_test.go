package domain

import (
	"bytes"
	"crypto/sha256"
	"strings"
	"testing"
)

func TestGenerateKeyRoundTrip(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for _, mode := range []string{ModeLive, ModeTest, ModeDemo} {
		for range 300 {
			key, hash, display, err := GenerateKey(mode)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(key, "svc_"+mode+"_") || len(key) != len("svc_live_")+32+6 {
				t.Fatalf("key %q", key)
			}
			for _, c := range key[len("svc_live_"):] {
				if !strings.ContainsRune(base62, c) {
					t.Fatalf("key %q has %q outside base62", key, c)
				}
			}
			got, err := ParseKey(key)
			if err != nil || got != mode {
				t.Fatalf("ParseKey(%q) = %q, %v; want %q", key, got, err, mode)
			}
			want := sha256.Sum256([]byte(key))
			if !bytes.Equal(hash, want[:]) || !bytes.Equal(HashKey(key), want[:]) {
				t.Fatalf("hash of %q is not its SHA-256", key)
			}
			// The display prefix names the mode and shows 4 characters of the secret, no more.
			if display != key[:len("svc_live_")+4] {
				t.Fatalf("display %q for %q", display, key)
			}
			if seen[key] {
				t.Fatalf("key %q generated twice", key)
			}
			seen[key] = true
		}
	}
	if _, _, _, err := GenerateKey("prod"); err == nil {
		t.Fatal("GenerateKey accepted an unknown mode")
	}
	if _, _, _, err := GenerateKey(""); err == nil {
		t.Fatal("GenerateKey accepted an empty mode")
	}
}

// Any single changed character, and any swap of two neighbours, is caught by the checksum.
func TestParseKeyChecksumCatchesTypos(t *testing.T) {
	t.Parallel()
	for range 50 {
		key, _, _, err := GenerateKey(ModeLive)
		if err != nil {
			t.Fatal(err)
		}
		for i := len("svc_live_"); i < len(key); i++ {
			for _, shift := range []int{1, 31, 61} { // a neighbour, a far character, the previous one
				j := (strings.IndexByte(base62, key[i]) + shift) % len(base62)
				typo := key[:i] + string(base62[j]) + key[i+1:]
				if _, err := ParseKey(typo); err == nil {
					t.Fatalf("%q (position %d changed) accepted", typo, i)
				}
			}
			if i+1 < len(key) && key[i] != key[i+1] {
				swapped := key[:i] + string(key[i+1]) + string(key[i]) + key[i+2:]
				if _, err := ParseKey(swapped); err == nil {
					t.Fatalf("%q (positions %d and %d swapped) accepted", swapped, i, i+1)
				}
			}
		}
	}
}

// withChecksum completes s with its valid checksum, so the other rules are tested on their own.
func withChecksum(s string) string { return s + keyChecksum(s) }

func TestParseKeyRejectsMalformed(t *testing.T) {
	t.Parallel()
	key, _, _, err := GenerateKey(ModeTest)
	if err != nil {
		t.Fatal(err)
	}
	body := key[len("svc_test_") : len(key)-6]
	if _, err := ParseKey(withChecksum("svc_test_" + body)); err != nil {
		t.Fatalf("the helper builds invalid keys: %v", err)
	}
	for name, k := range map[string]string{
		"empty":                "",
		"prefix only":          "svc_live_",
		"unknown mode":         withChecksum("svc_prod_" + body),
		"upper-case prefix":    withChecksum("SVC_live_" + body),
		"upper-case mode":      withChecksum("svc_LIVE_" + body),
		"dash separator":       withChecksum("svc-live_" + body),
		"no separator":         withChecksum("svc_livex" + body),
		"other vendor prefix":  withChecksum("sk_live__" + body),
		"body too short":       withChecksum("svc_live_" + body[1:]),
		"body too long":        withChecksum("svc_live_" + body + "a"),
		"underscore in body":   withChecksum("svc_live_" + "_" + body[1:]),
		"dash in body":         withChecksum("svc_live_" + "-" + body[1:]),
		"space in body":        withChecksum("svc_live_" + " " + body[1:]),
		"non-ASCII in body":    withChecksum("svc_live_" + "é" + body[2:]),
		"checksum too short":   key[:len(key)-1],
		"checksum missing":     key[:len(key)-6],
		"extra character":      key + "0",
		"leading space":        " " + key[:len(key)-1],
		"whole key upper-case": strings.ToUpper(key),
	} {
		if mode, err := ParseKey(k); err == nil {
			t.Errorf("%s: %q accepted as %q", name, k, mode)
		}
	}
	// Each valid mode parses.
	for _, mode := range []string{ModeLive, ModeTest, ModeDemo} {
		if got, err := ParseKey(withChecksum("svc_" + mode + "_" + body)); err != nil || got != mode {
			t.Errorf("mode %s: got %q, %v", mode, got, err)
		}
	}
}

func TestKeyChecksumShape(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for _, s := range []string{"", "a", "svc_live_" + strings.Repeat("0", 32), "svc_live_" + strings.Repeat("1", 32)} {
		c := keyChecksum(s)
		if len(c) != 6 || strings.Trim(c, base62) != "" {
			t.Fatalf("checksum %q of %q", c, s)
		}
		if keyChecksum(s) != c {
			t.Fatal("checksum is not deterministic")
		}
		seen[c] = true
	}
	if len(seen) != 4 {
		t.Fatal("distinct inputs share a checksum")
	}
}
