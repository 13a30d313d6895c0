package dashboard

import (
	"strings"
	"testing"
)

// Passwords are stored as argon2id with OWASP's parameters and a fresh salt each time; the
// right password checks, a wrong one and a malformed hash do not.
func TestPasswordHashIsArgon2id(t *testing.T) {
	a, err := HashPassword("correct horse battery")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := HashPassword("correct horse battery")
	if !strings.HasPrefix(a, "$argon2id$v=19$m=19456,t=2,p=1$") || a == b {
		t.Fatalf("hashes %q and %q", a, b)
	}
	if !CheckPassword(a, "correct horse battery") || CheckPassword(a, "correct horse batterY") || CheckPassword("$argon2id$v=19$bad", "x") {
		t.Fatal("CheckPassword")
	}
}

// A new password has 10 to 256 characters (bytes); nothing else is required of it.
func TestNewPasswordLength(t *testing.T) {
	for pw, ok := range map[string]bool{
		strings.Repeat("a", MinPasswordLen-1): false,
		strings.Repeat("a", MinPasswordLen):   true,
		strings.Repeat("é", 64):               true,
		"password with spaces ✓":              true,
		strings.Repeat("a", MaxPasswordLen):   true,
		strings.Repeat("a", MaxPasswordLen+1): false,
	} {
		if err := CheckNewPassword(pw); (err == nil) != ok {
			t.Errorf("%d bytes: %v", len(pw), err)
		}
	}
}
