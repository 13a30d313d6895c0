package whatsapp

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"
)

const (
	testToken   = "EAAG-test-token-123"
	testPhoneID = "106540352242922"
)

func assertPlatformHeaders(t *testing.T, r recordedRequest) {
	t.Helper()
	if got := r.Header.Get("Authorization"); got != "Bearer "+testToken {
		t.Errorf("Authorization = %q", got)
	}
	if got := r.Header.Get("Content-Type"); got != "application/json" {
		t.Errorf("Content-Type = %q", got)
	}
}

func TestSendTemplateRequestAndResult(t *testing.T) {
	tests := []struct {
		name   string
		base   string // appended to the server URL
		send   TemplateSend
		golden string
	}{
		{
			name: "positional header and body with callback data",
			base: "/v23.0",
			send: TemplateSend{
				To: "+5511987654321", Name: "order_shipped", Language: "pt_BR",
				HeaderParams: []string{"ORD-7781"},
				BodyParams:   []string{"Ana", "R$ 99,90 & <frete>", "12 de março"},
				CallbackData: "tenant-42:req-9f1c",
			},
			golden: "send_template_request.golden.json",
		},
		{
			name:   "digits without plus, no parameters, trailing slash on base",
			base:   "/v23.0/",
			send:   TemplateSend{To: "16505551234", Name: "hello_world", Language: "en_US"},
			golden: "send_template_no_params_request.golden.json",
		},
		{
			name: "named parameters",
			base: "/v23.0",
			send: TemplateSend{
				To: "16505551234", Name: "reservation_confirmation", Language: "en_US",
				BodyParams: []string{"Ana", "4"}, BodyParamNames: []string{"first_name", "guests"},
			},
			golden: "send_template_named_request.golden.json",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fp := newFakePlatform(t, answer(http.StatusOK, readTestdata(t, "send_template_response.json")))
			c := NewClient(fp.URL+tt.base, nil)

			res, err := c.SendTemplate(context.Background(), testToken, testPhoneID, tt.send)
			if err != nil {
				t.Fatalf("SendTemplate: %v", err)
			}
			want := SendResult{
				MessageID:     "wamid.HBgNNTUxMTk4NzY1NDMyMRUCABEYEjQyQkU1RTlGRjM4QTcyQjU2MgA=",
				WaID:          "5511987654321",
				Input:         "+5511987654321",
				MessageStatus: "accepted",
			}
			if res != want {
				t.Errorf("result = %+v, want %+v", res, want)
			}
			reqs := fp.requests()
			if len(reqs) != 1 {
				t.Fatalf("platform saw %d requests, want 1", len(reqs))
			}
			r := reqs[0]
			if r.Method != http.MethodPost || r.RequestURI != "/v23.0/"+testPhoneID+"/messages" {
				t.Errorf("request = %s %s", r.Method, r.RequestURI)
			}
			assertPlatformHeaders(t, r)
			assertGoldenJSON(t, tt.golden, r.Body)
		})
	}
}

func TestSendText(t *testing.T) {
	fp := newFakePlatform(t, answer(http.StatusOK, []byte(`{"messaging_product":"whatsapp","contacts":[{"input":"+16505551234","wa_id":"16505551234"}],"messages":[{"id":"wamid.TEXT1"}]}`)))
	c := NewClient(fp.URL+"/v23.0", nil)

	res, err := c.SendText(context.Background(), testToken, testPhoneID, "+16505551234", "Your order ORD-7781 ships today. Reply STOP to opt out.")
	if err != nil {
		t.Fatalf("SendText: %v", err)
	}
	if want := (SendResult{MessageID: "wamid.TEXT1", WaID: "16505551234", Input: "+16505551234"}); res != want {
		t.Errorf("result = %+v, want %+v", res, want)
	}
	r := fp.requests()[0]
	if r.Method != http.MethodPost || r.RequestURI != "/v23.0/"+testPhoneID+"/messages" {
		t.Errorf("request = %s %s", r.Method, r.RequestURI)
	}
	assertPlatformHeaders(t, r)
	assertGoldenJSON(t, "send_text_request.golden.json", r.Body)
}

