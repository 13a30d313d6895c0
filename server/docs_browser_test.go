package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"gateway/server/servertest"
)

// chromium returns the browser the browser tests drive (Debian's, installed by
// .ci/browser-up), skipping the test when there is none.
func chromium(t *testing.T) string {
	t.Helper()
	for _, p := range []string{os.Getenv("CHROMIUM"), "/usr/bin/chromium", "chromium"} {
		if p == "" {
			continue
		}
		if path, err := exec.LookPath(p); err == nil {
			return path
		}
	}
	t.Skip("no chromium: run .ci/browser-up (make test does)")
	return ""
}

// /docs renders the API reference offline in headless Chromium: every operation and every
// webhook event of openapi.yaml is in its menu, the delivery headers are shown, no request
// leaves the gateway's origin, and nothing breaks the Content-Security-Policy. It saves a
// screenshot and logs its path.
func TestDocsRenderOfflineInChromium(t *testing.T) {
	t.Parallel()
	bin := chromium(t)
	env := servertest.New(t, servertest.Config{})

	// The page and its assets carry the policy.
	for _, p := range []string{"/docs", "/docs/init.js", "/docs/redoc.standalone.js"} {
		r := env.Do(servertest.Request{Method: http.MethodGet, Path: p})
		if r.Status != http.StatusOK || !strings.Contains(r.Header.Get("Content-Security-Policy"), "default-src 'none'") {
			t.Fatalf("%s: %d, CSP %q", p, r.Status, r.Header.Get("Content-Security-Policy"))
		}
	}

	// A fresh profile, removed best-effort: Chromium's helper processes may still be writing
	// into it for a moment after the browser exits, which would fail t.TempDir's cleanup.
	profile, err := os.MkdirTemp("", "gateway-docs-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for range 20 {
			if os.RemoveAll(profile) == nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(bin), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.UserDataDir(profile), chromedp.WindowSize(1400, 1000),
	}
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancel = context.WithTimeout(ctx, 90*time.Second)
	defer cancel()

	var mu sync.Mutex
	var outside, problems []string
	chromedp.ListenTarget(ctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch e := ev.(type) {
		case *network.EventRequestWillBeSent:
			u := e.Request.URL
			if !strings.HasPrefix(u, env.URL+"/") && !strings.HasPrefix(u, "data:") && !strings.HasPrefix(u, "blob:") {
				outside = append(outside, u)
			}
		case *log.EventEntryAdded:
			if e.Entry.Level == log.LevelError {
				problems = append(problems, string(e.Entry.Source)+": "+e.Entry.Text+" "+e.Entry.URL)
			}
		case *runtime.EventExceptionThrown:
			problems = append(problems, "exception: "+e.ExceptionDetails.Text)
		}
	})

	var labels []string
	var body string
	var shot []byte
	err = chromedp.Run(ctx,
		network.Enable(), log.Enable(), runtime.Enable(),
		chromedp.Navigate(env.URL+"/docs"),
		chromedp.WaitVisible(`.menu-content`, chromedp.ByQuery),
		chromedp.WaitVisible(`.api-content`, chromedp.ByQuery),
		chromedp.Evaluate(`Array.from(document.querySelectorAll('.menu-content label')).map(l => l.innerText.trim())`, &labels),
		chromedp.Evaluate(`document.body.innerText`, &body),
		chromedp.CaptureScreenshot(&shot),
	)
	if err != nil {
		t.Fatalf("browser: %v", err)
	}
	dir := filepath.Join("testdata", "screenshots")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path, _ := filepath.Abs(filepath.Join(dir, "docs.png"))
	if err := os.WriteFile(path, shot, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot of /docs: %s", path)

	menu := strings.Join(labels, "\n")
	for _, item := range env.Spec.Paths.Map() {
		for method, op := range item.Operations() {
			if !strings.Contains(menu, op.Summary) {
				t.Errorf("operation %s %s (%q) is not in the menu", method, op.OperationID, op.Summary)
			}
		}
	}
	var webhooks map[string]map[string]struct {
		Summary string `json:"summary"`
	}
	raw, _ := json.Marshal(env.Spec.Extensions["x-webhooks"])
	if err := json.Unmarshal(raw, &webhooks); err != nil || len(webhooks) == 0 {
		t.Fatalf("x-webhooks: %v (%d)", err, len(webhooks))
	}
	for name, ops := range webhooks {
		for _, op := range ops {
			if !strings.Contains(menu, op.Summary) {
				t.Errorf("webhook event %s (%q) is not in the menu", name, op.Summary)
			}
		}
	}
	for _, h := range []string{"X-Service-Signature", "X-Service-Delivery", "webhook-signature"} {
		if !strings.Contains(body, h) {
			t.Errorf("delivery header %s is not shown", h)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(outside) > 0 {
		t.Errorf("requests left the gateway's origin: %v", slices.Compact(outside))
	}
	if len(problems) > 0 {
		t.Errorf("errors in the page (CSP violations, exceptions): %v", problems)
	}
}
