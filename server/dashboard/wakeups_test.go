package dashboard_test

import (
	"net/http"
	"strings"
	"testing"

	"gateway/server"
	"gateway/server/dashboard"
	"gateway/server/servertest"
)

// The webhooks page says how this gateway's dispatchers learn of new events: LISTEN on the
// direct database connection, or polling when there is none (DATABASE_URL is a transaction
// pooler and DATABASE_DIRECT_URL is not set).
func TestWebhooksPageSaysWakeUpMode(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		noListen  bool
		want, not string
	}{
		{false, "wake-ups by LISTEN", "wake-ups by polling"},
		{true, "wake-ups by polling", "wake-ups by LISTEN"},
	} {
		env := servertest.New(t, servertest.Config{Options: server.Options{NoListen: tc.noListen},
			Dashboard: dashboard.Options{Development: true, SignupOpen: true}})
		u := signUp(t, env, "Wake Co", "owner@wake.example")
		p := u.get("/dashboard/webhooks")
		line := find(t, regexpMust(`<p class="help" id="wake-ups">([^<]*)</p>`), p.Body)
		if p.Status != http.StatusOK || !strings.Contains(line, tc.want) || strings.Contains(line, tc.not) {
			t.Errorf("NoListen=%t: %d, the wake-up line reads %q", tc.noListen, p.Status, line)
		}
	}
}
