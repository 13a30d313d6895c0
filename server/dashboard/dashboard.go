// Package dashboard is the business's web console under /dashboard: sign-up and sign-in,
// the workspace overview and its WhatsApp connection, API keys, webhooks, the request log and
// the audit log. Pages are rendered on the server with html/template from one layout; the
// templates, the stylesheet and the two little scripts (dashboard.js: copy buttons, the Embedded
// Signup launcher; live.js: statuses that follow the platform's reports) are embedded and served from our own origin under a strict Content-Security-Policy.
//
// The account of every query comes from the session's membership, never from a URL or form;
// an id that belongs to another account is a 404, as in the API.
package dashboard

import (
	"bytes"
	"cmp"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"gateway/server/clientaddr"
	"gateway/server/domain"
	"gateway/store"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Prefix is where the dashboard is mounted.
const Prefix = "/dashboard"

// Connector connects a workspace's WhatsApp number (implemented by server/onboarding).
type Connector interface {
	// ConnectWithCode runs Embedded Signup's server steps (exchange code, read number, subscribe app, register, store sealed, sync templates). Its error text names the failed step and the platform's reason.
	ConnectWithCode(ctx context.Context, accountID int64, code, wabaID, phoneNumberID string) (store.Connection, error)
	// ConnectWithToken validates a system-user token against the platform and stores the connection.
	ConnectWithToken(ctx context.Context, accountID int64, wabaID, phoneNumberID, token string) (store.Connection, error)
}

// Options are the dashboard's settings (from the environment, through server.Options).
type Options struct {
	// Development names the session cookie "session" without Secure, so that it works over
	// plain http on a developer's machine; otherwise it is "__Host-session", Secure.
	Development bool
	// SignupOpen lets anyone create a workspace (GATEWAY_SIGNUP=open); when false, new users
	// join only through an invitation or `gateway admin user create`.
	SignupOpen bool
	// BaseURL is the API's public base URL shown in the first-request snippet; empty means
	// the scheme and host of the request.
	BaseURL string
	// WebhookAllowPrivate allows http and private addresses for endpoint URLs
	// (GATEWAY_WEBHOOK_ALLOW_PRIVATE).
	WebhookAllowPrivate bool
	// PlatformAppID, PlatformESConfigID and PlatformSDKURL configure Embedded Signup
	// (PLATFORM_APP_ID, PLATFORM_ES_CONFIG_ID, PLATFORM_SDK_URL).
	PlatformAppID      string
	PlatformESConfigID string
	PlatformSDKURL     string
	// ExportsPerWorkspace is how many CSV downloads a workspace may run at once in this
	// process (GATEWAY_EXPORTS_PER_WORKSPACE); 0 means DefaultExportsPerWorkspace.
	ExportsPerWorkspace int
	// ExportStallTimeout is how long a download's client may take to accept one chunk of the
	// file before the download is cut (GATEWAY_EXPORT_STALL_TIMEOUT); 0 means
	// DefaultExportStallTimeout.
	ExportStallTimeout time.Duration
	// PollsForDeliveries says the webhook dispatchers find new deliveries by polling, as the
	// gateway has no direct database connection to LISTEN on; the webhooks page says which
	// wake-up is in use.
	PollsForDeliveries bool
}

// Config is what New needs: the options and the collaborators the server wires in.
type Config struct {
	Options
	Store *store.Store
	// Connector connects numbers; nil shows "not configured" in place of the connect forms.
	Connector Connector
	// SandboxPhoneNumber is the shared test-mode number handsets join through.
	SandboxPhoneNumber string
	// NewAPIKey makes a key of the mode: the key, its SHA-256 hash and a display prefix.
	NewAPIKey func(mode string) (key string, hash []byte, prefix string, err error)
	// ValidateWebhookURL checks an endpoint URL as the admin command does.
	ValidateWebhookURL func(raw string, allowPrivate bool) error
	// EventBody renders the raw JSON body delivered for an event.
	EventBody func(store.Event) []byte
	// Syncer pulls a workspace's templates from the platform ("Sync now"); nil disables it.
	Syncer TemplateSyncer
	// Sender sends from the form through the API's send path; nil: the send page says it is
	// not configured.
	Sender domain.Sender
	// Answerer answers from a contact's page through the API's answer path; nil: the page
	// says answering is not configured.
	Answerer domain.Answerer
	// Media streams inbound media and uploads attachments for the inbox (domain.Media); nil:
	// the thread shows media by name only and offers links, not uploads.
	Media PanelMedia
	// MarkRead sends the read receipt of a received message when a teammate opens its thread;
	// nil: none is sent.
	MarkRead func(ctx context.Context, accountID, messageID int64) error
	// Broadcasts starts and changes broadcasts through the API's operations; nil: the
	// broadcast pages say it is not configured.
	Broadcasts *domain.BroadcastPanel
	// ClientAddr is the client's address for the sign-in throttle; nil means the
	// connection's address (clientaddr.Key with no trusted proxy).
	ClientAddr func(*http.Request) string
	Logger     *slog.Logger
	Clock      func() time.Time
}

// Session lifetimes (domain.SessionIdle, domain.SessionAbsolute): a session unused for
// SessionIdle, or older than SessionAbsolute, is over.
const (
	SessionIdle     = domain.SessionIdle
	SessionAbsolute = domain.SessionAbsolute
	// RotationOverlap is how long a replaced webhook secret keeps signing.
	RotationOverlap = 24 * time.Hour
)

// Dashboard is the console's HTTP handler.
type Dashboard struct {
	cfg     Config
	pages   map[string]*template.Template
	handler http.Handler
	log     *slog.Logger
	// csp is every page's Content-Security-Policy; connectCSP, the connect page's, also allows
	// the Embedded Signup SDK's origins.
	csp, connectCSP string
	// exports counts the running CSV downloads; exportStall is ExportStallTimeout or its default.
	exports     *exportSlots
	exportStall time.Duration
	// uploads are the route patterns that take a file and bound their own bodies; every other
	// request's body is bounded by formBodyLimit (bodies.go).
	uploads map[string]bool
	// live feeds the inbox's live streams (inbox_hub.go); the process runs it (LiveInbox).
	live *InboxHub
}

// New parses the templates and builds the routes; it fails when a template does not parse
// or a function collaborator is missing. (A nil Store is accepted, as by server.New: every
// page then fails.)
func New(cfg Config) (*Dashboard, error) {
	if cfg.NewAPIKey == nil || cfg.ValidateWebhookURL == nil || cfg.EventBody == nil {
		return nil, errors.New("dashboard: NewAPIKey, ValidateWebhookURL and EventBody are required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	if cfg.ClientAddr == nil {
		cfg.ClientAddr = func(r *http.Request) string { return clientaddr.Key(r, nil) }
	}
	d := &Dashboard{cfg: cfg, log: cfg.Logger.With("component", "dashboard"),
		exports:     &exportSlots{running: map[int64]int{}, max: cmp.Or(max(cfg.ExportsPerWorkspace, 0), DefaultExportsPerWorkspace)},
		exportStall: cmp.Or(max(cfg.ExportStallTimeout, 0), DefaultExportStallTimeout)}
	if err := d.parseTemplates(); err != nil {
		return nil, err
	}
	d.live = newInboxHub(cfg.Store, d.renderRows, LiveHubConfig{Clock: cfg.Clock, Logger: cfg.Logger})
	d.csp, d.connectCSP = contentSecurityPolicy(""), contentSecurityPolicy(cfg.PlatformSDKURL)
	mux := http.NewServeMux()
	d.routes(mux)
	cop := http.NewCrossOriginProtection()
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "Cross-origin request refused", http.StatusForbidden)
	}))
	d.handler = d.securityHeaders(cop.Handler(d.boundedBody(mux, d.storableInput(mux))))
	return d, nil
}

