package simulator

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"
)

// Defaults used by DefaultConfig and for zero Config fields.
const (
	// DefaultSentDelay is DefaultConfig's delay of the "sent" status.
	DefaultSentDelay = 50 * time.Millisecond
	// DefaultDeliveredDelay is DefaultConfig's delay of the "delivered" status.
	DefaultDeliveredDelay = 150 * time.Millisecond
	// DefaultReadDelay is DefaultConfig's delay of the "read" status.
	DefaultReadDelay = 300 * time.Millisecond
	// DefaultWebhookWorkers is the number of concurrent webhook POSTs.
	DefaultWebhookWorkers = 8
	// DefaultWebhookAttempts is the number of attempts per webhook.
	DefaultWebhookAttempts = 5
	// DefaultWebhookRetryBase is the first retry delay (then doubled).
	DefaultWebhookRetryBase = 50 * time.Millisecond
	// DefaultWebhookTimeout bounds one webhook POST.
	DefaultWebhookTimeout = 5 * time.Second
	// DefaultMaxSent bounds the Sent log.
	DefaultMaxSent = 100_000
	// MetaDefaultRate is Meta's default throughput per phone number (80
	// messages per second); a Config that wants Meta's limit sets
	// RatePerSecond to it.
	MetaDefaultRate = 80
)

// Errors returned by the Go-side control methods.
var (
	// ErrUnknownNumber: no number with that phone number id was added.
	ErrUnknownNumber = errors.New("simulator: unknown phone number id")
	// ErrUnknownTemplate: no template with that id in that WABA.
	ErrUnknownTemplate = errors.New("simulator: unknown template")
	// ErrInvalidStatus: the status is not one of TemplateStatuses.
	ErrInvalidStatus = errors.New("simulator: invalid template status")
	// ErrClosed: the simulator was closed.
	ErrClosed = errors.New("simulator: closed")
	// ErrUnknownUser: no handset with that number or user id wrote in.
	ErrUnknownUser = errors.New("simulator: unknown user")
)

// Config configures a Simulator. The zero value is usable: no webhooks,
// statuses sent immediately, no rate limit, time.Now.
type Config struct {
	// AppSecret signs webhooks: X-Hub-Signature-256: sha256=<hex HMAC-SHA256(raw body, AppSecret)>.
	// It is also the client_secret GET /oauth/access_token requires (any when empty).
	AppSecret string
	// AppID is the client_id GET /oauth/access_token requires and FB.init's appId the
	// sign-up window checks ("" accepts any).
	AppID string
	// WebhookURL is where status, inbound and template webhooks are POSTed ("" = none are sent).
	WebhookURL string
	// SentDelay, DeliveredDelay and ReadDelay are measured from the moment
	// the send response is written; 0 sends that status immediately.
	// DefaultConfig sets 50ms/150ms/300ms.
	SentDelay, DeliveredDelay, ReadDelay time.Duration
	// RatePerSecond is the throughput of a phone number without its own
	// Number.Throughput: sends (and inbound messages) per clock second before
	// 130429; 0 = unlimited. Meta's default is ThroughputStandard (80).
	RatePerSecond int
	// Clock gives the time for webhook timestamps, rate limits and windows
	// (nil = time.Now). Delivery delays use real timers.
	Clock func() time.Time

	// PairInterval is the minimum spacing between two accepted messages from
	// one phone number id to the same wa_id; a sooner send fails with
	// 131056. 0 (the default) disables the check; Meta's is about 6s.
	PairInterval time.Duration
	// PairBurst is how many messages a pair may send at once, borrowing
	// future intervals (0 = 1: strictly one per PairInterval; Meta allows
	// bursts up to about 45).
	PairBurst int
	// MessagingLimit is the default messaging limit of every business
	// portfolio: unique recipients of template sends outside a window in a
	// moving 24 h (Tier250 ... Tier100K; 0 = TierUnlimited). SetPortfolio
	// changes one portfolio's. Past it sends are accepted and not delivered.
	MessagingLimit int
	// MarketingUserLimit enforces the per-user marketing limit in every
	// portfolio by default: a marketing template to a user who got one in
	// the last 24 h, or to a US (+1) number, fails asynchronously with 131049.
	MarketingUserLimit bool
	// EnforceServiceWindow makes non-template sends to a user without an
	// inbound message (InjectInboundMessage) in the last 24 h (72 h after a message
	// with a referral) fail asynchronously with 131047 (accepted, sent, then
	// failed), as Meta usually does.
	EnforceServiceWindow bool
	// ServiceWindowSync makes such sends fail at once instead: HTTP 400 with
	// error 131047 (Meta answers some this way).
	ServiceWindowSync bool
	// WebhookWorkers bounds concurrent webhook POSTs (0 = 8).
	WebhookWorkers int
	// WebhookAttempts is the number of attempts per webhook before it is
	// given up (0 = 5).
	WebhookAttempts int
	// WebhookRetryBase is the first retry delay, doubled on each further
	// attempt (0 = 50ms: 50ms, 100ms, 200ms, 400ms).
	WebhookRetryBase time.Duration
	// WebhookTimeout bounds one webhook POST (0 = 5s).
	WebhookTimeout time.Duration
	// MaxSent bounds the log returned by Sent; beyond it the oldest tenth
	// is dropped (0 = 100,000).
	MaxSent int
}

