package bench

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"gateway/platform/whatsapp"
	"gateway/server/domain"
	"gateway/store"
	"gateway/store/benchfloor"
)

// The floor server (`gateway bench floor-serve`) is the benchmark reference: a minimal
// handler per hot path that does the same database writes and the same platform call as the
// gateway, without our stack (no Echo, no OpenAPI validation, no strict server, no
// middleware, no request log). Its SQL is in store/benchfloor: prepared statements and one
// CTE per write, the fastest shape measured on this stack.
//
//   - POST /v1/messages/template: Bearer key → one prepared hash lookup; JSON body checked
//     against the template loaded at startup; one CTE (contact, conversation, message
//     'pending', contact.created); the platform call (whatsapp.Client, a kept-alive transport
//     tuned for many concurrent calls); one CTE (wamid + 'sent', message.sent), run with
//     context.WithoutCancel so a client that gives up cannot leave the row half-recorded.
//   - POST /platform/webhook: X-Hub-Signature-256 verified; body parsed with encoding/json;
//     one CTE per status (tenant by phone_number_id, rank-guarded UPDATE, history,
//     message.status).
//   - GET /v1/messages/{id}: Bearer key → one prepared hash lookup; one SELECT by (id, account).
//
// It serves the account benchAccountEmail that `gateway bench` seeds.

// serveFloor runs the floor server until ctx ends.
func serveFloor(ctx context.Context, cfg Config, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("gateway bench floor-serve", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:8090", "listen address (loopback)")
	email := fs.String("account-email", benchAccountEmail, "the seeded bench account")
	if err := fs.Parse(args); err != nil {
		return err
	}
	logger := slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: cfg.LogLevel}))
	db, err := store.Open(ctx, cfg.DatabaseURL, cfg.DBPool)
	if err != nil {
		return err
	}
	defer db.Close()
	st, err := store.New(db, cfg.SecretKey)
	if err != nil {
		return err
	}
	defer st.Close()
	fl := benchfloor.New(st)
	defer fl.Close()
	acct, err := fl.Setup(ctx, *email, benchTemplate.Name, benchTemplate.Language)
	if err != nil {
		return fmt.Errorf("floor: load the bench account %s (seed it with gateway bench): %w", *email, err)
	}
	wa := whatsapp.NewClient(cfg.PlatformBaseURL, nil)
	wa.SetTimeout(cfg.PlatformTimeout)
	f := &floor{store: fl, wa: wa, acct: acct, appSecret: []byte(cfg.PlatformAppSecret), log: logger}

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	hs := &http.Server{Handler: f.handler(), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 120 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	fmt.Fprintf(stdout, "bench floor serving on http://%s (account %d)\n", ln.Addr(), acct.AccountID)
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// floor holds the floor server's state; everything but the database is loaded at startup.
type floor struct {
	store     *benchfloor.Floor
	wa        *whatsapp.Client
	acct      benchfloor.Account
	appSecret []byte
	log       *slog.Logger
}

func (f *floor) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/messages/template", f.send)
	mux.HandleFunc("GET /v1/messages/{id}", f.poll)
	mux.HandleFunc("POST /platform/webhook", f.status)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) { floorJSON(w, http.StatusOK, "OK", nil) })
	return mux
}

// floorJSON writes the envelope {success, message, data?}.
func floorJSON(w http.ResponseWriter, status int, message string, data any) {
	body := struct {
		Success bool   `json:"success"`
		Message string `json:"message"`
		Data    any    `json:"data,omitempty"`
	}{status < 300, message, data}
	b, _ := json.Marshal(body)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b)
}

// authenticate returns the account of the request's Bearer key (one prepared lookup), or
// answers 401 and returns false.
func (f *floor) authenticate(w http.ResponseWriter, r *http.Request) (int64, bool) {
	key, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if ok {
		id, err := f.store.AccountByKeyHash(r.Context(), domain.HashKey(key))
		if err == nil {
			return id, true
		}
		if !errors.Is(err, store.ErrNotFound) {
			f.fail(w, r, err)
			return 0, false
		}
	}
	floorJSON(w, http.StatusUnauthorized, "Invalid API key", nil)
	return 0, false
}

func (f *floor) fail(w http.ResponseWriter, r *http.Request, err error) {
	f.log.Error("floor request failed", "path", r.URL.Path, "error", err.Error())
	floorJSON(w, http.StatusInternalServerError, "Internal error", nil)
}

// floorSendRequest is the part of the send body the floor reads.
type floorSendRequest struct {
	Destination   string   `json:"destination"`
	TemplateName  string   `json:"template_name"`
	Language      string   `json:"language"`
	Name          string   `json:"name"`
	BodyVariables []string `json:"body_variables"`
}