func TestPathSegmentsAreEscaped(t *testing.T) {
	fp := newFakePlatform(t, func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/messages") {
			w.Write([]byte(`{"messages":[{"id":"wamid.X"}]}`))
			return
		}
		w.Write([]byte(`{"data":[]}`))
	})
	c := NewClient(fp.URL+"/v23.0", nil)
	if _, err := c.SendText(context.Background(), testToken, "12/34 ?x", "1555", "hi"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ListTemplates(context.Background(), testToken, "../waba#1"); err != nil {
		t.Fatal(err)
	}
	reqs := fp.requests()
	if got, want := reqs[0].RequestURI, "/v23.0/12%2F34%20%3Fx/messages"; got != want {
		t.Errorf("send URI = %q, want %q", got, want)
	}
	if got, want := reqs[1].Path, "/v23.0/../waba#1/message_templates"; got != want {
		t.Errorf("list path = %q, want %q", got, want)
	}
	if !strings.HasPrefix(reqs[1].RequestURI, "/v23.0/..%2Fwaba%231/message_templates?") {
		t.Errorf("list URI = %q", reqs[1].RequestURI)
	}
}

func TestInvalidArgumentsMakeNoRequest(t *testing.T) {
	fp := newFakePlatform(t, answer(http.StatusOK, readTestdata(t, "send_template_response.json")))
	c := NewClient(fp.URL+"/v23.0", nil)
	ctx := context.Background()
	ok := TemplateSend{To: "15551234567", Name: "t", Language: "en"}
	with := func(f func(*TemplateSend)) TemplateSend { m := ok; f(&m); return m }

	tests := []struct {
		name string
		call func() error
	}{
		{"empty recipient", func() error {
			_, err := c.SendTemplate(ctx, testToken, testPhoneID, with(func(m *TemplateSend) { m.To = "" }))
			return err
		}},
		{"plus only", func() error {
			_, err := c.SendTemplate(ctx, testToken, testPhoneID, with(func(m *TemplateSend) { m.To = "+" }))
			return err
		}},
		{"double plus", func() error {
			_, err := c.SendTemplate(ctx, testToken, testPhoneID, with(func(m *TemplateSend) { m.To = "++1555" }))
			return err
		}},
		{"formatted number", func() error {
			_, err := c.SendTemplate(ctx, testToken, testPhoneID, with(func(m *TemplateSend) { m.To = "+1 (555) 123-4567" }))
			return err
		}},
		{"empty name", func() error {
			_, err := c.SendTemplate(ctx, testToken, testPhoneID, with(func(m *TemplateSend) { m.Name = "" }))
			return err
		}},
		{"empty language", func() error {
			_, err := c.SendTemplate(ctx, testToken, testPhoneID, with(func(m *TemplateSend) { m.Language = " " }))
			return err
		}},
		{"names length mismatch", func() error {
			_, err := c.SendTemplate(ctx, testToken, testPhoneID, with(func(m *TemplateSend) { m.BodyParams = []string{"a", "b"}; m.BodyParamNames = []string{"x"} }))
			return err
		}},
		{"empty parameter name", func() error {
			_, err := c.SendTemplate(ctx, testToken, testPhoneID, with(func(m *TemplateSend) { m.HeaderParams = []string{"a"}; m.HeaderParamNames = []string{""} }))
			return err
		}},
		{"empty token", func() error { _, err := c.SendTemplate(ctx, "", testPhoneID, ok); return err }},
		{"token with newline", func() error { _, err := c.SendTemplate(ctx, "abc\r\nX-Evil: 1", testPhoneID, ok); return err }},
		{"empty phone number id", func() error { _, err := c.SendTemplate(ctx, testToken, "", ok); return err }},
		{"text recipient", func() error { _, err := c.SendText(ctx, testToken, testPhoneID, "00 1555", "hi"); return err }},
		{"empty text", func() error { _, err := c.SendText(ctx, testToken, testPhoneID, "1555", ""); return err }},
		{"empty WABA id", func() error { _, err := c.ListTemplates(ctx, testToken, ""); return err }},
		{"relative base URL", func() error {
			_, err := NewClient("graph/v23.0", nil).SendText(ctx, testToken, testPhoneID, "1555", "hi")
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			if !errors.Is(err, ErrInvalidArgument) {
				t.Fatalf("err = %v, want ErrInvalidArgument", err)
			}
			if errors.Is(err, ErrUnavailable) {
				t.Errorf("invalid argument also matches ErrUnavailable: %v", err)
			}
		})
	}
	if n := len(fp.requests()); n != 0 {
		t.Errorf("platform saw %d requests, want 0", n)
	}
}

