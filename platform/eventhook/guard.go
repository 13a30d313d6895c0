package eventhook

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
)

// ErrForbiddenAddress is wrapped in Result.Err when the destination is, or
// resolves to, an address a webhook must not reach: loopback, private,
// link-local (cloud metadata included), unspecified, multicast, CGNAT and
// other special-purpose ranges, their IPv4-mapped IPv6 forms, or a name
// reserved for the local host or a metadata service. Nothing is dialled then.
var ErrForbiddenAddress = errors.New("webhook: destination address is forbidden")

// forbiddenV4 lists the special-purpose IPv4 ranges (RFC 6890 and successors)
// that a public webhook endpoint never legitimately uses.
var forbiddenV4 = mustPrefixes(
	"0.0.0.0/8",          // "this network", unspecified
	"10.0.0.0/8",         // private
	"100.64.0.0/10",      // shared address space (CGNAT), Alibaba metadata 100.100.100.200
	"127.0.0.0/8",        // loopback
	"169.254.0.0/16",     // link-local, cloud metadata 169.254.169.254
	"172.16.0.0/12",      // private
	"192.0.0.0/24",       // IETF protocol assignments, Oracle metadata 192.0.0.192
	"192.0.2.0/24",       // documentation (TEST-NET-1)
	"192.88.99.0/24",     // 6to4 relay anycast (deprecated)
	"192.168.0.0/16",     // private
	"198.18.0.0/15",      // benchmarking
	"198.51.100.0/24",    // documentation (TEST-NET-2)
	"203.0.113.0/24",     // documentation (TEST-NET-3)
	"224.0.0.0/4",        // multicast
	"240.0.0.0/4",        // reserved, limited broadcast
	"255.255.255.255/32", // limited broadcast (inside 240/4; listed for clarity)
)

// forbiddenV6 lists the special-purpose IPv6 ranges. IPv4-mapped addresses
// (::ffff:0:0/96) are unmapped and checked as IPv4 before this list is used;
// NAT64 and 6to4 addresses have their embedded IPv4 address checked too.
var forbiddenV6 = mustPrefixes(
	"::/96",          // unspecified, loopback, deprecated IPv4-compatible
	"64:ff9b:1::/48", // local-use NAT64
	"100::/64",       // discard-only
	"2001::/32",      // Teredo
	"2001:db8::/32",  // documentation
	"fc00::/7",       // unique local (private), AWS metadata fd00:ec2::254
	"fe80::/10",      // link-local
	"fec0::/10",      // site-local (deprecated)
	"ff00::/8",       // multicast
)

var (
	nat64Prefix = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour   = netip.MustParsePrefix("2002::/16")
)

// forbiddenNames are host names that reach the local host or a cloud metadata
// service without necessarily resolving to a forbidden address in our DNS.
var forbiddenNames = map[string]bool{
	"localhost":                  true,
	"metadata":                   true,
	"metadata.google.internal":   true,
	"metadata.goog":              true,
	"instance-data":              true,
	"instance-data.ec2.internal": true,
}

func mustPrefixes(ss ...string) []netip.Prefix {
	ps := make([]netip.Prefix, len(ss))
	for i, s := range ss {
		ps[i] = netip.MustParsePrefix(s)
	}
	return ps
}

// checkAddr returns nil when ip may be dialled for a webhook, or an error
// wrapping ErrForbiddenAddress that says why not.
func checkAddr(ip netip.Addr) error {
	if !ip.IsValid() {
		return fmt.Errorf("%w: invalid address", ErrForbiddenAddress)
	}
	if ip.Zone() != "" {
		return fmt.Errorf("%w: %s has a zone", ErrForbiddenAddress, ip)
	}
	orig := ip
	ip = ip.Unmap()
	if ip.Is6() {
		if nat64Prefix.Contains(ip) || sixToFour.Contains(ip) {
			if err := checkEmbeddedV4(orig, ip); err != nil {
				return err
			}
		}
	}
	if ip.IsLoopback() || ip.IsPrivate() || ip.IsUnspecified() ||
		ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() ||
		ip.IsInterfaceLocalMulticast() || ip.IsMulticast() {
		return fmt.Errorf("%w: %s is not a public unicast address", ErrForbiddenAddress, orig)
	}
	list := forbiddenV6
	if ip.Is4() {
		list = forbiddenV4
	}
	for _, p := range list {
		if p.Contains(ip) {
			return fmt.Errorf("%w: %s is in special-purpose range %s", ErrForbiddenAddress, orig, p)
		}
	}
	return nil
}

// checkEmbeddedV4 checks the IPv4 address carried by a NAT64 (64:ff9b::/96,
// last 32 bits) or 6to4 (2002::/16, bits 16..47) address.
func checkEmbeddedV4(orig, ip netip.Addr) error {
	b := ip.As16()
	var v4 [4]byte
	if nat64Prefix.Contains(ip) {
		copy(v4[:], b[12:16])
	} else {
		copy(v4[:], b[2:6])
	}
	if err := checkAddr(netip.AddrFrom4(v4)); err != nil {
		return fmt.Errorf("%w: %s embeds %s", ErrForbiddenAddress, orig, netip.AddrFrom4(v4))
	}
	return nil
}

// checkHostName refuses names of the local host and of metadata services. It
// is applied before DNS; the resolved addresses are checked with checkAddr.
func checkHostName(host string) error {
	h := strings.ToLower(strings.TrimSuffix(host, "."))
	if forbiddenNames[h] || strings.HasSuffix(h, ".localhost") {
		return fmt.Errorf("%w: host name %q is reserved", ErrForbiddenAddress, host)
	}
	return nil
}
