package bench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"sync"
	"syscall"
	"time"

	"gateway/platform/simulator"
	"gateway/platform/whatsapp"
	"gateway/store/benchfloor"
)

// ---- requests ----

// requestMaker appends one complete HTTP/1.1 request of a phase to dst.
type requestMaker func(dst []byte, rng *rand.Rand) []byte

// maker returns the request builder of phase against the target listening on addr.
func (r *benchRig) maker(phase, addr string) requestMaker {
	auth := "Authorization: Bearer " + r.key
	secret := []byte(r.cfg.PlatformAppSecret)
	switch phase {
	case phaseSend:
		return func(dst []byte, rng *rand.Rand) []byte {
			return appendRequest(dst, "POST", addr, "/v1/messages/template", sendBody(rng), auth, "Content-Type: application/json")
		}
	case phaseSendRich:
		return func(dst []byte, rng *rand.Rand) []byte {
			return appendRequest(dst, "POST", addr, "/v1/messages/template", sendRichBody(rng), auth, "Content-Type: application/json")
		}
	case phaseStatus:
		seeded := r.seed.Seeded
		return func(dst []byte, rng *rand.Rand) []byte {
			n := rng.Int64N(seeded) + 1
			body := statusBody(benchNumber, benchfloor.WamidPrefix+strconv.FormatInt(n, 10), "delivered",
				time.Now().Unix(), benchfloor.ContactMobile(benchfloor.MessageContact(n)))
			return appendRequest(dst, "POST", addr, "/platform/webhook", body, "Content-Type: application/json",
				whatsapp.SignatureHeaderName+": "+whatsapp.SignatureHeader(secret, body))
		}
	default:
		ids := r.ids
		return func(dst []byte, rng *rand.Rand) []byte {
			var id int64
			if ids.IDs != nil {
				id = ids.IDs[rng.IntN(len(ids.IDs))]
			} else {
				id = ids.Min + rng.Int64N(ids.Max-ids.Min+1)
			}
			return appendRequest(dst, "GET", addr, "/v1/messages/"+strconv.FormatInt(id, 10), nil, auth)
		}
	}
}

// appendRequest appends an HTTP/1.1 request with the given header lines ("Name: value") and
// body (a Content-Length is added when there is one) to dst.
func appendRequest(dst []byte, method, host, path string, body []byte, headers ...string) []byte {
	dst = append(dst, method...)
	dst = append(dst, ' ')
	dst = append(dst, path...)
	dst = append(dst, " HTTP/1.1\r\nHost: "...)
	dst = append(dst, host...)
	dst = append(dst, "\r\nUser-Agent: gateway-bench\r\n"...)
	for _, h := range headers {
		dst = append(dst, h...)
		dst = append(dst, "\r\n"...)
	}
	if body != nil {
		dst = append(dst, "Content-Length: "...)
		dst = strconv.AppendInt(dst, int64(len(body)), 10)
		dst = append(dst, "\r\n"...)
	}
	dst = append(dst, "\r\n"...)
	return append(dst, body...)
}

// sendBody is a send of the bench template to a random eleven-digit destination (almost
// always a new contact, the expensive path) with two body variables.
func sendBody(rng *rand.Rand) []byte {
	dest := 10_000_000_000 + rng.Int64N(10_000_000_000)
	order := rng.IntN(1_000_000)
	return fmt.Appendf(nil, `{"destination":"%d","template_name":%q,"language":%q,"name":"Bench User","body_variables":["Ana","ORD-%06d"]}`,
		dest, benchTemplate.Name, benchTemplate.Language, order)
}

// sendRichBody is a send of the rich template to a random new number: an image header by
// link, one body variable and the URL button's suffix.
func sendRichBody(rng *rand.Rand) []byte {
	dest := 10_000_000_000 + rng.Int64N(10_000_000_000)
	order := rng.IntN(1_000_000)
	return fmt.Appendf(nil, `{"destination":"%d","template_name":%q,"language":"en_US","name":"Bench User",`+
		`"header_media":{"type":"image","link":"https://cdn.example.com/spring.jpg"},"body_variables":["Ana"],`+
		`"button_variables":[{"index":0,"value":"ORD-%06d"}]}`, dest, richTemplate, order)
}

// statusBody is a platform status webhook for one message, shaped as the Cloud API sends it.
func statusBody(n simulator.Number, wamid, status string, unix int64, recipient string) []byte {
	return fmt.Appendf(nil, `{"object":"whatsapp_business_account","entry":[{"id":%q,"changes":[{"value":{"messaging_product":"whatsapp",`+
		`"metadata":{"display_phone_number":%q,"phone_number_id":%q},"statuses":[{"id":%q,"status":%q,"timestamp":"%d","recipient_id":%q}]},"field":"messages"}]}]}`,
		n.WabaID, n.DisplayPhoneNumber, n.PhoneNumberID, wamid, status, unix, recipient)
}

// loadSpec is one closed-loop run: Concurrency clients each send a request, wait for the
// answer and send the next, for Warmup (not counted) then Duration (measured).
type loadSpec struct {
	Concurrency      int
	Warmup, Duration time.Duration
	NewRequest       requestMaker
	// OnMeasureStart and OnMeasureEnd, when set, are called at the edges of the measured
	// window (for CPU samples).
	OnMeasureStart, OnMeasureEnd func()
}

