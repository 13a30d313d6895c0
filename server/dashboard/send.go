package dashboard

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"gateway/store"
)

// PanelSend is a send from the dashboard's form.
type PanelSend struct {
	TemplateID      int64
	Destination     string
	Name            string // the contact's name when the number is new
	CampaignName    string // "" groups it under the standing API campaign
	BodyVariables   []string
	HeaderVariables []string
	IdempotencyKey  string // made when the form was shown: a double submit sends once
}

// PanelSent is what a panel send did.
type PanelSent struct {
	MessageID int64 `json:"message_id"`
	Replayed  bool  `json:"-"` // the form had been submitted before; nothing was sent again
}

// SendRefused is a send the API's rules refused (Status as the API answers it, Message its text).
type SendRefused struct {
	Status  int
	Message string
}

func (e *SendRefused) Error() string { return e.Message }

// Sender sends from the panel through the API's send path (implemented by server.Server).
type Sender interface {
	SendFromPanel(ctx context.Context, accountID int64, in PanelSend) (PanelSent, error)
}

type sendData struct {
	Templates                        []store.Template
	Template                         *store.Template
	Body                             string // the template's body text
	Preview                          string // the body with the variables filled in
	Unsupported                      string // why this template cannot be sent from the panel ("" when it can)
	Destination, Name, Campaign, Key string
	BodyVars, HeaderVars             []string
}

// sendForm is the panel's send page: choose an approved template, fill its variables, see the
// rendered preview, send.
func (d *Dashboard) sendForm(w http.ResponseWriter, r *http.Request, s *store.Session) {
	d.sendPage(w, r, s, http.StatusOK, "")
}

func (d *Dashboard) sendPage(w http.ResponseWriter, r *http.Request, s *store.Session, status int, errMsg string) {
	ctx := r.Context()
	ts, err := d.cfg.Store.ApprovedTemplates(ctx, s.AccountID, 200)
	if err != nil {
		d.serverError(w, r, err)
		return
	}
	v := r.Form
	if v == nil {
		r.ParseForm()
		v = r.Form
	}
	data := sendData{Templates: ts, Destination: v.Get("destination"), Name: v.Get("name"), Campaign: v.Get("campaign"),
		Key: v.Get("key")}
	if data.Key == "" {
		var b [16]byte
		rand.Read(b[:])
		data.Key = hex.EncodeToString(b[:])
	}
	id, _ := strconv.ParseInt(v.Get("template"), 10, 64)
	for i := range ts {
		if ts[i].ID == id {
			data.Template = &ts[i]
		}
	}
	if t := data.Template; t != nil {
		data.Body = bodyText(t.Components)
		data.BodyVars = fill(v["body"], t.BodyParams)
		if t.HeaderFormat == "" || t.HeaderFormat == "TEXT" {
			data.HeaderVars = fill(v["header"], t.HeaderParams)
		}
		if (t.HeaderFormat != "" && t.HeaderFormat != "TEXT") || len(t.Buttons) > 0 || t.ParameterFormat == "NAMED" {
			data.Unsupported = "This template has a media or location header, buttons or named variables, which the panel cannot fill yet; send it through the API."
		}
		data.Preview = data.Body
		for i, val := range data.BodyVars {
			if val != "" {
				data.Preview = strings.ReplaceAll(data.Preview, "{{"+strconv.Itoa(i+1)+"}}", val)
			}
		}
	}
	d.render(w, r, status, "send", page{Title: "Send a message", Nav: "send", Session: s, Error: errMsg, Data: data})
}

// fill is vs padded or cut to n values.
func fill(vs []string, n int) []string {
	out := make([]string, n)
	copy(out, vs)
	return out
}

// bodyText is the BODY component's text of a template's components.
func bodyText(components []byte) string {
	var cs []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	json.Unmarshal(components, &cs)
	for _, c := range cs {
		if strings.EqualFold(c.Type, "BODY") {
			return c.Text
		}
	}
	return ""
}

// send sends the form through the API's send path (Sender); the message's page follows.
func (d *Dashboard) send(w http.ResponseWriter, r *http.Request, s *store.Session) {
	if d.cfg.Sender == nil {
		d.sendPage(w, r, s, http.StatusServiceUnavailable, "Sending from the panel is not configured on this server.")
		return
	}
	r.ParseForm()
	id, _ := strconv.ParseInt(r.PostFormValue("template"), 10, 64)
	in := PanelSend{TemplateID: id, Destination: strings.TrimSpace(r.PostFormValue("destination")),
		Name: strings.TrimSpace(r.PostFormValue("name")), CampaignName: strings.TrimSpace(r.PostFormValue("campaign")),
		BodyVariables: r.PostForm["body"], HeaderVariables: r.PostForm["header"], IdempotencyKey: r.PostFormValue("key")}
	sent, err := d.cfg.Sender.SendFromPanel(r.Context(), s.AccountID, in)
	var refused *SendRefused
	if errors.As(err, &refused) {
		d.sendPage(w, r, s, refused.Status, refused.Message)
		return
	} else if err != nil {
		d.serverError(w, r, err)
		return
	}
	notice := "sent"
	if sent.Replayed {
		notice = "sent-before"
	}
	redirect(w, r, Prefix+"/messages/"+strconv.FormatInt(sent.MessageID, 10), notice)
}
