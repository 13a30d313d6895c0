package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"gateway/server/servertest/wait"
	"gateway/store/storetest"
)

// The end-to-end tests run the built binary, as an operator would.

var (
	buildOnce sync.Once
	buildPath string
	buildErr  error
)

// gatewayBinary builds the gateway once per test run and returns its path.
func gatewayBinary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "gateway-e2e-")
		if err != nil {
			buildErr = err
			return
		}
		buildPath = filepath.Join(dir, "gateway")
		out, err := exec.Command("go", "build", "-o", buildPath, ".").CombinedOutput()
		if err != nil {
			buildErr = &buildError{out: string(out), err: err}
		}
	})
	if buildErr != nil {
		t.Fatalf("build gateway: %v", buildErr)
	}
	return buildPath
}

type buildError struct {
	out string
	err error
}

func (e *buildError) Error() string { return e.err.Error() + "\n" + e.out }

// freeAddr returns a loopback address with a port free at the time of the call.
func freeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// process is a running gateway subcommand whose output is kept for failure reports.
type process struct {
	cmd  *exec.Cmd
	out  *syncBuffer
	done chan struct{}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func init() {
	if storetest.Pooled() {
		defaultDirectURL = storetest.DirectDSN
	}
}

// withDirectURL adds DATABASE_DIRECT_URL to env when the tests run through a transaction
// pooler (storetest.Pooled): the direct connection to the database of env's last
// DATABASE_URL, for migrations and LISTEN. Otherwise env is returned as it is.
func withDirectURL(env []string) []string {
	if !storetest.Pooled() {
		return env
	}
	url := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "DATABASE_URL="); ok {
			url = v
		}
	}
	if url == "" {
		return env
	}
	return append(env, "DATABASE_DIRECT_URL="+storetest.DirectDSN(url))
}

// startProcess runs `gateway args...` with env added to the environment; it is killed at
// cleanup, and its output is logged when the test failed.
func startProcess(t testing.TB, env []string, args ...string) *process {
	t.Helper()
	p := &process{cmd: exec.Command(gatewayBinary(t), args...), out: &syncBuffer{}, done: make(chan struct{})}
	// The tests run on development secrets (the platform simulator's app secret and verify
	// token), which serve refuses outside development.
	p.cmd.Env = withDirectURL(append(append(os.Environ(), "GATEWAY_ENV=development"), env...))
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		p.kill(syscall.SIGTERM)
		if t.Failed() {
			t.Logf("gateway %s output:\n%s", strings.Join(args, " "), tail(p.out.String(), 4000))
		}
	})
	return p
}

// kill sends sig and waits (at most 15 s) for the process to exit.
func (p *process) kill(sig syscall.Signal) {
	select {
	case <-p.done:
		return
	default:
	}
	p.cmd.Process.Signal(sig)
	select {
	case <-p.done:
	case <-time.After(15 * time.Second):
		p.cmd.Process.Kill()
		<-p.done
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// waitHTTP polls url until it answers 200 or the deadline passes.
func waitHTTP(t testing.TB, url string, within time.Duration) {
	t.Helper()
	wait.For(t, func() bool {
		resp, err := http.Get(url)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, within, url+" to answer 200")
}

// adminJSON runs `gateway admin args...` and decodes its one JSON object.
func adminJSON(t testing.TB, env []string, args ...string) map[string]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, gatewayBinary(t), append([]string{"admin"}, args...)...)
	// Development secrets, as for startProcess: admin refuses them outside development.
	cmd.Env = withDirectURL(append(append(os.Environ(), "GATEWAY_ENV=development"), env...))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("gateway admin %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	var out map[string]any
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatalf("gateway admin %s printed %q: %v", strings.Join(args, " "), stdout.String(), err)
	}
	return out
}