// LiveInbox is the hub of the inbox's live streams, a background service with the Start/Stop
// shape for the process to run beside the server; its Close is for the HTTP server's shutdown
// (http.Server.RegisterOnShutdown). Until it is started the streams answer 503 and the pages
// poll instead.
func (d *Dashboard) LiveInbox() *InboxHub { return d.live }

// ServeHTTP serves every path under Prefix.
func (d *Dashboard) ServeHTTP(w http.ResponseWriter, r *http.Request) { d.handler.ServeHTTP(w, r) }

func (d *Dashboard) routes(mux *http.ServeMux) {
	static, _ := fs.Sub(staticFS, "static")
	files := http.StripPrefix("/dashboard/static/", cacheStatic(http.FileServerFS(static)))
	mux.HandleFunc("GET /dashboard/static/", func(w http.ResponseWriter, r *http.Request) {
		// Files only: a folder's listing is not served.
		if strings.HasSuffix(r.URL.Path, "/") {
			d.notFound(w, r, nil)
			return
		}
		files.ServeHTTP(w, r)
	})
	mux.HandleFunc("GET /dashboard", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, Prefix+"/", http.StatusSeeOther)
	})
	mux.HandleFunc("GET /dashboard/signup", d.signupForm)
	mux.HandleFunc("POST /dashboard/signup", d.signup)
	mux.HandleFunc("GET /dashboard/signin", d.signinForm)
	mux.HandleFunc("POST /dashboard/signin", d.signin)
	mux.HandleFunc("POST /dashboard/signout", d.signout)

	auth := func(pattern string, h sessionHandler) { mux.Handle(pattern, d.requireSession(h, workspaceAction, "")) }
	owner := func(pattern, task string, h sessionHandler) {
		mux.Handle(pattern, d.requireSession(h, ownerAction, task))
	}
	self := func(pattern string, h sessionHandler) { mux.Handle(pattern, d.requireSession(h, selfAction, "")) }
	// upload is a workspace form that takes a file; its handler bounds the body itself.
	d.uploads = map[string]bool{}
	upload := func(pattern string, h sessionHandler) { d.uploads[pattern] = true; auth(pattern, h) }
	auth("GET /dashboard/{$}", d.overview)
	self("GET /dashboard/password", d.passwordForm)
	self("POST /dashboard/password", d.changePassword)
	owner("POST /dashboard/connect/embedded", "connect a number", d.connectEmbedded)
	owner("POST /dashboard/connect/token", "connect a number", d.connectToken)
	owner("GET /dashboard/disconnect", "disconnect the number", d.disconnectForm)
	owner("POST /dashboard/disconnect", "disconnect the number", d.disconnect)
	auth("GET /dashboard/keys", d.keys)
	auth("POST /dashboard/keys", d.createKey)
	auth("GET /dashboard/keys/{id}", d.keyPage)
	auth("POST /dashboard/keys/{id}/revoke", d.revokeKey)
	auth("GET /dashboard/webhooks", d.webhooks)
	auth("POST /dashboard/webhooks", d.addWebhook)
	auth("GET /dashboard/webhooks/{id}", d.webhookPage)
	auth("POST /dashboard/webhooks/{id}/enable", d.enableWebhook)
	auth("POST /dashboard/webhooks/{id}/disable", d.disableWebhook)
	auth("POST /dashboard/webhooks/{id}/rotate", d.rotateWebhook)
	auth("POST /dashboard/webhooks/{id}/test", d.testWebhook)
	auth("POST /dashboard/webhooks/{id}/delete", d.deleteWebhook)
	auth("POST /dashboard/webhooks/{id}/events", d.setWebhookEvents)
	auth("GET /dashboard/templates", d.templates)
	auth("POST /dashboard/templates/sync", d.syncTemplates)
	auth("GET /dashboard/send", d.sendForm)
	auth("POST /dashboard/send", d.send)
	auth("GET /dashboard/campaigns", d.campaigns)
	auth("GET /dashboard/campaigns/{id}", d.campaignReport)
	auth("GET /dashboard/campaigns/{id}/export.csv", d.campaignCSV)
	auth("GET /dashboard/broadcasts", d.broadcasts)
	auth("GET /dashboard/broadcasts/new", d.broadcastForm)
	auth("POST /dashboard/broadcasts/preflight", d.broadcastPreflight)
	auth("POST /dashboard/broadcasts", d.startBroadcast)
	auth("GET /dashboard/broadcasts/{id}", d.broadcastPage)
	auth("GET /dashboard/broadcasts/{id}/progress", d.broadcastProgress)
	auth("GET /dashboard/broadcasts/{id}/export.csv", d.broadcastCSV)
	auth("POST /dashboard/broadcasts/{id}/pause", d.pauseBroadcast)
	auth("POST /dashboard/broadcasts/{id}/resume", d.resumeBroadcast)
	auth("POST /dashboard/broadcasts/{id}/cancel", d.cancelBroadcast)
	auth("GET /dashboard/messages", d.messages)
	auth("GET /dashboard/messages/export.csv", d.messagesCSV)
	auth("GET /dashboard/messages/{id}", d.messagePage)
	auth("GET /dashboard/live/messages", d.liveMessages)
	auth("GET /dashboard/contacts", d.contacts)
	auth("GET /dashboard/contacts/{id}", d.contactPage)
	auth("POST /dashboard/contacts/{id}", d.editContact)
	auth("POST /dashboard/contacts/{id}/block", d.blockContact)
	auth("POST /dashboard/contacts/{id}/unblock", d.unblockContact)
	auth("POST /dashboard/contacts/{id}/answer", d.answerContact)
	auth("GET /dashboard/contacts/import", d.importForm)
	upload("POST /dashboard/contacts/import", d.importUpload)
	auth("POST /dashboard/contacts/import/map", d.importMap)
	auth("GET /dashboard/contacts/imports/{id}", d.importPreview)
	auth("GET /dashboard/contacts/imports/{id}/rejected.csv", d.importRejectionsCSV)
	auth("POST /dashboard/contacts/imports/{id}/confirm", d.importConfirm)
	auth("POST /dashboard/contacts/imports/{id}/discard", d.importDiscard)
	auth("POST /dashboard/contacts/tags", d.tagContacts)
	auth("GET /dashboard/audiences", d.audiences)
	auth("POST /dashboard/audiences", d.saveAudience)
	auth("POST /dashboard/audiences/{id}/delete", d.deleteAudience)
	auth("GET /dashboard/inbox", d.inbox)
	auth("GET /dashboard/inbox/{id}", d.threadPage)
	upload("POST /dashboard/inbox/{id}/answer", d.threadAnswer)
	auth("POST /dashboard/inbox/{id}/assign", d.assignConversation)
	auth("POST /dashboard/inbox/{id}/resolve", d.resolveConversation)
	auth("POST /dashboard/inbox/{id}/reopen", d.reopenConversation)
	auth("POST /dashboard/inbox/{id}/notes", d.addNote)
	auth("GET /dashboard/live/inbox", d.liveInbox)
	auth("GET /dashboard/live/inbox/stream", d.liveInboxStream)
	auth("GET /dashboard/media/{media}", d.panelMedia)
	auth("GET /dashboard/request-log", d.requestLog)
	auth("GET /dashboard/request-log/{id}", d.attemptPage)
	auth("GET /dashboard/api-errors", d.apiErrors)
	auth("POST /dashboard/deliveries/{id}/redeliver", d.redeliver)
	owner("GET /dashboard/audit", "see the audit log", d.auditLog)
	owner("GET /dashboard/audit/{id}", "see the audit log", d.auditEntry)
	self("GET /dashboard/workspaces", d.workspaces)
	self("POST /dashboard/workspaces/{id}", d.switchWorkspace)
	owner("GET /dashboard/invite", "invite teammates", d.inviteForm)
	owner("POST /dashboard/invite", "invite teammates", d.invite)
	auth("GET /dashboard/members", d.members)
	owner("GET /dashboard/members/{id}", "manage members", d.memberPage)
	owner("POST /dashboard/members/{id}/role", "manage members", d.setMemberRole)
	owner("POST /dashboard/members/{id}/remove", "manage members", d.removeMember)
	owner("POST /dashboard/invitations/{id}/revoke", "manage invitations", d.revokeInvitation)
	owner("POST /dashboard/invitations/{id}/resend", "manage invitations", d.resendInvitation)
	mux.HandleFunc("/dashboard/", func(w http.ResponseWriter, r *http.Request) {
		// A signed-in visitor keeps the header and navigation on the not-found page.
		if s, ok := d.session(r); ok {
			d.notFound(w, r, &s)
			return
		}
		d.notFound(w, r, nil)
	})
}

