package main

import (
	"net/http"
	"time"
)

// httpTimeouts are the HTTP server's limits and the shutdown drain.
type httpTimeouts struct {
	// ReadHeaderTimeout bounds the request line and headers.
	ReadHeaderTimeout time.Duration
	// ReadTimeout bounds the whole request, body included: a client trickling its body is cut
	// off when it passes.
	ReadTimeout time.Duration
	// WriteTimeout runs from the end of the headers, so it covers the body read and the
	// handler: the longest is a send (the platform call, then recording it).
	WriteTimeout time.Duration
	// IdleTimeout closes a kept-alive connection with no request.
	IdleTimeout time.Duration
	// MaxHeaderBytes bounds the request line and headers.
	MaxHeaderBytes int
	// Shutdown is how long in-flight requests get to finish before the pool closes.
	Shutdown time.Duration
}

// serverTimeouts derives the limits from the configuration. With the defaults
// (PLATFORM_TIMEOUT 10 s, GATEWAY_STATEMENT_TIMEOUT 15 s):
//
//   - read header 10 s; read (body included) 30 s: 1 MiB needs at least 35 KB/s;
//   - handler budget: the platform call plus recording it (one statement deadline), at least
//     the platform webhook's 30 s processing bound: 30 s;
//   - write = read + handler budget + 10 s margin = 70 s;
//   - idle 120 s; headers at most 64 KiB;
//   - shutdown drain = handler budget + 5 s = 35 s, longer than a send started just before
//     the signal (platform timeout plus recording), so it is recorded before the pool closes.
func serverTimeouts(cfg config) httpTimeouts {
	const read = 30 * time.Second
	handler := max(cfg.PlatformTimeout+cfg.StatementTimeout, 30*time.Second)
	return httpTimeouts{
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       read,
		WriteTimeout:      read + handler + 10*time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
		Shutdown:          handler + 5*time.Second,
	}
}

// newHTTPServer is the http.Server serve runs, with the limits.
func newHTTPServer(h http.Handler, t httpTimeouts) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: t.ReadHeaderTimeout,
		ReadTimeout:       t.ReadTimeout,
		WriteTimeout:      t.WriteTimeout,
		IdleTimeout:       t.IdleTimeout,
		MaxHeaderBytes:    t.MaxHeaderBytes,
	}
}
