package bench

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"gateway/platform/eventhook"
)

func TestParseLifecycleFlags(t *testing.T) {
	o, err := parseLifecycleFlags([]string{"--rates", "50,100", "--step", "15s", "--accounts", "2"}, "postgres://x/gateway_bench", io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Rates) != 2 || o.Rates[1] != 100 || o.Step != 15*time.Second || o.Accounts != 2 || o.DatabaseURL != "postgres://x/gateway_bench" {
		t.Fatalf("options %+v", o)
	}
	if o, err := parseLifecycleFlags([]string{"--pooler-url", "postgres://p/db", "--pooler-pid", "42"}, "", io.Discard); err != nil || o.PoolerPID != 42 {
		t.Fatalf("--pooler-pid: %+v, %v", o, err)
	}
	for _, bad := range [][]string{{"--rates", "0"}, {"--step", "500ms"}, {"--accounts", "0"}, {"--clients", "5000"}, {"extra"},
		{"--pooler-pid", "42"}, {"--pooler-pid", "-1", "--pooler-url", "postgres://p/db"}} {
		if _, err := parseLifecycleFlags(bad, "", io.Discard); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}

func TestReceiverChecksSignatures(t *testing.T) {
	secrets, err := parseReceiverSecrets("7=whsec_c2VjcmV0;8=whsec_b3RoZXI=")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(newReceiver(secrets))
	defer srv.Close()
	post := func(path, sig string, body []byte) int {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, srv.URL+path, bytes.NewReader(body))
		req.Header.Set(eventhook.HeaderSignature, sig)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	created := time.Now().Add(-40 * time.Millisecond).UTC().Format(time.RFC3339Nano)
	read := []byte(`{"id":"e1","event":"message.status","created_at":"` + created + `","data":{"status":"read"}}`)
	sent := []byte(`{"id":"e2","event":"message.sent","created_at":"` + created + `","data":{}}`)
	if code := post("/hook/7", eventhook.Signature("whsec_c2VjcmV0", read), read); code != http.StatusNoContent {
		t.Fatalf("good signature answered %d", code)
	}
	if code := post("/hook/7", eventhook.Signature("whsec_c2VjcmV0", sent), sent); code != http.StatusNoContent {
		t.Fatalf("good signature answered %d", code)
	}
	if code := post("/hook/8", eventhook.Signature("whsec_c2VjcmV0", read), read); code != http.StatusUnauthorized {
		t.Fatalf("another endpoint's signature answered %d", code)
	}
	if code := post("/hook/9", "x", read); code != http.StatusBadRequest {
		t.Fatalf("unknown endpoint answered %d", code)
	}
	resp, err := http.Get(srv.URL + "/stats?reset=1")
	if err != nil {
		t.Fatal(err)
	}
	var st receiverStats
	json.NewDecoder(resp.Body).Decode(&st)
	resp.Body.Close()
	if st.Reads != 1 || st.Events["message.status"] != 1 || st.Events["message.sent"] != 1 || st.BadSignature != 1 || st.Unknown != 1 {
		t.Fatalf("stats %+v", st)
	}
	if st.StatusLagP50 < 40*time.Millisecond || st.StatusLagP50 > 10*time.Second {
		t.Fatalf("lag %s, want about 40ms", st.StatusLagP50)
	}
	resp, _ = http.Get(srv.URL + "/stats")
	json.NewDecoder(resp.Body).Decode(&st)
	resp.Body.Close()
	if st.Reads != 0 || st.StatusLags != 0 {
		t.Fatalf("after reset: %+v", st)
	}
	if _, err := parseReceiverSecrets("7"); err == nil {
		t.Fatal("a pair without a secret was accepted")
	}
}

func TestJudgeLifecycleStep(t *testing.T) {
	ok := stepResult{Rate: 100, Sends: 6000, SendsPerSec: 100, LifecyclesSec: 99, DrainedOK: true,
		Mid: lcBacklog{SimPending: 40}, End: lcBacklog{SimPending: 35}}
	if sustained, why := judge(ok); !sustained {
		t.Fatalf("a clean step was judged not sustained: %s", why)
	}
	for name, mutate := range map[string]func(*stepResult){
		"slow sends":    func(r *stepResult) { r.SendsPerSec = 80 },
		"missed":        func(r *stepResult) { r.Missed = 3 },
		"errors":        func(r *stepResult) { r.Errors = 50 },
		"reads behind":  func(r *stepResult) { r.LifecyclesSec = 60 },
		"due grows":     func(r *stepResult) { r.End.Due = 500 },
		"old due":       func(r *stepResult) { r.Mid.OldestDueS = 5 },
		"parked":        func(r *stepResult) { r.End.Parked = 1000 },
		"sim backlog":   func(r *stepResult) { r.End.SimPending = 1000 },
		"bad signature": func(r *stepResult) { r.Recv.BadSignature = 1 },
		"did not drain": func(r *stepResult) { r.DrainedOK = false },
	} {
		r := ok
		mutate(&r)
		if sustained, why := judge(r); sustained || why == "" {
			t.Errorf("%s: judged sustained", name)
		} else if strings.TrimSpace(why) == "" {
			t.Errorf("%s: no reason given", name)
		}
	}
}