func (f *floor) send(w http.ResponseWriter, r *http.Request) {
	accountID, ok := f.authenticate(w, r)
	if !ok {
		return
	}
	var req floorSendRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&req); err != nil {
		floorJSON(w, http.StatusUnprocessableEntity, "Invalid JSON", nil)
		return
	}
	if !digitsBetween(req.Destination, 8, 15) {
		floorJSON(w, http.StatusUnprocessableEntity, "Invalid destination", nil)
		return
	}
	a := f.acct
	if accountID != a.AccountID || req.TemplateName != a.Template || (req.Language != "" && req.Language != a.Language) {
		floorJSON(w, http.StatusNotFound, "Template not found", nil)
		return
	}
	if len(req.BodyVariables) != a.BodyParams {
		floorJSON(w, http.StatusUnprocessableEntity, "Variable count mismatch", nil)
		return
	}
	content, _ := json.Marshal(map[string]any{"language": a.Language, "body_variables": req.BodyVariables})
	rec, err := f.store.Send(r.Context(), benchfloor.SendInput{
		AccountID: accountID, Mobile: req.Destination, Name: req.Name, CampaignID: a.CampaignID,
		TemplateID: a.TemplateID, TemplateName: a.Template, Content: content,
	})
	if err != nil {
		f.fail(w, r, err)
		return
	}
	if rec.Blocked {
		floorJSON(w, http.StatusConflict, "Contact is blocked", nil)
		return
	}
	// The message row is committed: finish the platform call and its record even if the
	// client goes away.
	ctx := context.WithoutCancel(r.Context())
	res, err := f.wa.SendTemplate(ctx, a.Connection.AccessToken, a.Connection.PhoneNumberID, whatsapp.TemplateSend{
		To: req.Destination, Name: a.Template, Language: a.Language, BodyParams: req.BodyVariables,
	})
	if err != nil {
		f.log.Error("floor platform call failed", "error", err.Error())
		floorJSON(w, http.StatusBadGateway, "Platform error", nil)
		return
	}
	if err := f.store.RecordSent(ctx, accountID, rec.MessageID, res.MessageID); err != nil {
		f.fail(w, r, err)
		return
	}
	floorJSON(w, http.StatusOK, "Message sent", map[string]any{
		"message_id": rec.MessageID, "chat_message_id": res.MessageID, "campaign_id": a.CampaignID,
		"conversation_id": rec.ConversationID, "contact_id": rec.ContactID, "contact_created": rec.ContactCreated,
		"status": "sent",
	})
}

// floorWebhook is the part of a platform webhook the floor reads.
type floorWebhook struct {
	Entry []struct {
		Changes []struct {
			Field string `json:"field"`
			Value struct {
				Metadata struct {
					PhoneNumberID string `json:"phone_number_id"`
				} `json:"metadata"`
				Statuses []struct {
					ID        string `json:"id"`
					Status    string `json:"status"`
					Timestamp string `json:"timestamp"`
				} `json:"statuses"`
			} `json:"value"`
		} `json:"changes"`
	} `json:"entry"`
}

func (f *floor) status(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<20))
	if err != nil {
		floorJSON(w, http.StatusRequestEntityTooLarge, "Too large", nil)
		return
	}
	if !whatsapp.VerifySignature(f.appSecret, body, r.Header.Get(whatsapp.SignatureHeaderName)) {
		floorJSON(w, http.StatusUnauthorized, "Invalid signature", nil)
		return
	}
	var hook floorWebhook
	if err := json.Unmarshal(body, &hook); err != nil {
		floorJSON(w, http.StatusBadRequest, "Invalid JSON", nil)
		return
	}
	for _, e := range hook.Entry {
		for _, c := range e.Changes {
			for _, s := range c.Value.Statuses {
				rank := store.StatusRank(s.Status)
				if c.Field != "messages" || rank < 1 {
					continue
				}
				at := time.Now()
				if sec, err := strconv.ParseInt(s.Timestamp, 10, 64); err == nil {
					at = time.Unix(sec, 0)
				}
				if _, err := f.store.Status(r.Context(), c.Value.Metadata.PhoneNumberID, s.ID, s.Status, rank, at); err != nil {
					f.fail(w, r, err)
					return
				}
			}
		}
	}
	w.WriteHeader(http.StatusOK)
}

func (f *floor) poll(w http.ResponseWriter, r *http.Request) {
	accountID, ok := f.authenticate(w, r)
	if !ok {
		return
	}
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id < 1 {
		floorJSON(w, http.StatusUnprocessableEntity, "Invalid id", nil)
		return
	}
	m, err := f.store.Message(r.Context(), accountID, id)
	if errors.Is(err, store.ErrNotFound) {
		floorJSON(w, http.StatusNotFound, "Message not found", nil)
		return
	}
	if err != nil {
		f.fail(w, r, err)
		return
	}
	data := map[string]any{"message_id": m.ID, "chat_message_id": m.Wamid, "status": m.Status, "history": m.History}
	if m.SentAt.Valid {
		data["sent_at"] = m.SentAt.Time.UTC().Format(time.RFC3339)
	} else {
		data["sent_at"] = m.CreatedAt.UTC().Format(time.RFC3339)
	}
	if m.ErrorCode.Valid {
		data["error"] = map[string]any{"code": m.ErrorCode.Int64, "title": m.ErrorTitle.String, "details": m.ErrorDetails.String}
	}
	floorJSON(w, http.StatusOK, "OK", data)
}

// digitsBetween reports whether s is only ASCII digits, min to max of them.
func digitsBetween(s string, min, max int) bool {
	if len(s) < min || len(s) > max {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
