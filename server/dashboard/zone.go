package dashboard

import (
	"html/template"
	"net/http"
	"net/url"
	"sync"
	"time"
)

// The viewer's time zone. The page script stores the browser's IANA zone name (from
// Intl.DateTimeFormat) in the "tz" cookie; every page renders its times in that zone, with the
// UTC value in the <time> element's datetime and title. Until the cookie exists, or when it does
// not name a zone, times are in UTC.

// zoneCookie is the cookie the page script sets.
const zoneCookie = "tz"

// zones caches the locations loaded for cookie values (only valid IANA names are stored, so it
// holds at most the zone database's few hundred entries).
var zones sync.Map // string → *time.Location

// viewerZone returns the zone the request's tz cookie names, or UTC.
func viewerZone(r *http.Request) *time.Location {
	c, err := r.Cookie(zoneCookie)
	if err != nil {
		return time.UTC
	}
	name, err := url.PathUnescape(c.Value) // the script stores it with encodeURIComponent
	if err != nil {
		return time.UTC
	}
	return zoneNamed(name)
}

// zoneNamed loads an IANA zone name such as "America/Sao_Paulo"; anything else (too long, odd
// characters, "Local", a name the zone database lacks) is UTC.
func zoneNamed(name string) *time.Location {
	if name == "" || len(name) > 64 || name == "Local" {
		return time.UTC
	}
	for _, c := range name {
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '/' || c == '_' || c == '-' || c == '+') {
			return time.UTC
		}
	}
	if l, ok := zones.Load(name); ok {
		return l.(*time.Location)
	}
	l, err := time.LoadLocation(name)
	if err != nil {
		return time.UTC
	}
	zones.Store(name, l)
	return l
}

// zoneName is how a page names the zone its times are in.
func zoneName(l *time.Location) string {
	if l == nil || l == time.UTC {
		return "UTC"
	}
	return l.String()
}

// Time renders t as a <time> element: the time in the viewer's zone, with the UTC value as its
// datetime and as the title shown on hover. A zero or nil time is "—".
func (p page) Time(t any) template.HTML {
	var v time.Time
	switch x := t.(type) {
	case time.Time:
		v = x
	case *time.Time:
		if x != nil {
			v = *x
		}
	default:
		return template.HTML(template.HTMLEscaper(t))
	}
	if v.IsZero() {
		return "—"
	}
	loc := p.Zone
	if loc == nil {
		loc = time.UTC
	}
	utc := v.UTC()
	local := v.In(loc).Format("2006-01-02 15:04:05 MST")
	if loc == time.UTC {
		local = utc.Format("2006-01-02 15:04:05 UTC")
	}
	return template.HTML(`<time datetime="` + utc.Format(time.RFC3339) + `" title="` + utc.Format("2006-01-02 15:04:05 UTC") + `">` +
		template.HTMLEscapeString(local) + `</time>`)
}

// ZoneName names the zone the page's times are in ("UTC" or an IANA name).
func (p page) ZoneName() string { return zoneName(p.Zone) }
