package whatsapp

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
)

// The exact requests of the onboarding calls.
func TestOnboardingRequests(t *testing.T) {
	ctx := context.Background()
	fp := newFakePlatform(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case strings.HasSuffix(r.URL.Path, "/oauth/access_token"):
			w.Write([]byte(`{"access_token":"EAAB-business","token_type":"bearer"}`))
		case strings.HasSuffix(r.URL.Path, "/phone_numbers"):
			w.Write([]byte(`{"data":[{"id":106540352242922,"display_phone_number":"+1 555-078-3881","verified_name":"Acme","quality_rating":"RED"}]}`))
		case r.Method == http.MethodGet:
			w.Write([]byte(`{"id":"106540352242922","display_phone_number":"+44 7700 900123","verified_name":"Acme","quality_rating":"YELLOW","messaging_limit_tier":"TIER_10K","throughput":{"level":"HIGH"}}`))
		default:
			w.Write([]byte(`{"success":true}`))
		}
	})
	c := NewClient(fp.URL+"/v23.0", nil)

	tok, err := c.ExchangeCode(ctx, "1234", "s3cret", "AQ-code")
	if err != nil || tok != "EAAB-business" {
		t.Fatalf("ExchangeCode = %q, %v", tok, err)
	}
	n, err := c.PhoneNumber(ctx, testToken, testPhoneID)
	if err != nil {
		t.Fatal(err)
	}
	if n.Digits != "447700900123" || n.QualityRating != "YELLOW" || n.MessagingLimitTier != "TIER_10K" || n.ThroughputLevel != "HIGH" {
		t.Fatalf("PhoneNumber = %+v", n)
	}
	list, err := c.PhoneNumbers(ctx, testToken, "102290129340398")
	if err != nil || len(list) != 1 || list[0].ID != "106540352242922" || list[0].Digits != "15550783881" {
		t.Fatalf("PhoneNumbers = %+v, %v", list, err)
	}
	if err := c.SubscribeApp(ctx, testToken, "102290129340398"); err != nil {
		t.Fatal(err)
	}
	if err := c.RegisterNumber(ctx, testToken, testPhoneID, "012345"); err != nil {
		t.Fatal(err)
	}

	reqs := fp.requests()
	x := reqs[0]
	if x.Method != http.MethodGet || x.Path != "/v23.0/oauth/access_token" || x.Header.Get("Authorization") != "" ||
		x.Query.Get("client_id") != "1234" || x.Query.Get("client_secret") != "s3cret" || x.Query.Get("code") != "AQ-code" {
		t.Errorf("exchange request %s %s %v", x.Method, x.RequestURI, x.Header)
	}
	if r := reqs[1]; r.Path != "/v23.0/"+testPhoneID || !strings.Contains(r.Query.Get("fields"), "quality_rating") {
		t.Errorf("phone number request %s", r.RequestURI)
	}
	if r := reqs[2]; r.Path != "/v23.0/102290129340398/phone_numbers" {
		t.Errorf("phone numbers request %s", r.RequestURI)
	}
	if r := reqs[3]; r.Method != http.MethodPost || r.Path != "/v23.0/102290129340398/subscribed_apps" || len(r.Body) != 0 {
		t.Errorf("subscribe request %s %s %q", r.Method, r.RequestURI, r.Body)
	}
	r := reqs[4]
	if r.Method != http.MethodPost || r.Path != "/v23.0/"+testPhoneID+"/register" {
		t.Errorf("register request %s %s", r.Method, r.RequestURI)
	}
	for _, r := range reqs[1:] {
		assertPlatformHeaders(t, r)
	}
	assertGoldenJSON(t, "register_request.golden.json", r.Body)

	// A success answer without success: true is not taken as success.
	fp2 := newFakePlatform(t, answer(http.StatusOK, []byte(`{"success":false}`)))
	if err := NewClient(fp2.URL+"/v23.0", nil).SubscribeApp(ctx, testToken, "1"); err == nil {
		t.Fatal("success:false accepted")
	}
}

// A transport failure of the code exchange does not carry the app secret or the code.
func TestExchangeCodeErrorHidesSecret(t *testing.T) {
	fp := newFakePlatform(t, answer(http.StatusOK, nil))
	base := fp.URL
	fp.Close()
	_, err := NewClient(base+"/v23.0", nil).ExchangeCode(context.Background(), "1234", "s3cret-value", "AQ-code-value")
	if err == nil || !errors.Is(err, ErrUnavailable) {
		t.Fatalf("err = %v", err)
	}
	if strings.Contains(err.Error(), "s3cret-value") || strings.Contains(err.Error(), "AQ-code-value") {
		t.Fatalf("the error shows the secret: %v", err)
	}
}
