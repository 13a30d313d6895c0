// Package browsertest drives real headless Chromium (Debian's chromium) from Go tests with
// chromedp, checks pages with axe-core, and keeps a screenshot of each page it checked, written
// to disk when the test fails. `.ci/browser-up` installs chromium and fetches axe-core; a test
// that cannot find either fails rather than skips.
package browsertest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// AxeVersion is the pinned axe-core release (.ci/browser-up fetches it).
const AxeVersion = "4.10.3"

// Browser is one headless Chromium with a fresh profile, closed at test cleanup.
type Browser struct {
	T   testing.TB
	Ctx context.Context
	// Width and Height are the viewport.
	Width, Height int

	mu    sync.Mutex
	shots []shot
	axe   string
}

type shot struct {
	name string
	png  []byte
}

// ChromiumPath is CHROMIUM, else /usr/bin/chromium.
func ChromiumPath() string {
	if p := os.Getenv("CHROMIUM"); p != "" {
		return p
	}
	return "/usr/bin/chromium"
}

// New starts Chromium with a 1280 × 900 viewport (BROWSER_WIDTH sets another width, to look at
// the pages as a phone shows them: BROWSER_WIDTH=390). It fails the test when Chromium is
// missing.
func New(t testing.TB) *Browser {
	t.Helper()
	path := ChromiumPath()
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("chromium not found at %s (run .ci/browser-up): %v", path, err)
	}
	// The profile is removed by us, after Chromium exits: its helper processes may still write
	// for a moment after the browser is gone, which t.TempDir's cleanup would report.
	profile, err := os.MkdirTemp("", "browsertest-profile-")
	if err != nil {
		t.Fatal(err)
	}
	width := 1280
	if w, err := strconv.Atoi(os.Getenv("BROWSER_WIDTH")); err == nil && w > 0 {
		width = w
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(profile),
		chromedp.WindowSize(width, 900),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	b := &Browser{T: t, Ctx: ctx, Width: width, Height: 900}
	// The viewport is emulated too: a headless window is never narrower than 500 px.
	if err := chromedp.Run(ctx, chromedp.EmulateViewport(int64(width), 900)); err != nil {
		cancel()
		cancelAlloc()
		t.Fatalf("start chromium: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() || os.Getenv("SCREENSHOT_DIR") != "" {
			b.writeShots()
		}
		cancel()
		cancelAlloc()
		for range 20 {
			if os.RemoveAll(profile) == nil {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
	return b
}

// Run runs actions with a 30 s deadline and fails the test (after a screenshot) on error.
func (b *Browser) Run(what string, actions ...chromedp.Action) {
	b.T.Helper()
	ctx, cancel := context.WithTimeout(b.Ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Run(ctx, actions...); err != nil {
		b.Snapshot("failed-" + what)
		b.T.Fatalf("%s: %v", what, err)
	}
}

// Text returns the text content of the first element matching the CSS selector.
func (b *Browser) Text(sel string) string {
	b.T.Helper()
	var s string
	b.Run("read "+sel, chromedp.Text(sel, &s, chromedp.ByQuery))
	return strings.TrimSpace(s)
}

// Location returns the page's URL.
func (b *Browser) Location() string {
	b.T.Helper()
	var u string
	b.Run("location", chromedp.Location(&u))
	return u
}

// Eval evaluates a JavaScript expression into out (which may be nil).
func (b *Browser) Eval(expr string, out any) {
	b.T.Helper()
	b.Run("eval", chromedp.Evaluate(expr, out))
}

// PressOn moves the keyboard focus with Tab, from the start of the page, until the element
// matching sel has it, then presses Enter and waits for the next page to load: it proves the
// control is reachable and usable by keyboard. It fails when Tab does not reach the element
// within 80 presses or no new page loads within 30 s.
func (b *Browser) PressOn(sel string) {
	b.T.Helper()
	b.Run("blur", chromedp.Evaluate(`document.activeElement && document.activeElement.blur(); window.__browsertestPage = true`, nil))
	for i := 0; i < 80; i++ {
		var at bool
		b.Run("tab", chromedp.KeyEvent(kb.Tab), chromedp.Evaluate(fmt.Sprintf(`document.activeElement === document.querySelector(%q)`, sel), &at))
		if at {
			b.Run("enter on "+sel, chromedp.KeyEvent(kb.Enter))
			b.WaitNewPage()
			return
		}
	}
	b.Snapshot("unreachable")
	b.T.Fatalf("keyboard: Tab never reached %s", sel)
}

// FocusAndPress puts the keyboard focus on the element matching sel, presses Enter and waits for
// the next page to load: for a control past many others (a pagination link under a long table),
// where PressOn's walk with Tab would take hundreds of presses.
func (b *Browser) FocusAndPress(sel string) {
	b.T.Helper()
	var focused bool
	b.Run("focus "+sel, chromedp.Evaluate(fmt.Sprintf(`window.__browsertestPage = true; (document.querySelector(%q) || {focus() {}}).focus(); document.activeElement === document.querySelector(%q)`, sel, sel), &focused))
	if !focused {
		b.Snapshot("unfocusable")
		b.T.Fatalf("keyboard: %s cannot take the focus", sel)
	}
	b.Run("enter on "+sel, chromedp.KeyEvent(kb.Enter))
	b.WaitNewPage()
}

// WaitNewPage waits until the page marked by PressOn was replaced by a new, loaded one.
func (b *Browser) WaitNewPage() {
	b.T.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		var done bool
		ctx, cancel := context.WithTimeout(b.Ctx, 5*time.Second)
		err := chromedp.Run(ctx, chromedp.Evaluate(`window.__browsertestPage !== true && document.readyState === "complete"`, &done))
		cancel()
		if err == nil && done {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	b.Snapshot("no-new-page")
	b.T.Fatal("no new page loaded within 30 s")
}

// Snapshot keeps a full-page screenshot of the current page under name; the screenshots are
// written to disk if the test fails, or always when SCREENSHOT_DIR is set (to look at them).
func (b *Browser) Snapshot(name string) {
	var png []byte
	ctx, cancel := context.WithTimeout(b.Ctx, 10*time.Second)
	defer cancel()
	if err := chromedp.Run(ctx, chromedp.FullScreenshot(&png, 100)); err != nil {
		return
	}
	b.mu.Lock()
	b.shots = append(b.shots, shot{name: name, png: png})
	b.mu.Unlock()
}

// ScreenshotDir is where failure screenshots go: SCREENSHOT_DIR, else testdata/screenshots
// under the test's package (gitignored).
func ScreenshotDir() string {
	if d := os.Getenv("SCREENSHOT_DIR"); d != "" {
		return d
	}
	return filepath.Join("testdata", "screenshots")
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

// SaveScreenshot writes a PNG of the current page to dir/name.png and returns its path.
func (b *Browser) SaveScreenshot(dir, name string) string {
	b.T.Helper()
	var png []byte
	b.Run("screenshot", chromedp.FullScreenshot(&png, 100))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.T.Fatal(err)
	}
	p := filepath.Join(dir, unsafeName.ReplaceAllString(name, "_")+".png")
	if err := os.WriteFile(p, png, 0o644); err != nil {
		b.T.Fatal(err)
	}
	return p
}

func (b *Browser) writeShots() {
	dir := filepath.Join(ScreenshotDir(), unsafeName.ReplaceAllString(b.T.Name(), "_"))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.T.Logf("screenshots: %v", err)
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for i, s := range b.shots {
		p := filepath.Join(dir, fmt.Sprintf("%02d-%s.png", i, unsafeName.ReplaceAllString(s.name, "_")))
		if err := os.WriteFile(p, s.png, 0o644); err == nil {
			abs, _ := filepath.Abs(p)
			b.T.Logf("screenshot: %s", abs)
		}
	}
}

// AxePath finds axe.min.js: AXE_CORE_JS, else .cache/axe-core/<AxeVersion>/axe.min.js in the
// module root (found by walking up to go.mod).
func AxePath() (string, error) {
	if p := os.Getenv("AXE_CORE_JS"); p != "" {
		return p, nil
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, ".cache", "axe-core", AxeVersion, "axe.min.js"), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod above the working directory")
		}
		dir = parent
	}
}

// Violation is one axe-core rule a page breaks.
type Violation struct {
	ID     string   `json:"id"`
	Impact string   `json:"impact"`
	Help   string   `json:"help"`
	Nodes  []string `json:"nodes"`
}

// CheckPage snapshots the current page under name and runs axe-core on it; serious and
// critical violations fail the test. A missing axe-core fails it too (run .ci/browser-up).
func (b *Browser) CheckPage(name string) []Violation {
	b.T.Helper()
	b.Snapshot(name)
	if b.axe == "" {
		p, err := AxePath()
		if err == nil {
			var src []byte
			src, err = os.ReadFile(p)
			b.axe = string(src)
		}
		if err != nil {
			b.T.Fatalf("axe-core is missing (run .ci/browser-up): %v", err)
		}
	}
	var has bool
	b.Run("axe present", chromedp.Evaluate(`typeof window.axe === "object"`, &has))
	if !has {
		b.Run("inject axe", chromedp.Evaluate(b.axe, nil))
	}
	var raw string
	b.Run("axe run "+name, chromedp.Evaluate(`axe.run(document, {resultTypes: ["violations"]}).then(r => JSON.stringify(r.violations.map(v => ({id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map(n => n.target.join(" "))}))))`,
		&raw, func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) }))
	var vs []Violation
	if err := json.Unmarshal([]byte(raw), &vs); err != nil {
		b.T.Fatalf("axe result: %v", err)
	}
	for _, v := range vs {
		if v.Impact == "serious" || v.Impact == "critical" {
			b.T.Errorf("axe on %s: %s (%s): %s at %v", name, v.ID, v.Impact, v.Help, v.Nodes)
		}
	}
	return vs
}
