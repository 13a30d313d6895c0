package dashboard_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"gateway/platform/simulator"
	"gateway/platform/whatsapp"
	"gateway/server/dashboard"
	"gateway/server/dashboard/browsertest"
	"gateway/server/onboarding"
	"gateway/server/servertest"
)

// Embedded Signup end to end with the real onboarding service and the platform simulator's
// SDK stand-in and sign-up window: "Connect WhatsApp" opens the window, Finish creates a
// WABA and number, and the server's steps (exchange, read, subscribe, register, save) connect
// it to the workspace.
func TestEmbeddedSignupWithSimulator(t *testing.T) {
	const appID, appSecret, configID = "app-1001", "sim-app-secret", "es-config-1"
	sim := simulator.New(simulator.Config{AppID: appID, AppSecret: appSecret})
	simURL, err := sim.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sim.Close() })
	wa := whatsapp.NewClient(simURL+"/v23.0", nil)
	svc := &onboarding.Service{Platform: wa, AppID: appID, AppSecret: appSecret, ConfigID: configID, SDKURL: simURL + "/sdk.js"}
	env := servertest.New(t, servertest.Config{
		Dashboard: dashboard.Options{Development: true, SignupOpen: true, PlatformAppID: appID, PlatformESConfigID: configID, PlatformSDKURL: svc.SDKURL},
		Platform:  wa,
		Connector: svc,
	})
	svc.Store = env.Store
	b := browsertest.New(t)
	base := env.URL + "/dashboard"
	b.Run("sign up", chromedp.Navigate(base+"/signup"),
		chromedp.SendKeys("#workspace", "Sim Co", chromedp.ByQuery),
		chromedp.SendKeys("#email", "sim@example.com", chromedp.ByQuery),
		chromedp.SendKeys("#password", "a long enough password", chromedp.ByQuery),
		chromedp.Submit("#password", chromedp.ByQuery),
		chromedp.WaitVisible("#connect-whatsapp", chromedp.ByQuery))
	popups := chromedp.WaitNewTarget(b.Ctx, func(i *target.Info) bool { return strings.Contains(i.URL, "/dialog/embedded_signup") })
	b.Run("connect", chromedp.Evaluate(`window.__browsertestPage = true`, nil), chromedp.Click("#connect-whatsapp", chromedp.ByQuery))
	var id target.ID
	select {
	case id = <-popups:
	case <-time.After(30 * time.Second):
		b.Snapshot("no-popup")
		t.Fatal("the sign-up window did not open")
	}
	pctx, cancel := chromedp.NewContext(b.Ctx, chromedp.WithTargetID(id))
	defer cancel()
	ctx, cancel2 := context.WithTimeout(pctx, 30*time.Second)
	defer cancel2()
	if err := chromedp.Run(ctx, chromedp.WaitVisible(`button[value="finish"]`, chromedp.ByQuery), chromedp.Click(`button[value="finish"]`, chromedp.ByQuery)); err != nil {
		t.Fatalf("the sign-up window: %v", err)
	}
	b.WaitNewPage()
	b.Run("overview", chromedp.WaitVisible("main", chromedp.ByQuery))
	txt := b.Text("main")
	if !strings.Contains(txt, "Your WhatsApp number is connected") {
		t.Fatalf("overview after Embedded Signup: %s", txt)
	}
	if !strings.Contains(txt, "Quality rating") || !strings.Contains(txt, "GREEN") {
		t.Fatalf("overview after Embedded Signup shows no quality rating from the platform: %s", txt)
	}
	conn, err := env.Store.ConnectionByAccount(context.Background(), accountOf(t, env.Store, "sim@example.com"))
	if err != nil || conn.PhoneNumberID == "" || !strings.Contains(txt, conn.PhoneNumberID) {
		t.Fatalf("connection %+v, %v", conn, err)
	}
	if st, ok := sim.Onboarding(conn.PhoneNumberID); !ok || !st.Registered || !st.AppSubscribed {
		t.Fatalf("the simulator's state of %s: %+v (known %t): want registered and subscribed", conn.PhoneNumberID, st, ok)
	}
	b.CheckPage("connected-by-es")
}
