package bench

import (
	"context"
	"crypto/hmac"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"gateway/platform/eventhook"
)

// The lifecycle benchmark's customer: `gateway bench receiver` serves one webhook endpoint per
// account (POST /hook/<account id>), checks every delivery's X-Service-Signature with that
// endpoint's secret, and keeps, per event type, how many arrived and how long after the event
// was created (the body's created_at, written by the gateway in the transaction that made the
// event). GET /stats returns the figures since the last reset; ?reset=1 starts anew. It runs as
// its own process so its CPU is counted apart.

// receiverSecretsEnv holds the endpoints' secrets: "<account id>=<secret>" pairs joined by ";".
const receiverSecretsEnv = "BENCH_RECEIVER_SECRETS"

// receiverStats is what GET /stats answers.
type receiverStats struct {
	Events       map[string]int `json:"events"` // deliveries by event type
	Reads        int            `json:"reads"`  // message.status deliveries with status read
	BadSignature int            `json:"bad_signature"`
	Unknown      int            `json:"unknown"` // deliveries to an endpoint it does not know, or unreadable
	StatusLagP50 time.Duration  `json:"status_lag_p50"`
	StatusLagP99 time.Duration  `json:"status_lag_p99"`
	StatusLags   int            `json:"status_lags"`
	SentLagP50   time.Duration  `json:"sent_lag_p50"`
	SentLagP99   time.Duration  `json:"sent_lag_p99"`
}

type receiver struct {
	secrets map[string]string // account id → secret

	mu           sync.Mutex
	events       map[string]int
	reads        int
	bad, unknown int
	statusLags   []time.Duration
	sentLags     []time.Duration
}

func newReceiver(secrets map[string]string) *receiver {
	return &receiver{secrets: secrets, events: map[string]int{}}
}

// parseReceiverSecrets parses receiverSecretsEnv's value.
func parseReceiverSecrets(v string) (map[string]string, error) {
	out := map[string]string{}
	for _, pair := range strings.Split(v, ";") {
		if pair == "" {
			continue
		}
		k, secret, ok := strings.Cut(pair, "=")
		if !ok || k == "" || secret == "" {
			return nil, fmt.Errorf("%s: want <account id>=<secret> pairs joined by ';'", receiverSecretsEnv)
		}
		out[k] = secret
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s is empty", receiverSecretsEnv)
	}
	return out, nil
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path == "/stats":
		rc.serveStats(w, r.URL.Query().Get("reset") == "1")
	case strings.HasPrefix(r.URL.Path, "/hook/") && r.Method == http.MethodPost:
		rc.serveHook(w, r)
	default:
		http.NotFound(w, r)
	}
}

func (rc *receiver) serveHook(w http.ResponseWriter, r *http.Request) {
	now := time.Now()
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	secret, known := rc.secrets[strings.TrimPrefix(r.URL.Path, "/hook/")]
	var ev struct {
		Event     string    `json:"event"`
		CreatedAt time.Time `json:"created_at"`
		Data      struct {
			Status string `json:"status"`
		} `json:"data"`
	}
	if err == nil && known {
		err = json.Unmarshal(body, &ev)
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	switch {
	case err != nil || !known:
		rc.unknown++
		w.WriteHeader(http.StatusBadRequest)
		return
	case !hmac.Equal([]byte(r.Header.Get(eventhook.HeaderSignature)), []byte(eventhook.Signature(secret, body))):
		rc.bad++
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	rc.events[ev.Event]++
	lag := now.Sub(ev.CreatedAt)
	switch ev.Event {
	case "message.status":
		rc.statusLags = append(rc.statusLags, lag)
		if ev.Data.Status == "read" {
			rc.reads++
		}
	case "message.sent":
		rc.sentLags = append(rc.sentLags, lag)
	}
	w.WriteHeader(http.StatusNoContent)
}

func (rc *receiver) serveStats(w http.ResponseWriter, reset bool) {
	rc.mu.Lock()
	st := receiverStats{Events: map[string]int{}, Reads: rc.reads, BadSignature: rc.bad, Unknown: rc.unknown,
		StatusLags: len(rc.statusLags)}
	for k, v := range rc.events {
		st.Events[k] = v
	}
	status, sent := slices.Clone(rc.statusLags), slices.Clone(rc.sentLags)
	if reset {
		rc.events, rc.reads, rc.bad, rc.unknown = map[string]int{}, 0, 0, 0
		rc.statusLags, rc.sentLags = rc.statusLags[:0], rc.sentLags[:0]
	}
	rc.mu.Unlock()
	slices.Sort(status)
	slices.Sort(sent)
	st.StatusLagP50, st.StatusLagP99 = percentile(status, 50), percentile(status, 99)
	st.SentLagP50, st.SentLagP99 = percentile(sent, 50), percentile(sent, 99)
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(st)
}

// serveReceiver is `gateway bench receiver --addr A`, with the secrets in receiverSecretsEnv.
// It serves until ctx ends and fails when the flags or the secrets are wrong or the address
// cannot be listened on.
func serveReceiver(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("gateway bench receiver", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:0", "listen address (loopback)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	secrets, err := parseReceiverSecrets(os.Getenv(receiverSecretsEnv))
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: newReceiver(secrets), ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(stdout, "bench receiver on http://%s (%d endpoints)\n", ln.Addr(), len(secrets))
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(sctx)
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
