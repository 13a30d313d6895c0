package dashboard

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"gateway/store"
)

// A cell a spreadsheet would read as a formula (or as the start of one after the tab or
// carriage return it skips) is kept as text with a leading quote; the full-width forms of the
// formula signs count too. Anything else is unchanged.
func TestCSVSafe(t *testing.T) {
	for in, want := range map[string]string{
		"=HYPERLINK(\"http://x\")": "'=HYPERLINK(\"http://x\")",
		"+1+1":                     "'+1+1",
		"-2+3":                     "'-2+3",
		"@SUM(A1)":                 "'@SUM(A1)",
		"\t=1+1":                   "'\t=1+1",
		"\r=1+1":                   "'\r=1+1",
		"\n=1+1":                   "\n=1+1",
		"＝1+1":                     "'＝1+1",
		"＋1":                       "'＋1",
		"－1":                       "'－1",
		"＠SUM(A1)":                 "'＠SUM(A1)",
		"order_confirmation":       "order_confirmation",
		"Message undeliverable":    "Message undeliverable",
		"5511987654321":            "5511987654321",
		"":                         "",
		"a=b":                      "a=b",
	} {
		if got := csvSafe(in); got != want {
			t.Errorf("csvSafe(%q) = %q, want %q", in, got, want)
		}
	}
}

func exportDashboard(t *testing.T, perWorkspace int) *Dashboard {
	t.Helper()
	d, err := New(Config{Options: Options{ExportsPerWorkspace: perWorkspace},
		NewAPIKey:          func(string) (string, []byte, string, error) { return "", nil, "", nil },
		ValidateWebhookURL: func(string, bool) error { return nil },
		EventBody:          func(store.Event) []byte { return nil },
		Logger:             slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// A database failure after the first chunk ends the file with an "# export failed" row and no
// trailer, and the workspace's slot is free again afterwards; a download beyond the
// workspace's slots is a 429 page.
func TestCSVExportFailureAndSlots(t *testing.T) {
	d := exportDashboard(t, 1)
	s := &store.Session{AccountID: 7}
	chunks := 0
	next := func(context.Context) ([][]string, error) {
		if chunks++; chunks == 1 {
			return [][]string{{"1", "=x"}}, nil
		}
		return nil, errors.New("connection refused")
	}
	rec := httptest.NewRecorder()
	d.csvExport(rec, httptest.NewRequest("GET", "/dashboard/x.csv", nil), s, "x.csv", "/dashboard/x", []string{"id", "name"}, next)
	if want := "id,name\n1,'=x\n# export failed,the download stopped early: download the file again\n"; rec.Body.String() != want {
		t.Fatalf("body %q, want %q", rec.Body.String(), want)
	}
	if !d.exports.acquire(s.AccountID) {
		t.Fatal("the failed download kept its slot")
	}
	rec = httptest.NewRecorder()
	d.csvExport(rec, httptest.NewRequest("GET", "/dashboard/x.csv", nil), s, "x.csv", "/dashboard/x", []string{"id", "name"}, next)
	if rec.Code != http.StatusTooManyRequests || !strings.Contains(rec.Body.String(), `href="/dashboard/x"`) {
		t.Fatalf("over the slots: %d\n%s", rec.Code, rec.Body)
	}
	if other := (&store.Session{AccountID: 8}); !d.exports.acquire(other.AccountID) {
		t.Fatal("another workspace's slot was taken")
	}
}
