package eventhook

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strings"
)

// ValidateURL checks a URL an account registers: absolute, https (http too when allowPrivate,
// for local development and tests), with a host and no fragment, at most 2048 bytes. Unless
// allowPrivate, a host name the sender refuses (the local host, cloud metadata services) or a
// literal address it refuses (loopback, private, link-local, CGNAT and the other
// special-purpose ranges of guard.go) is refused at once, by the same checks the sender
// applies again at dial time, after DNS. It returns an error saying what is wrong.
func ValidateURL(raw string, allowPrivate bool) error {
	if len(raw) > 2048 {
		return errors.New("URL is longer than 2048 bytes")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("URL does not parse: %v", err)
	}
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && allowPrivate:
	case u.Scheme == "http":
		return errors.New("URL must use https (http is allowed only with GATEWAY_WEBHOOK_ALLOW_PRIVATE=true)")
	default:
		return fmt.Errorf("URL must be an absolute https URL, got scheme %q", u.Scheme)
	}
	host := u.Hostname()
	if host == "" {
		return errors.New("URL has no host")
	}
	if u.Fragment != "" {
		return errors.New("URL must not have a fragment")
	}
	if allowPrivate {
		return nil
	}
	if ip, err := netip.ParseAddr(strings.TrimSuffix(host, ".")); err == nil {
		if err := checkAddr(ip); err != nil {
			return fmt.Errorf("URL host %s is not a public address (allowed only with GATEWAY_WEBHOOK_ALLOW_PRIVATE=true): %w", host, err)
		}
		return nil
	}
	if err := checkHostName(host); err != nil {
		return fmt.Errorf("URL host %q is reserved for the local host or a metadata service (allowed only with GATEWAY_WEBHOOK_ALLOW_PRIVATE=true): %w", host, err)
	}
	return nil
}
