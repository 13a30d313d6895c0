package main

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"gateway/server/servertest/wait"
	"gateway/store/storetest"
)

// A newcomer's first minutes, from what `gateway dev` prints and nothing else: the banner's
// shell lines run as pasted (keys exported, a live send, its poll); the service's address leads
// to the dashboard; the printed sign-in opens the workspace the keys belong to, whose messages
// list shows that send; a webhook to `gateway receive` on this machine is accepted and its test
// event arrives; and no log line is written under the banner.
func TestDevFirstRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the gateway binary")
	}
	addr, sim := freeAddr(t), freeAddr(t)
	dev := startProcess(t, []string{"DATABASE_URL=" + storetest.DSN(t), "GATEWAY_ADDR=" + addr, "PLATFORM_SIM_ADDR=" + sim,
		"PLATFORM_SIM_DELAYS=100ms,200ms,300ms", "LOG_LEVEL="}, "dev")
	wait.For(t, func() bool { return strings.Contains(dev.out.String(), "Request logs:") }, 60*time.Second, "the banner")
	base := "http://" + addr
	banner := dev.out.String()

	// The banner's shell lines, as pasted: the exports, then the live send and its poll.
	var script []string
	lines := strings.Split(banner, "\n")
	for i := 0; i < len(lines); i++ {
		l := strings.TrimSpace(lines[i])
		switch {
		case strings.HasPrefix(l, "export LIVE=") || strings.HasPrefix(l, "export TEST="):
			script = append(script, l)
		case strings.HasPrefix(l, "MESSAGE_ID=$("):
			for ; strings.HasSuffix(strings.TrimSpace(lines[i]), `\`); i++ {
				script = append(script, lines[i])
			}
			script = append(script, lines[i])
		case strings.HasPrefix(l, "curl -s "+base+"/v1/messages/$MESSAGE_ID"):
			script = append(script, l)
		}
	}
	if len(script) < 6 {
		t.Fatalf("the banner lacks its shell lines:\n%s", banner)
	}
	out, err := exec.Command("bash", "-c", "set -eu\n"+strings.Join(script, "\n")).CombinedOutput()
	if err != nil {
		t.Fatalf("the banner's lines, as pasted: %v\n%s\n---\n%s", err, strings.Join(script, "\n"), out)
	}
	m := regexp.MustCompile(`message (\d+)\n\{"data":\{.*"status":"(sent|delivered|read)"`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("the banner's send and poll printed:\n%s", out)
	}
	messageID := string(m[1])
	for _, l := range strings.Split(banner[strings.Index(banner, "Messaging Gateway (local)"):], "\n") {
		if strings.HasPrefix(l, "{") {
			t.Fatalf("a log line among the banner: %s", l)
		}
	}

	// The service's address leads to the dashboard.
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: 30 * time.Second}
	resp, err := c.Get(base + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.Request.URL.Path != "/dashboard/signin" && resp.Request.URL.Path != "/dashboard" {
		t.Fatalf("/ led to %s", resp.Request.URL)
	}

	// The printed sign-in opens the workspace of the printed keys: the send is in its list.
	sm := regexp.MustCompile(`sign in as (\S+) with the password (\S+)`).FindStringSubmatch(banner)
	if sm == nil {
		t.Fatalf("no sign-in in the banner:\n%s", banner)
	}
	body := post(t, c, base+"/dashboard/signin", url.Values{"email": {sm[1]}, "password": {sm[2]}})
	if !strings.Contains(body, "Sign out") {
		t.Fatalf("signing in with the printed password:\n%s", tail(body, 2000))
	}
	if page := get(t, c, base+"/dashboard/messages"); !strings.Contains(page, `href="/dashboard/messages/`+messageID+`"`) {
		t.Fatalf("the messages list lacks message %s:\n%s", messageID, tail(page, 3000))
	}

	// A receiver on this machine: allowed, and the test event reaches it.
	raddr := freeAddr(t)
	recv := startProcess(t, nil, "receive", "--addr", raddr)
	waitHTTPStatus(t, "http://"+raddr+"/", http.StatusMethodNotAllowed)
	page := post(t, c, base+"/dashboard/webhooks", url.Values{"url": {"http://" + raddr + "/hook"}})
	id := regexp.MustCompile(`/dashboard/webhooks/(\d+)/test`).FindStringSubmatch(page)
	if id == nil {
		t.Fatalf("adding a receiver on this machine:\n%s", tail(page, 3000))
	}
	post(t, c, base+"/dashboard/webhooks/"+id[1]+"/test", nil)
	wait.For(t, func() bool { return strings.Contains(recv.out.String(), `"event":"webhook.test"`) }, 30*time.Second,
		"the test event at gateway receive")
}

func get(t *testing.T, c *http.Client, u string) string {
	t.Helper()
	resp, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func post(t *testing.T, c *http.Client, u string, form url.Values) string {
	t.Helper()
	resp, err := c.PostForm(u, form)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// waitHTTPStatus polls u until it answers status.
func waitHTTPStatus(t *testing.T, u string, status int) {
	t.Helper()
	wait.For(t, func() bool {
		resp, err := http.Get(u)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == status
	}, 30*time.Second, u+" to answer")
}

func TestSimDelays(t *testing.T) {
	for in, ok := range map[string]bool{"1s,3s,6s": true, "0s, 0s, 0s": true, "100ms,2s,2s": true,
		"1s,3s": false, "3s,1s,6s": false, "1s,3s,x": false, "-1s,3s,6s": false} {
		cfg, err := loadConfig(func(k string) string {
			if k == "PLATFORM_SIM_DELAYS" {
				return in
			}
			return ""
		})
		if (err == nil) != ok {
			t.Errorf("PLATFORM_SIM_DELAYS=%q: %v", in, err)
		}
		if ok && cfg.SimDelays[2] < cfg.SimDelays[0] {
			t.Errorf("PLATFORM_SIM_DELAYS=%q read as %v", in, cfg.SimDelays)
		}
	}
}
