package dashboard

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"gateway/store"
)

type keysData struct {
	Keys    []store.NamedKey
	New     *store.NamedKey
	NewKey  string
	Name    string
	Mode    string
	Confirm *store.NamedKey
}

func (d *Dashboard) keysPage(w http.ResponseWriter, r *http.Request, s *store.Session, status int, k keysData, errMsg string) {
	ks, err := d.cfg.Store.APIKeysByAccount(r.Context(), s.AccountID)
	if err != nil {
		d.serverError(w, r, err)
		return
	}
	k.Keys = ks
	if k.Mode == "" {
		k.Mode = "live"
	}
	d.render(w, r, status, "keys", page{Title: "API keys", Nav: "keys", Session: s, Flash: flash(r), Error: errMsg, Data: k})
}

func (d *Dashboard) keys(w http.ResponseWriter, r *http.Request, s *store.Session) {
	d.keysPage(w, r, s, http.StatusOK, keysData{}, "")
}

func (d *Dashboard) createKey(w http.ResponseWriter, r *http.Request, s *store.Session) {
	name, mode := strings.TrimSpace(r.PostFormValue("name")), r.PostFormValue("mode")
	if name == "" || len(name) > 100 {
		d.keysPage(w, r, s, http.StatusUnprocessableEntity, keysData{Name: name, Mode: mode}, "Enter a key name (up to 100 characters).")
		return
	}
	if mode != "live" && mode != "test" {
		d.keysPage(w, r, s, http.StatusUnprocessableEntity, keysData{Name: name}, "Choose live or test mode.")
		return
	}
	key, hash, prefix, err := d.cfg.NewAPIKey(mode)
	if err != nil {
		d.serverError(w, r, err)
		return
	}
	k, err := d.cfg.Store.CreateNamedAPIKey(r.Context(), s.AccountID, name, mode, hash, prefix, key[len(key)-4:])
	if errors.Is(err, store.ErrLimitReached) {
		d.keysPage(w, r, s, http.StatusUnprocessableEntity, keysData{Name: name, Mode: mode}, fmt.Sprintf(
			"This workspace already has %d active API keys, the most it may have. Revoke one it no longer uses to create another.",
			d.cfg.Store.Limits().ActiveAPIKeys))
		return
	}
	if err != nil {
		d.serverError(w, r, err)
		return
	}
	d.audit(r, s.AccountID, s.UserID, store.AuditKeyCreated, k.Prefix+"…"+k.Last4, name+" ("+mode+")")
	// The key is shown in this response only; it is never stored or shown again.
	d.keysPage(w, r, s, http.StatusOK, keysData{New: &k, NewKey: key}, "")
}

// keyPage is a key's page: its details and the revoke confirmation.
func (d *Dashboard) keyPage(w http.ResponseWriter, r *http.Request, s *store.Session) {
	k, ok := loadByPathID(d, w, r, s, d.cfg.Store.APIKeyByID)
	if !ok {
		return
	}
	d.render(w, r, http.StatusOK, "key", page{Title: "API key " + k.Name, Nav: "keys", Session: s, Data: k})
}

func (d *Dashboard) revokeKey(w http.ResponseWriter, r *http.Request, s *store.Session) {
	k, ok := loadByPathID(d, w, r, s, d.cfg.Store.RevokeAccountAPIKey)
	if !ok {
		return
	}
	d.audit(r, s.AccountID, s.UserID, store.AuditKeyRevoked, k.Prefix+"…"+k.Last4, k.Name+" ("+k.Mode+")")
	redirect(w, r, Prefix+"/keys", "revoked")
}