// page is what every template gets.
type page struct {
	Title   string
	Nav     string
	Session *store.Session
	Flash   string
	Error   string
	Data    any
	// Zone is the viewer's time zone (viewerZone), set by render.
	Zone *time.Location
	// Unread is the navigation's inbox badge (unreadBadge), set by render for a signed-in page.
	Unread string
}

// IsOwner reports whether the signed-in user owns the workspace.
func (p page) IsOwner() bool { return p.Session != nil && p.Session.Role == store.RoleOwner }

var funcs = template.FuncMap{
	"status": func(p *int) string {
		if p == nil {
			return "—"
		}
		return strconv.Itoa(*p)
	},
	"ok":  func(p *int) bool { return p != nil && *p >= 200 && *p <= 299 },
	"inc": func(i int) int { return i + 1 },
	// capped reports whether a list of n rows may have been cut at store.MaxListed.
	"capped": func(n int) bool { return n >= store.MaxListed },
	"json": func(b []byte) string {
		var out bytes.Buffer
		if json.Indent(&out, b, "", "  ") != nil {
			return string(b)
		}
		return out.String()
	},
}

// parseTemplates makes one template set per page: the layout plus the page's file.
func (d *Dashboard) parseTemplates() error {
	names, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil {
		return err
	}
	d.pages = map[string]*template.Template{}
	for _, n := range names {
		base := strings.TrimSuffix(strings.TrimPrefix(n, "templates/"), ".html")
		if base == "layout" {
			continue
		}
		t, err := template.New("layout.html").Funcs(funcs).Funcs(wordFuncs).ParseFS(templateFS, "templates/layout.html", n)
		if err != nil {
			return fmt.Errorf("dashboard template %s: %w", n, err)
		}
		d.pages[base] = t
	}
	return nil
}