// DefaultConfig returns the configuration for local runs: realistic status
// delays (50ms/150ms/300ms), no rate limit, time.Now. Set AppSecret and
// WebhookURL on the result.
func DefaultConfig() Config {
	return Config{
		SentDelay:      DefaultSentDelay,
		DeliveredDelay: DefaultDeliveredDelay,
		ReadDelay:      DefaultReadDelay,
	}
}

// Number is a business phone number registered on the fake Cloud API, with
// the access token that may use it.
type Number struct {
	PhoneNumberID      string `json:"phone_number_id"`
	WabaID             string `json:"waba_id"`
	DisplayPhoneNumber string `json:"display_phone_number"`
	AccessToken        string `json:"access_token"`
	// VerifiedName is returned by GET /{version}/{phone-number-id}
	// (optional; "Test Business" when empty).
	VerifiedName string `json:"verified_name,omitempty"`
	// QualityRating and MessagingLimitTier are reported by GET
	// /{version}/{phone-number-id} (GREEN and TIER_1K when empty).
	QualityRating      string `json:"quality_rating,omitempty"`
	MessagingLimitTier string `json:"messaging_limit_tier,omitempty"`
	// PIN is the number's two-step verification pin; POST .../register with
	// another pin fails with 133005 ("" = none set yet: the first register sets it).
	PIN string `json:"pin,omitempty"`
	// Unregistered numbers answer sends with 133010 until POST .../register.
	Unregistered bool `json:"unregistered,omitempty"`
	// Throughput is the number's messages per second (ThroughputStandard,
	// ThroughputHigh, ThroughputCoexistence, ...; 0 = Config.RatePerSecond).
	Throughput int `json:"throughput,omitempty"`
	// BusinessID is the business portfolio whose messaging limit the number
	// shares ("" = its WABA stands for its portfolio).
	BusinessID string `json:"business_id,omitempty"`
}

// Outcome scripts what happens to every send to one recipient. The zero
// Outcome is the normal path: accepted, then sent, delivered and read.
type Outcome struct {
	// FailSync is a Graph error code returned synchronously instead of
	// accepting the message (e.g. 131026, 130429, 131056), with Meta's
	// HTTP status and title for that code.
	FailSync int `json:"fail_sync,omitempty"`
	// FailAsync accepts the message, sends "sent", then a "failed" status
	// with this error code (e.g. 131026, 131047, 131049).
	FailAsync int `json:"fail_async,omitempty"`
	// SkipDelivered sends "sent" then "read" (delivery implied).
	SkipDelivered bool `json:"skip_delivered,omitempty"`
	// Reorder delivers the statuses in reverse order (read/delivered before
	// sent); each keeps its own timestamp.
	Reorder bool `json:"reorder,omitempty"`
	// Duplicate POSTs every status webhook twice.
	Duplicate bool `json:"duplicate,omitempty"`
	// EarlyStatus POSTs the first status webhook (and waits for its answer)
	// before the send response is written.
	EarlyStatus bool `json:"early_status,omitempty"`
	// NoCallbackData leaves biz_opaque_callback_data out of the status
	// webhooks, as Meta does for a send that set none.
	NoCallbackData bool `json:"no_callback_data,omitempty"`
	// Hang delays the send response by this long (for client timeout
	// tests). The message is accepted before the wait, so it is recorded
	// and its statuses go out even if the client gives up.
	Hang time.Duration `json:"-"`
}