// loadResult is what the measured window saw. A request counts when it started and ended
// inside the window; Latencies are those of the 2xx answers.
type loadResult struct {
	OK        int
	Failed    int // non-2xx answers and transport errors
	Latencies []time.Duration
	Window    time.Duration
	Samples   map[string]int // first distinct failures → count
}

// runLoad runs spec against the server at addr and returns the measured window's results.
// Each client owns one kept-alive connection (reopened after an error). It returns early
// (with what it has) when ctx ends; no request outlives the window by more than 30 s.
func runLoad(ctx context.Context, addr string, spec loadSpec) loadResult {
	start := time.Now().Add(spec.Warmup)
	end := start.Add(spec.Duration)
	rctx, cancel := context.WithDeadline(ctx, end.Add(30*time.Second))
	defer cancel()

	var edges sync.WaitGroup
	edges.Add(1)
	go func() {
		defer edges.Done()
		for _, e := range []struct {
			at time.Time
			f  func()
		}{{start, spec.OnMeasureStart}, {end, spec.OnMeasureEnd}} {
			t := time.NewTimer(time.Until(e.at))
			select {
			case <-t.C:
			case <-rctx.Done():
				t.Stop()
				return
			}
			if e.f != nil {
				e.f()
			}
		}
	}()

	results := make([]loadResult, spec.Concurrency)
	var wg sync.WaitGroup
	seed := uint64(time.Now().UnixNano())
	for i := range spec.Concurrency {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			res := &results[i]
			res.Samples = map[string]int{}
			rng := rand.New(rand.NewPCG(seed, uint64(i)))
			conn := &httpConn{addr: addr, deadline: end.Add(30 * time.Second)}
			defer conn.close()
			var buf []byte
			for {
				t0 := time.Now()
				if !t0.Before(end) || rctx.Err() != nil {
					return
				}
				buf = spec.NewRequest(buf[:0], rng)
				code, body, err := conn.do(buf)
				t1 := time.Now()
				if t0.Before(start) || t1.After(end) {
					continue
				}
				if err == nil && code/100 == 2 {
					res.OK++
					res.Latencies = append(res.Latencies, t1.Sub(t0))
					continue
				}
				res.Failed++
				failure := "transport: " + fmt.Sprint(err)
				if err == nil {
					failure = strconv.Itoa(code) + " " + oneLine(body, 160)
				}
				if _, seen := res.Samples[failure]; seen || len(res.Samples) < 5 {
					res.Samples[failure]++
				}
			}
		}(i)
	}
	wg.Wait()
	// The clients stop at end, when the end edge is due: wait for it before cancelling, or the
	// edge goroutine may see the cancellation first and never call OnMeasureEnd.
	edges.Wait()
	cancel()
	out := mergeResults(results)
	out.Window = spec.Duration
	return out
}

// httpConn is one load client's kept-alive HTTP/1.1 connection. It has no pool and starts
// no goroutines (unlike http.Transport, which costs several times wrk's CPU per request), so
// the generator takes as little of the shared CPU as it can.
type httpConn struct {
	addr     string
	deadline time.Time // for every read and write
	conn     net.Conn
	br       *bufio.Reader
	used     bool // a request went through this connection
}

// do writes one complete request and reads the answer. It returns the status code and, for
// a non-2xx answer, the first 4 KiB of the body. A request that fails on a reused
// connection before any answer is retried once on a new one (the server may have closed it).
func (c *httpConn) do(req []byte) (int, []byte, error) {
	for attempt := 0; ; attempt++ {
		if c.conn == nil {
			conn, err := net.DialTimeout("tcp", c.addr, 5*time.Second)
			if err != nil {
				return 0, nil, err
			}
			conn.SetDeadline(c.deadline)
			c.conn, c.used = conn, false
			if c.br == nil {
				c.br = bufio.NewReaderSize(conn, 16<<10)
			} else {
				c.br.Reset(conn)
			}
		}
		reused := c.used
		c.used = true
		if _, err := c.conn.Write(req); err != nil {
			c.close()
			if reused && attempt == 0 {
				continue
			}
			return 0, nil, err
		}
		resp, err := http.ReadResponse(c.br, nil)
		if err != nil {
			c.close()
			if reused && attempt == 0 && (errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET)) {
				continue
			}
			return 0, nil, err
		}
		var snippet []byte
		if resp.StatusCode/100 != 2 {
			snippet, _ = io.ReadAll(io.LimitReader(resp.Body, 4096))
		}
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil || resp.Close {
			c.close()
		}
		return resp.StatusCode, snippet, err
	}
}

func (c *httpConn) close() {
	if c.conn != nil {
		c.conn.Close()
		c.conn = nil
	}
}

// mergeResults adds up the clients' results.
func mergeResults(parts []loadResult) loadResult {
	var out loadResult
	out.Samples = map[string]int{}
	n := 0
	for _, p := range parts {
		n += len(p.Latencies)
	}
	out.Latencies = make([]time.Duration, 0, n)
	for _, p := range parts {
		out.OK += p.OK
		out.Failed += p.Failed
		out.Latencies = append(out.Latencies, p.Latencies...)
		for k, v := range p.Samples {
			out.Samples[k] += v
		}
	}
	return out
}
