// Package clientaddr says which client a request comes from, for the limits that count per
// client. A forwarding header counts only when the connection comes from a trusted proxy: from
// anyone else it is the client's own claim.
package clientaddr

import (
	"net/http"
	"net/netip"
	"strings"
)

// Key is who a per-client limit counts (the demo key's, the dashboard's sign-in throttle): the
// connection's address, or, when the connection comes from a trusted proxy
// (GATEWAY_TRUSTED_PROXIES), the rightmost address of X-Forwarded-For that is not itself a
// trusted proxy, else X-Real-IP. IPv6 clients are counted per /64 (one subscriber's
// allocation); IPv4 per address. With no trusted proxies it is always the connection's.
func Key(req *http.Request, trusted []netip.Prefix) string {
	addr := remoteAddr(req.RemoteAddr)
	if addr.IsValid() && isTrusted(addr, trusted) {
		if c, ok := forwardedClient(req, trusted); ok {
			addr = c
		}
	}
	if !addr.IsValid() {
		return req.RemoteAddr
	}
	if addr.Is6() {
		p, _ := addr.Prefix(64)
		return p.String()
	}
	return addr.String()
}

func remoteAddr(s string) netip.Addr {
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr().Unmap()
	}
	a, _ := netip.ParseAddr(s)
	return a.Unmap()
}

func isTrusted(a netip.Addr, trusted []netip.Prefix) bool {
	for _, p := range trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// forwardedClient walks X-Forwarded-For (every header line, right to left) past trusted
// proxies; the first untrusted address is the client. A malformed entry stops the walk (what
// is left of it was written by the client). X-Real-IP is used when X-Forwarded-For names no
// untrusted address.
func forwardedClient(req *http.Request, trusted []netip.Prefix) (netip.Addr, bool) {
	var hops []string
	for _, line := range req.Header.Values("X-Forwarded-For") {
		for _, h := range strings.Split(line, ",") {
			hops = append(hops, strings.TrimSpace(h))
		}
	}
	for i := len(hops) - 1; i >= 0; i-- {
		a := remoteAddr(hops[i])
		if !a.IsValid() {
			break
		}
		if !isTrusted(a, trusted) {
			return a, true
		}
	}
	if a := remoteAddr(strings.TrimSpace(req.Header.Get("X-Real-IP"))); a.IsValid() {
		return a, true
	}
	return netip.Addr{}, false
}