func TestGraphErrors(t *testing.T) {
	tests := []struct {
		name       string
		status     int
		header     map[string]string
		body       string
		want       Error
		wantReason string
	}{
		{
			name:   "132000 parameter mismatch with details",
			status: 400,
			body:   `{"error":{"message":"(#132000) Number of parameters does not match the expected number of params","type":"OAuthException","code":132000,"error_data":{"messaging_product":"whatsapp","details":"body: number of localizable_params (2) does not match the expected number of params (1)"},"fbtrace_id":"AbCdEfGh123"}}`,
			want: Error{HTTPStatus: 400, Code: 132000, Type: "OAuthException",
				Message:   "(#132000) Number of parameters does not match the expected number of params",
				Details:   "body: number of localizable_params (2) does not match the expected number of params (1)",
				FBTraceID: "AbCdEfGh123"},
			wantReason: "body: number of localizable_params (2) does not match the expected number of params (1)",
		},
		{
			name:   "132001 template missing, HTTP 404",
			status: 404,
			body:   `{"error":{"message":"(#132001) Template name does not exist in the translation","type":"OAuthException","code":132001,"error_data":{"messaging_product":"whatsapp","details":"template name (order_shiped) does not exist in pt_BR"},"fbtrace_id":"A1b2"}}`,
			want: Error{HTTPStatus: 404, Code: 132001, Type: "OAuthException",
				Message: "(#132001) Template name does not exist in the translation",
				Details: "template name (order_shiped) does not exist in pt_BR", FBTraceID: "A1b2"},
			wantReason: "template name (order_shiped) does not exist in pt_BR",
		},
		{
			name:   "190 expired token, HTTP 401, no details",
			status: 401,
			body:   `{"error":{"message":"Error validating access token: Session has expired on Tuesday, 01-Jul-25 10:00:00 PDT.","type":"OAuthException","code":190,"error_subcode":463,"error_user_title":"Session expired","error_user_msg":"Log in again.","fbtrace_id":"A2"}}`,
			want: Error{HTTPStatus: 401, Code: 190, Subcode: 463, Type: "OAuthException",
				Message: "Error validating access token: Session has expired on Tuesday, 01-Jul-25 10:00:00 PDT.",
				Title:   "Session expired", UserMessage: "Log in again.", FBTraceID: "A2"},
			wantReason: "Error validating access token: Session has expired on Tuesday, 01-Jul-25 10:00:00 PDT.",
		},
		{
			name:   "100 subcode 33 unknown phone number id",
			status: 400,
			body:   `{"error":{"message":"Unsupported post request. Object with ID '106540352242922' does not exist, cannot be loaded due to missing permissions, or does not support this operation.","type":"GraphMethodException","code":100,"error_subcode":33,"fbtrace_id":"A3"}}`,
			want: Error{HTTPStatus: 400, Code: 100, Subcode: 33, Type: "GraphMethodException",
				Message:   "Unsupported post request. Object with ID '106540352242922' does not exist, cannot be loaded due to missing permissions, or does not support this operation.",
				FBTraceID: "A3"},
			wantReason: "Unsupported post request. Object with ID '106540352242922' does not exist, cannot be loaded due to missing permissions, or does not support this operation.",
		},
		{
			name:   "error_data as a plain string",
			status: 400,
			body:   `{"error":{"message":"Invalid parameter","type":"OAuthException","code":100,"error_subcode":2388024,"is_transient":false,"error_user_title":"Content in this language already exists","error_user_msg":"Use another name.","error_data":"Content in this language already exists for the template order_shipped.","fbtrace_id":"A4"}}`,
			want: Error{HTTPStatus: 400, Code: 100, Subcode: 2388024, Type: "OAuthException", Message: "Invalid parameter",
				Title: "Content in this language already exists", UserMessage: "Use another name.",
				Details: "Content in this language already exists for the template order_shipped.", FBTraceID: "A4"},
			wantReason: "Content in this language already exists for the template order_shipped.",
		},
		{
			name:   "130429 transient rate limit, trace id from header",
			status: 400,
			header: map[string]string{"x-fb-trace-id": "HdrTrace"},
			body:   `{"error":{"message":"(#130429) Rate limit hit","type":"OAuthException","code":130429,"is_transient":true,"error_data":{"messaging_product":"whatsapp","details":"Cloud API message throughput has been reached."}}}`,
			want: Error{HTTPStatus: 400, Code: 130429, Type: "OAuthException", Message: "(#130429) Rate limit hit",
				Details: "Cloud API message throughput has been reached.", FBTraceID: "HdrTrace", Transient: true},
			wantReason: "Cloud API message throughput has been reached.",
		},
		{
			name:       "code given as a string",
			status:     400,
			body:       `{"error":{"message":"(#131056) pair rate limit","code":"131056"}}`,
			want:       Error{HTTPStatus: 400, Code: 131056, Message: "(#131056) pair rate limit"},
			wantReason: "(#131056) pair rate limit",
		},
		{
			name:       "non-JSON 500",
			status:     500,
			header:     map[string]string{"Content-Type": "text/html", "x-fb-trace-id": "T500"},
			body:       `<html><body>Internal Server Error</body></html>`,
			want:       Error{HTTPStatus: 500, Message: "platform answered HTTP 500", FBTraceID: "T500"},
			wantReason: "platform answered HTTP 500",
		},
		{
			name:       "JSON that is not a Graph error",
			status:     502,
			body:       `{"status":"bad gateway"}`,
			want:       Error{HTTPStatus: 502, Message: "platform answered HTTP 502"},
			wantReason: "platform answered HTTP 502",
		},
		{
			name:       "error member of the wrong type",
			status:     503,
			body:       `{"error":"upstream down"}`,
			want:       Error{HTTPStatus: 503, Message: "platform answered HTTP 503"},
			wantReason: "platform answered HTTP 503",
		},
		{
			name:       "empty body",
			status:     503,
			want:       Error{HTTPStatus: 503, Message: "platform answered HTTP 503"},
			wantReason: "platform answered HTTP 503",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fp := newFakePlatform(t, func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				for k, v := range tt.header {
					w.Header().Set(k, v)
				}
				w.WriteHeader(tt.status)
				w.Write([]byte(tt.body))
			})
			c := NewClient(fp.URL+"/v23.0", nil)
			_, err := c.SendTemplate(context.Background(), testToken, testPhoneID, TemplateSend{To: "5511987654321", Name: "order_shipped", Language: "pt_BR"})

			var pe *Error
			if !errors.As(err, &pe) {
				t.Fatalf("err = %v (%T), want *Error", err, err)
			}
			if *pe != tt.want {
				t.Errorf("error = %+v\nwant    %+v", *pe, tt.want)
			}
			if got := pe.Reason(); got != tt.wantReason {
				t.Errorf("Reason() = %q, want %q", got, tt.wantReason)
			}
			if errors.Is(err, ErrUnavailable) || IsTimeout(err) {
				t.Errorf("platform answer classified as unavailable/timeout: %v", err)
			}
			if !strings.Contains(err.Error(), "HTTP ") {
				t.Errorf("Error() = %q lacks the HTTP status", err.Error())
			}
		})
	}
}

