package main

import (
	"context"
	"crypto/hmac"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"gateway/platform/eventhook"
)

// receiveMaxBody bounds one received event; the gateway's events are far smaller.
const receiveMaxBody = 1 << 20

// receive is `gateway receive`: a webhook receiver for a developer's machine. It answers 204 to
// every POST and prints one line per event (the time, the path, the webhook-id header and the
// body); with --secret it checks X-Service-Signature first and answers 401 (printing why) when
// it does not match. It serves until ctx ends.
func receive(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("gateway receive", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:9000", "listen address")
	secret := fs.String("secret", "", "the endpoint's signing secret (whsec_...): check each event's X-Service-Signature")
	if err := fs.Parse(args); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("gateway receive: %w", err)
	}
	fmt.Fprintf(stdout, "receiving webhooks at http://%s/ (any path)\n", ln.Addr())
	srv := &http.Server{Handler: receiver(*secret, stdout), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// receiver is receive's handler.
func receiver(secret string, out io.Writer) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.Error(w, "POST an event here", http.StatusMethodNotAllowed)
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, receiveMaxBody))
		if err != nil {
			http.Error(w, "body too large or unreadable", http.StatusRequestEntityTooLarge)
			return
		}
		at := time.Now().UTC().Format(time.TimeOnly)
		if secret != "" && !hmac.Equal([]byte(r.Header.Get("X-Service-Signature")), []byte(eventhook.Signature(secret, body))) {
			fmt.Fprintf(out, "%s %s %s: refused, X-Service-Signature does not match the secret\n", at, r.URL.Path, r.Header.Get("webhook-id"))
			http.Error(w, "signature mismatch", http.StatusUnauthorized)
			return
		}
		fmt.Fprintf(out, "%s %s %s %s\n", at, r.URL.Path, r.Header.Get("webhook-id"), body)
		w.WriteHeader(http.StatusNoContent)
	})
}