// SentParameter is one parameter of an accepted template send.
type SentParameter struct {
	Component string `json:"component"`          // header, body or button
	SubType   string `json:"sub_type,omitempty"` // buttons: url, quick_reply, ...
	Index     string `json:"index,omitempty"`    // buttons: the button index
	Type      string `json:"type"`               // text, currency, date_time, image, payload, ...
	Name      string `json:"name,omitempty"`     // parameter_name (NAMED templates)
	Value     string `json:"value"`              // text, payload, fallback_value, media link or id
}

// SentMessage is one send the simulator accepted.
type SentMessage struct {
	PhoneNumberID         string          `json:"phone_number_id"`
	To                    string          `json:"to,omitempty"`        // exactly as sent
	Recipient             string          `json:"recipient,omitempty"` // the user id sent to, when "to" was not given
	WaID                  string          `json:"wa_id,omitempty"`     // "" for a user id whose number is not known
	UserID                string          `json:"user_id,omitempty"`   // the recipient's user id, when known
	Wamid                 string          `json:"wamid"`
	Type                  string          `json:"type"` // template, text, image, video, audio, document, sticker, location, contacts, reaction or interactive
	TemplateName          string          `json:"template_name,omitempty"`
	TemplateLanguage      string          `json:"template_language,omitempty"`
	Parameters            []SentParameter `json:"parameters,omitempty"`
	Components            json.RawMessage `json:"components,omitempty"` // template.components exactly as received
	TextBody              string          `json:"text_body,omitempty"`
	Content               json.RawMessage `json:"content,omitempty"`  // a non-template message's object (under its type) exactly as received
	ReplyTo               string          `json:"reply_to,omitempty"` // context.message_id
	BizOpaqueCallbackData string          `json:"biz_opaque_callback_data,omitempty"`
	// Dropped says why an accepted send was never delivered (DroppedMessagingLimit), "" otherwise.
	Dropped string          `json:"dropped,omitempty"`
	At      time.Time       `json:"at"`  // Config.Clock at acceptance
	Raw     json.RawMessage `json:"raw"` // the request body
}

// Params returns the values of the parameters of one component ("header",
// "body" or "button"), in order. It returns nil when there are none.
func (m SentMessage) Params(component string) []string {
	var out []string
	for _, p := range m.Parameters {
		if p.Component == component {
			out = append(out, p.Value)
		}
	}
	return out
}

// settings are the runtime-changeable parts of Config.
type settings struct {
	webhookURL                           string
	sentDelay, deliveredDelay, readDelay time.Duration
	rate                                 int
	pairInterval                         time.Duration
	pairBurst                            int
	tier                                 int
	marketingLimit                       bool
	enforceWindow                        bool
	windowSync                           bool
}

// Simulator is a fake WhatsApp Cloud API. Create it with New; all methods are
// safe for concurrent use.
type Simulator struct {
	clock   func() time.Time
	secret  string
	appID   string
	maxSent int
	hooks   *sender
	handler http.Handler
	done    chan struct{}

	mu         sync.Mutex
	set        settings
	numbers    map[string]Number            // by phone number id
	tokens     map[string]int               // access token -> numbers using it
	templates  map[string][]*storedTemplate // by WABA id, in seed order
	nextTplID  int64
	scripts    map[string]Outcome       // by recipient digits
	sent       []SentMessage            // accepted sends
	limits     map[string]*numberLimits // by phone number id (limits.go)
	pairs      map[string]*pairBucket   // phone number id + "|" + recipient
	pairSweep  int                      // the size at which pairs is next swept (limits.go)
	portfolios map[string]*portfolio    // by business portfolio id
	byWaID     map[string]*Handset      // users who wrote, by wa_id (handsets.go)
	byUserID   map[string]*Handset      // the same, by business-scoped user id
	windows    map[string]window        // phone number id + "|" + user id → the service window
	media      map[string]*mediaObject
	mediaURLs  map[string]mediaURL // download path token → media id and expiry
	markedRead []string            // wamids marked read, oldest first
	onb        onboarding          // codes, subscriptions, registrations (onboarding.go)

	srvMu     sync.Mutex
	srv       *http.Server
	closeOnce sync.Once
	closeErr  error
}

