package main

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"testing"
	"time"

	"gateway/store/storetest"
)

// A client that trickles its body is cut off when the read deadline (body included) passes,
// on the gateway's own handler: a raw TCP client on loopback sends the headers of a platform
// webhook delivery announcing 1000 bytes, then one byte every 100 ms. The connection must be
// closed within the read timeout plus a second, long before the body would be complete.
func TestServerCutsOffTricklingBody(t *testing.T) {
	vars := map[string]string{"DATABASE_URL": storetest.DSN(t), "LOG_LEVEL": "error", "GATEWAY_MIGRATE": "false"}
	cfg := mustConfig(t, func(k string) string { return vars[k] })
	a, err := openApp(context.Background(), cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer a.close()
	timeouts := serverTimeouts(cfg)
	timeouts.ReadTimeout = time.Second
	hs := newHTTPServer(a.server.Handler(), timeouts)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go hs.Serve(ln)
	defer hs.Close()

	for _, path := range []string{"/platform/webhook", "/v1/contacts"} {
		t.Run(path, func(t *testing.T) {
			conn, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			start := time.Now()
			// A key-less /v1 request would be refused before its body is read; a malformed key
			// of the right shape is too, so the body read is reached only on the webhook path,
			// and on /v1 the refusal closes the connection (the unread body is not drained
			// past the deadline either).
			io.WriteString(conn, "POST "+path+" HTTP/1.1\r\nHost: gw\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{")
			stop := make(chan struct{})
			defer close(stop)
			go func() {
				for i := 0; i < 200; i++ {
					select {
					case <-stop:
						return
					case <-time.After(100 * time.Millisecond):
					}
					if _, err := conn.Write([]byte(" ")); err != nil {
						return
					}
				}
			}()
			conn.SetReadDeadline(time.Now().Add(8 * time.Second))
			// Whatever the server says (an error response, or nothing), the connection must end.
			r := bufio.NewReader(conn)
			if resp, err := http.ReadResponse(r, nil); err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode < 400 {
					t.Errorf("trickled body answered %d", resp.StatusCode)
				}
			}
			_, err = r.ReadByte()
			for err == nil {
				_, err = r.ReadByte()
			}
			elapsed := time.Since(start)
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				t.Fatalf("connection still open after %s", elapsed)
			}
			if elapsed > timeouts.ReadTimeout+time.Second {
				t.Fatalf("cut off after %s, want within %s", elapsed, timeouts.ReadTimeout+time.Second)
			}
		})
	}
}

// The server's limits, with the default configuration: every timeout is set, the write
// timeout outlasts the longest handler (a send: the body read, the platform call and its
// recording), and shutdown waits longer than the platform timeout before the pool closes.
func TestServerTimeouts(t *testing.T) {
	cfg := mustConfig(t, func(string) string { return "" })
	to := serverTimeouts(cfg)
	hs := newHTTPServer(http.NotFoundHandler(), to)
	if hs.ReadHeaderTimeout <= 0 || hs.ReadTimeout <= 0 || hs.WriteTimeout <= 0 || hs.IdleTimeout <= 0 || hs.MaxHeaderBytes <= 0 {
		t.Fatalf("unset limits: %+v", hs)
	}
	if hs.WriteTimeout < hs.ReadTimeout+cfg.PlatformTimeout+cfg.StatementTimeout {
		t.Fatalf("write timeout %s shorter than read %s + platform %s + recording %s", hs.WriteTimeout, hs.ReadTimeout,
			cfg.PlatformTimeout, cfg.StatementTimeout)
	}
	if to.Shutdown <= cfg.PlatformTimeout+cfg.StatementTimeout {
		t.Fatalf("shutdown drain %s not longer than the platform timeout %s plus recording %s", to.Shutdown, cfg.PlatformTimeout, cfg.StatementTimeout)
	}
	cfg.PlatformTimeout = 45 * time.Second
	if to := serverTimeouts(cfg); to.Shutdown <= 45*time.Second || to.WriteTimeout <= 45*time.Second+to.ReadTimeout {
		t.Fatalf("limits do not follow PLATFORM_TIMEOUT: %+v", to)
	}
}