// render writes a page with the status; a template failure is logged and answered 500.
func (d *Dashboard) render(w http.ResponseWriter, r *http.Request, status int, name string, p page) {
	t, ok := d.pages[name]
	if !ok {
		d.serverError(w, r, fmt.Errorf("no template %q", name))
		return
	}
	if p.Zone == nil {
		p.Zone = viewerZone(r)
	}
	if p.Session != nil {
		p.Unread = d.unreadBadge(r.Context(), p.Session.AccountID)
	}
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, "layout.html", p); err != nil {
		d.serverError(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

func (d *Dashboard) serverError(w http.ResponseWriter, r *http.Request, err error) {
	d.log.ErrorContext(r.Context(), "dashboard", "path", r.URL.Path, "error", err.Error())
	http.Error(w, "Something went wrong on our side. Please try again.", http.StatusInternalServerError)
}

func (d *Dashboard) notFound(w http.ResponseWriter, r *http.Request, s *store.Session) {
	d.render(w, r, http.StatusNotFound, "notfound", page{Title: "Not found", Session: s})
}

// pathID reads a positive integer path value; false when it is not one.
func pathID(r *http.Request, name string) (int64, bool) {
	id, err := strconv.ParseInt(r.PathValue(name), 10, 64)
	return id, err == nil && id > 0
}

// loadByPathID runs load for the id the path names, in the session's workspace. A malformed id
// or store.ErrNotFound (which is also what another workspace's id gives) renders the 404 page,
// any other error the 500; in both cases ok is false and the response is written.
func loadByPathID[T any](d *Dashboard, w http.ResponseWriter, r *http.Request, s *store.Session,
	load func(ctx context.Context, accountID, id int64) (T, error)) (v T, ok bool) {
	id, ok := pathID(r, "id")
	if !ok {
		d.notFound(w, r, s)
		return v, false
	}
	v, err := load(r.Context(), s.AccountID, id)
	if errors.Is(err, store.ErrNotFound) {
		d.notFound(w, r, s)
		return v, false
	} else if err != nil {
		d.serverError(w, r, err)
		return v, false
	}
	return v, true
}