// New returns a simulator and starts its webhook sender. Call Close when done.
// It never fails; zero Config fields take the defaults documented on Config.
func New(cfg Config) *Simulator {
	clock := cfg.Clock
	if clock == nil {
		clock = time.Now
	}
	workers := cmpOr(cfg.WebhookWorkers, DefaultWebhookWorkers)
	attempts := cmpOr(cfg.WebhookAttempts, DefaultWebhookAttempts)
	base := cmpOr(cfg.WebhookRetryBase, DefaultWebhookRetryBase)
	timeout := cmpOr(cfg.WebhookTimeout, DefaultWebhookTimeout)
	s := &Simulator{
		clock:   clock,
		secret:  cfg.AppSecret,
		appID:   cfg.AppID,
		maxSent: cmpOr(cfg.MaxSent, DefaultMaxSent),
		done:    make(chan struct{}),
		set: settings{
			webhookURL:     cfg.WebhookURL,
			sentDelay:      max(cfg.SentDelay, 0),
			deliveredDelay: max(cfg.DeliveredDelay, 0),
			readDelay:      max(cfg.ReadDelay, 0),
			rate:           max(cfg.RatePerSecond, 0),
			pairInterval:   max(cfg.PairInterval, 0),
			pairBurst:      max(cfg.PairBurst, 0),
			tier:           max(cfg.MessagingLimit, 0),
			marketingLimit: cfg.MarketingUserLimit,
			enforceWindow:  cfg.EnforceServiceWindow,
			windowSync:     cfg.ServiceWindowSync,
		},
		numbers:    map[string]Number{},
		tokens:     map[string]int{},
		templates:  map[string][]*storedTemplate{},
		nextTplID:  1094411229000000,
		scripts:    map[string]Outcome{},
		limits:     map[string]*numberLimits{},
		pairs:      map[string]*pairBucket{},
		portfolios: map[string]*portfolio{},
		byWaID:     map[string]*Handset{},
		byUserID:   map[string]*Handset{},
		windows:    map[string]window{},
		media:      map[string]*mediaObject{},
		mediaURLs:  map[string]mediaURL{},
	}
	s.hooks = newSender(cfg.AppSecret, s.webhookURL, workers, attempts, base, timeout)
	s.handler = http.HandlerFunc(s.serveHTTP)
	return s
}

// cmpOr returns v, or def when v is not positive.
func cmpOr[T int | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// Start listens on addr (e.g. "127.0.0.1:0") and serves the whole fake in the
// background: Graph paths under /v{N}.{M}/ (any version) and the control API
// under /_sim/. It returns the base URL "http://host:port" (append "/v23.0"
// for a Graph root). It fails if the address cannot be bound, if the
// simulator was already started, or after Close.
func (s *Simulator) Start(addr string) (baseURL string, err error) {
	s.srvMu.Lock()
	defer s.srvMu.Unlock()
	select {
	case <-s.done:
		return "", ErrClosed
	default:
	}
	if s.srv != nil {
		return "", errors.New("simulator: already started")
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", fmt.Errorf("simulator: listen %s: %w", addr, err)
	}
	srv := &http.Server{Handler: s.handler, ReadHeaderTimeout: 10 * time.Second}
	s.srv = srv
	go func() { _ = srv.Serve(ln) }()
	return "http://" + ln.Addr().String(), nil
}

// Close stops the HTTP server started by Start (closing its connections),
// releases hanging send handlers and stops the webhook sender, dropping
// queued webhooks. It is idempotent; it returns the server's close error, if
// any, on the first call and nil afterwards.
func (s *Simulator) Close() error {
	first := false
	s.closeOnce.Do(func() {
		first = true
		close(s.done)
		s.srvMu.Lock()
		srv := s.srv
		s.srvMu.Unlock()
		if srv != nil {
			if err := srv.Close(); err != nil && !errors.Is(err, http.ErrServerClosed) {
				s.closeErr = err
			}
		}
		s.hooks.stop()
	})
	if !first {
		return nil
	}
	return s.closeErr
}

func (s *Simulator) webhookURL() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.set.webhookURL
}
