package simulator

import (
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"strconv"
	"strings"
	"time"
)

// Handsets: the users who write to the business. Since April 2026 the platform names each user
// to a business by a business-scoped user id (BSUID) besides, or instead of, their number; the
// simulator gives every handset one, remembers who it is, and keeps each handset's
// customer-service window per business number.

// Service windows: non-template sends are allowed for 24 h after the user's last message, and
// for 72 h after a message that came from a click-to-WhatsApp ad (it carries a referral).
const (
	ServiceWindow    = 24 * time.Hour
	EntryPointWindow = 72 * time.Hour
)

// Handset is what the simulator knows about a user who wrote to a business.
type Handset struct {
	WaID         string `json:"wa_id,omitempty"` // "" for a username-only user who never shared a number
	UserID       string `json:"user_id"`
	ParentUserID string `json:"parent_user_id,omitempty"`
	Username     string `json:"username,omitempty"`
	Name         string `json:"name,omitempty"`
}

// userIDCountries maps calling codes to the country a generated user id starts with.
var userIDCountries = []struct{ prefix, country string }{
	{"1", "US"}, {"52", "MX"}, {"55", "BR"}, {"54", "AR"}, {"44", "GB"}, {"49", "DE"}, {"34", "ES"}, {"91", "IN"}, {"62", "ID"},
}

// UserIDFor returns the business-scoped user id the simulator gives the user with this wa_id
// (digits) until they change number or id: the country of the calling code ("US" when unknown),
// ".", and 20 digits derived from the number. It never fails.
func UserIDFor(waID string) string {
	return deriveUserID(countryOf(waID), "wa:"+waID)
}

func countryOf(waID string) string {
	for _, c := range userIDCountries {
		if strings.HasPrefix(waID, c.prefix) {
			return c.country
		}
	}
	return "US"
}

// deriveUserID makes a user id of a country and 20 digits from seed.
func deriveUserID(country, seed string) string {
	sum := sha256.Sum256([]byte("simulator-bsuid:" + seed))
	n := binary.BigEndian.Uint64(sum[:8])%9_000_000_000_000_000_000 + 1_000_000_000_000_000_000
	return country + "." + strconv.FormatUint(n, 10)
}

