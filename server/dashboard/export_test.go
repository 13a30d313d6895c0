package dashboard

import "sync/atomic"

// CountHashes makes every new-password hash of the dashboard count in the returned counter
// until the test ends.
func CountHashes(t interface{ Cleanup(func()) }) *atomic.Int64 {
	var n atomic.Int64
	old := hashPassword
	hashPassword = func(pw string) (string, error) { n.Add(1); return old(pw) }
	t.Cleanup(func() { hashPassword = old })
	return &n
}