func TestErrorStrings(t *testing.T) {
	e := &Error{HTTPStatus: 400, Code: 100, Subcode: 33, Message: "Unsupported post request.", Details: "phone number id unknown"}
	if got, want := e.Error(), "whatsapp: platform error (HTTP 400, code 100, subcode 33): Unsupported post request.: phone number id unknown"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	bare := &Error{HTTPStatus: 500}
	if got := bare.Reason(); got != "platform answered HTTP 500" {
		t.Errorf("Reason() of empty error = %q", got)
	}
	if got, want := bare.Error(), "whatsapp: platform error (HTTP 500): platform answered HTTP 500"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

func TestMalformedSuccessAnswers(t *testing.T) {
	tests := []struct {
		name string
		body string
	}{
		{"not JSON", "OK"},
		{"no messages", `{"messaging_product":"whatsapp","contacts":[{"input":"+1555","wa_id":"1555"}],"messages":[]}`},
		{"message without id", `{"messages":[{"message_status":"accepted"}]}`},
		{"over 1 MiB", `{"messages":[{"id":"wamid.X"}],"pad":"` + strings.Repeat("x", maxResponseBytes) + `"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fp := newFakePlatform(t, answer(http.StatusOK, []byte(tt.body)))
			_, err := NewClient(fp.URL+"/v23.0", nil).SendText(context.Background(), testToken, testPhoneID, "1555", "hi")
			if !errors.Is(err, ErrMalformedResponse) {
				t.Fatalf("err = %v, want ErrMalformedResponse", err)
			}
			if errors.Is(err, ErrUnavailable) {
				t.Errorf("malformed answer also matches ErrUnavailable")
			}
		})
	}
}

func TestRedirectIsNotFollowed(t *testing.T) {
	fp := newFakePlatform(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://127.0.0.1:1/elsewhere", http.StatusFound)
	})
	_, err := NewClient(fp.URL+"/v23.0", nil).SendText(context.Background(), testToken, testPhoneID, "1555", "hi")
	var pe *Error
	if !errors.As(err, &pe) || pe.HTTPStatus != http.StatusFound {
		t.Fatalf("err = %v, want *Error with HTTP 302", err)
	}
}

// hangingPlatform never answers until the client goes away or the test ends.
func hangingPlatform(t *testing.T) *fakePlatform {
	t.Helper()
	done := make(chan struct{})
	fp := newFakePlatform(t, func(_ http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-done:
		}
	})
	t.Cleanup(func() { close(done) }) // runs before the server's Close
	return fp
}

func TestDeadlines(t *testing.T) {
	send := func(c *Client, ctx context.Context) error {
		_, err := c.SendTemplate(ctx, testToken, testPhoneID, TemplateSend{To: "1555", Name: "t", Language: "en"})
		return err
	}
	list := func(c *Client, ctx context.Context) error {
		_, err := c.ListTemplates(ctx, testToken, "102290129340398")
		return err
	}
	tests := []struct {
		name    string
		timeout time.Duration // client timeout
		ctxTO   time.Duration // context timeout; 0 = none
		call    func(*Client, context.Context) error
	}{
		{"client timeout on send", 30 * time.Millisecond, 0, send},
		{"sooner context deadline on send", time.Hour, 30 * time.Millisecond, send},
		{"context deadline with timeout disabled", 0, 30 * time.Millisecond, send},
		{"client timeout on list", 30 * time.Millisecond, 0, list},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fp := hangingPlatform(t)
			c := NewClient(fp.URL+"/v23.0", nil)
			c.SetTimeout(tt.timeout)
			ctx := context.Background()
			if tt.ctxTO > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.ctxTO)
				defer cancel()
			}
			err := tt.call(c, ctx)
			if !errors.Is(err, ErrUnavailable) {
				t.Fatalf("err = %v, want ErrUnavailable", err)
			}
			if !IsTimeout(err) {
				t.Errorf("IsTimeout(%v) = false", err)
			}
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("err does not wrap context.DeadlineExceeded: %v", err)
			}
			var pe *Error
			if errors.As(err, &pe) {
				t.Errorf("timeout reported as platform error %+v", pe)
			}
		})
	}
}

func TestTransportFailures(t *testing.T) {
	t.Run("canceled context", func(t *testing.T) {
		fp := hangingPlatform(t)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := NewClient(fp.URL+"/v23.0", nil).SendText(ctx, testToken, testPhoneID, "1555", "hi")
		if !errors.Is(err, ErrUnavailable) || !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want ErrUnavailable wrapping context.Canceled", err)
		}
		if IsTimeout(err) {
			t.Errorf("IsTimeout(cancel) = true")
		}
	})
	t.Run("connection refused", func(t *testing.T) {
		fp := newFakePlatform(t, answer(200, nil))
		url := fp.URL
		fp.Close()
		_, err := NewClient(url+"/v23.0", nil).SendText(context.Background(), testToken, testPhoneID, "1555", "hi")
		if !errors.Is(err, ErrUnavailable) {
			t.Fatalf("err = %v, want ErrUnavailable", err)
		}
		if IsTimeout(err) {
			t.Errorf("IsTimeout(refused) = true")
		}
	})
	t.Run("connection dropped mid-answer", func(t *testing.T) {
		fp := newFakePlatform(t, func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Length", "100")
			w.WriteHeader(200)
			w.Write([]byte(`{"messages":`))
			// returning with a short body makes the server close the connection
		})
		_, err := NewClient(fp.URL+"/v23.0", nil).SendText(context.Background(), testToken, testPhoneID, "1555", "hi")
		if !errors.Is(err, ErrUnavailable) {
			t.Fatalf("err = %v, want ErrUnavailable", err)
		}
	})
	if IsTimeout(nil) {
		t.Error("IsTimeout(nil) = true")
	}
}

func TestNewClientDefaults(t *testing.T) {
	c := NewClient("https://graph.facebook.com/v23.0/", nil)
	if c.base != "https://graph.facebook.com/v23.0" {
		t.Errorf("base = %q", c.base)
	}
	if got := time.Duration(c.timeout.Load()); got != 10*time.Second {
		t.Errorf("default timeout = %v, want 10s", got)
	}
	if c.httpc.Timeout != 0 {
		t.Errorf("http.Client.Timeout = %v, want 0 (deadlines come from ctx)", c.httpc.Timeout)
	}
	tr, ok := c.httpc.Transport.(*http.Transport)
	if !ok {
		t.Fatalf("transport is %T", c.httpc.Transport)
	}
	if tr.MaxIdleConnsPerHost < 64 {
		t.Errorf("MaxIdleConnsPerHost = %d, want >= 64", tr.MaxIdleConnsPerHost)
	}
	if tr == http.DefaultTransport {
		t.Error("default transport is shared, want a tuned clone")
	}
	custom := &http.Client{}
	if NewClient("http://x/v1", custom).httpc != custom {
		t.Error("caller's http.Client not used")
	}
}