// isUserID reports whether s has the shape of a business-scoped user id:
// CC.[ENT.]alphanumerics (1 to 128).
func isUserID(s string) bool {
	if len(s) < 4 || s[0] < 'A' || s[0] > 'Z' || s[1] < 'A' || s[1] > 'Z' || s[2] != '.' {
		return false
	}
	rest := s[3:]
	if strings.HasPrefix(rest, "ENT.") && len(rest) > 4 {
		rest = rest[4:]
	}
	if len(rest) == 0 || len(rest) > 128 {
		return false
	}
	for _, c := range []byte(rest) {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

// handsetByWaID returns the handset with that wa_id, creating it (with its derived user id)
// when new. The caller holds s.mu.
func (s *Simulator) handsetByWaID(waID string) *Handset {
	if h := s.byWaID[waID]; h != nil {
		return h
	}
	h := &Handset{WaID: waID, UserID: UserIDFor(waID)}
	if old := s.byUserID[h.UserID]; old != nil { // an id given before to a username-only sender
		old.WaID = waID
		h = old
	}
	s.byWaID[waID] = h
	s.byUserID[h.UserID] = h
	return h
}

// handsetByUserID returns the handset with that user id, creating a username-only one when
// new. The caller holds s.mu.
func (s *Simulator) handsetByUserID(userID string) *Handset {
	if h := s.byUserID[userID]; h != nil {
		return h
	}
	h := &Handset{UserID: userID}
	s.byUserID[userID] = h
	return h
}

// relink gives a handset a new wa_id and/or user id, moving its windows. The caller holds s.mu.
func (s *Simulator) relink(h *Handset, newWaID, newUserID string) {
	if newWaID != "" && newWaID != h.WaID {
		delete(s.byWaID, h.WaID)
		h.WaID = newWaID
		s.byWaID[newWaID] = h
	}
	if newUserID != "" && newUserID != h.UserID {
		for key, w := range s.windows {
			if phoneID, uid, ok := strings.Cut(key, "|"); ok && uid == h.UserID {
				delete(s.windows, key)
				to := phoneID + "|" + newUserID
				if had := s.windows[to]; had.closes.After(w.closes) { // the id was known already: keep the later window
					w.closes = had.closes
				}
				if had := s.windows[to]; had.freeBefore.After(w.freeBefore) {
					w.freeBefore = had.freeBefore
				}
				if had := s.windows[to]; had.last.After(w.last) {
					w.last = had.last
				}
				s.windows[to] = w
			}
		}
		if known := s.byUserID[newUserID]; known != nil && known != h { // the same person, met by user id first
			h.ParentUserID = cmp.Or(h.ParentUserID, known.ParentUserID)
			h.Username = cmp.Or(h.Username, known.Username)
			h.Name = cmp.Or(h.Name, known.Name)
		}
		delete(s.byUserID, h.UserID)
		h.UserID = newUserID
		s.byUserID[newUserID] = h
	}
}

// window is a handset's customer-service window with one business number.
type window struct {
	last       time.Time // the handset's last inbound message to the number
	closes     time.Time // non-template sends are allowed before this
	freeBefore time.Time // a free entry point (after an ad) lasts until this
}

// WindowState is a handset's customer-service window with one business number.
type WindowState struct {
	LastInbound    time.Time `json:"last_inbound_at"`           // the handset's last message to the number
	Closes         time.Time `json:"closes_at"`                 // non-template sends are allowed before this
	FreeEntryUntil time.Time `json:"free_entry_until,omitzero"` // after an ad's message: free replies until this
	Open           bool      `json:"open"`                      // at the simulator's clock
}

// openWindow records an inbound message of the handset at now; entryPoint says it came from a
// click-to-WhatsApp ad. The caller holds s.mu.
func (s *Simulator) openWindow(phoneID string, h *Handset, now time.Time, entryPoint bool) {
	key := phoneID + "|" + h.UserID
	w := s.windows[key]
	w.last = now
	d := ServiceWindow
	if entryPoint {
		d = EntryPointWindow
		w.freeBefore = now.Add(d)
	}
	if until := now.Add(d); until.After(w.closes) {
		w.closes = until
	}
	s.windows[key] = w
}

// windowAt returns whether a non-template send from phoneID to the handset is allowed at now,
// and whether it falls in a free entry point. The caller holds s.mu.
func (s *Simulator) windowAt(phoneID string, h *Handset, now time.Time) (open, free bool) {
	if h == nil {
		return false, false
	}
	w := s.windows[phoneID+"|"+h.UserID]
	return now.Before(w.closes), now.Before(w.freeBefore)
}

// Handsets returns the known handsets, in no particular order.
func (s *Simulator) Handsets() []Handset {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Handset, 0, len(s.byUserID))
	for _, h := range s.byUserID {
		out = append(out, *h)
	}
	return out
}

// Window returns the service window between the business number and the user (a number, or a
// user id); ok is false when the user never wrote to that number.
func (s *Simulator) Window(phoneNumberID, user string) (state WindowState, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	h := s.lookupHandset(user)
	if h == nil {
		return WindowState{}, false
	}
	w, ok := s.windows[phoneNumberID+"|"+h.UserID]
	if !ok {
		return WindowState{}, false
	}
	return WindowState{LastInbound: w.last, Closes: w.closes, FreeEntryUntil: w.freeBefore, Open: s.clock().Before(w.closes)}, true
}

// lookupHandset finds a handset by user id or by number (any form). The caller holds s.mu.
func (s *Simulator) lookupHandset(user string) *Handset {
	if isUserID(user) {
		return s.byUserID[user]
	}
	return s.byWaID[WaIDFor(onlyDigits(user))]
}
