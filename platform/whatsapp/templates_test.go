package whatsapp

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

const testWABA = "102290129340398"

func TestListTemplatesFollowsPaging(t *testing.T) {
	var fp *fakePlatform
	fp = newFakePlatform(t, func(w http.ResponseWriter, r *http.Request) {
		page := map[string]string{"": "templates_page1.json", "QVFIUnB": "templates_page2.json", "QVFIUnC": "templates_page3.json"}[r.URL.Query().Get("after")]
		if page == "" {
			http.Error(w, "unexpected cursor", http.StatusBadRequest)
			return
		}
		w.Write([]byte(strings.ReplaceAll(string(readTestdata(t, page)), "{{BASE}}", fp.URL)))
	})
	c := NewClient(fp.URL+"/v23.0", nil)

	got, err := c.ListTemplates(context.Background(), testToken, testWABA)
	if err != nil {
		t.Fatalf("ListTemplates: %v", err)
	}

	reqs := fp.requests()
	if len(reqs) != 3 {
		t.Fatalf("platform saw %d requests, want 3", len(reqs))
	}
	for i, r := range reqs {
		if r.Method != http.MethodGet || r.Path != "/v23.0/"+testWABA+"/message_templates" {
			t.Errorf("request %d = %s %s", i, r.Method, r.Path)
		}
		assertPlatformHeaders(t, r)
		if got := r.Query["fields"]; len(got) != 1 || got[0] != "id,name,language,status,category,components,parameter_format,rejected_reason" {
			t.Errorf("request %d fields = %q", i, got)
		}
		if got := r.Query["limit"]; len(got) != 1 || got[0] != "100" {
			t.Errorf("request %d limit = %q", i, got)
		}
	}
	if a := [3]string{reqs[0].Query.Get("after"), reqs[1].Query.Get("after"), reqs[2].Query.Get("after")}; a != [3]string{"", "QVFIUnB", "QVFIUnC"} {
		t.Errorf("cursors = %q", a)
	}

	type summary struct {
		ID, Name, Language, Status, Category, ParameterFormat, HeaderFormat string
		Header, Body                                                        int
		BodyNames                                                           []string
	}
	var sums []summary
	for _, tp := range got {
		sums = append(sums, summary{tp.ID, tp.Name, tp.Language, tp.Status, tp.Category, tp.ParameterFormat,
			tp.HeaderFormat(), tp.HeaderParamCount(), tp.BodyParamCount(), tp.BodyParamNames()})
	}
	want := []summary{
		{"1094411223344556", "order_shipped", "pt_BR", "APPROVED", "UTILITY", "POSITIONAL", "IMAGE", 1, 3, []string{"1", "2", "3"}},
		{"1094411223344557", "reservation_confirmation", "en_US", "APPROVED", "UTILITY", "NAMED", "", 0, 2, []string{"first_name", "guests"}},
		{"1094411223344558", "otp_code", "en", "PENDING", "AUTHENTICATION", "", "TEXT", 1, 1, []string{"1"}},
		{"1094411223344559", "spring_sale", "es", "PAUSED", "MARKETING", "POSITIONAL", "", 0, 2, []string{"1", "2"}},
	}
	if !reflect.DeepEqual(sums, want) {
		t.Errorf("templates:\n got %+v\nwant %+v", sums, want)
	}

	comps := got[0].Components
	if len(comps) != 4 {
		t.Fatalf("order_shipped has %d components", len(comps))
	}
	if comps[0].Type != "HEADER" || comps[0].Format != "IMAGE" || !strings.Contains(string(comps[0].Raw), `"header_handle"`) {
		t.Errorf("header = %+v (raw %s)", comps[0], comps[0].Raw)
	}
	if comps[2].Type != "FOOTER" || comps[2].Text != "Responda PARAR para sair" {
		t.Errorf("footer = %+v", comps[2])
	}
	wantButtons := []TemplateButton{
		{Type: "URL", Text: "Rastrear", URL: "https://shop.example.com/t/{{1}}"},
		{Type: "QUICK_REPLY", Text: "Parar promoções"},
	}
	if comps[3].Type != "BUTTONS" || !reflect.DeepEqual(comps[3].Buttons, wantButtons) {
		t.Errorf("buttons = %+v", comps[3])
	}
	if !json.Valid(comps[3].Raw) {
		t.Errorf("component Raw is not JSON: %s", comps[3].Raw)
	}
}

func TestListTemplatesNextLinks(t *testing.T) {
	const query = "fields=id%2Cname%2Clanguage%2Cstatus%2Ccategory%2Ccomponents%2Cparameter_format%2Crejected_reason&limit=100&after=CUR2"
	tests := []struct {
		name string
		next func(base string) string
	}{
		{"other host is rewritten to the base host", func(string) string {
			return "https://graph.facebook.com/v23.0/" + testWABA + "/message_templates?" + query
		}},
		{"relative link", func(string) string { return "/v23.0/" + testWABA + "/message_templates?" + query }},
		{"same host", func(base string) string { return base + "/v23.0/" + testWABA + "/message_templates?" + query }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var fp *fakePlatform
			fp = newFakePlatform(t, func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Query().Get("after") == "CUR2" {
					w.Write([]byte(`{"data":[{"id":"2","name":"b","language":"en","status":"APPROVED","category":"UTILITY","components":[]}],"paging":{"cursors":{"after":"CUR3"}}}`))
					return
				}
				next, _ := json.Marshal(tt.next(fp.URL))
				w.Write([]byte(`{"data":[{"id":"1","name":"a","language":"en","status":"APPROVED","category":"UTILITY","components":[]}],"paging":{"next":` + string(next) + `}}`))
			})
			got, err := NewClient(fp.URL+"/v23.0", nil).ListTemplates(context.Background(), testToken, testWABA)
			if err != nil {
				t.Fatalf("ListTemplates: %v", err)
			}
			if len(got) != 2 || got[0].Name != "a" || got[1].Name != "b" {
				t.Errorf("templates = %+v", got)
			}
			reqs := fp.requests()
			if len(reqs) != 2 || reqs[1].Path != "/v23.0/"+testWABA+"/message_templates" {
				t.Fatalf("requests = %+v", reqs)
			}
			assertPlatformHeaders(t, reqs[1])
		})
	}
}

func TestListTemplatesStopsOnPagingLoop(t *testing.T) {
	var fp *fakePlatform
	fp = newFakePlatform(t, func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"data":[],"paging":{"next":"` + fp.URL + r.RequestURI + `"}}`))
	})
	got, err := NewClient(fp.URL+"/v23.0", nil).ListTemplates(context.Background(), testToken, testWABA)
	if !errors.Is(err, ErrMalformedResponse) || got != nil {
		t.Fatalf("got %v, %v; want nil, ErrMalformedResponse", got, err)
	}
	if n := len(fp.requests()); n != 1 {
		t.Errorf("platform saw %d requests, want 1", n)
	}
}

func TestListTemplatesErrorOnLaterPage(t *testing.T) {
	var fp *fakePlatform
	fp = newFakePlatform(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("after") == "" {
			w.Write([]byte(`{"data":[{"id":"1","name":"a"}],"paging":{"next":"` + fp.URL + `/v23.0/` + testWABA + `/message_templates?after=X"}}`))
			return
		}
		w.WriteHeader(http.StatusUnauthorized)
		w.Write([]byte(`{"error":{"message":"Invalid OAuth access token.","type":"OAuthException","code":190,"fbtrace_id":"Z"}}`))
	})
	got, err := NewClient(fp.URL+"/v23.0", nil).ListTemplates(context.Background(), testToken, testWABA)
	var pe *Error
	if !errors.As(err, &pe) || pe.Code != 190 || pe.HTTPStatus != 401 || got != nil {
		t.Fatalf("got %v, %v; want nil, *Error 190/401", got, err)
	}
}

func TestListTemplatesMalformedPage(t *testing.T) {
	fp := newFakePlatform(t, answer(http.StatusOK, []byte(`<html>`)))
	_, err := NewClient(fp.URL+"/v23.0", nil).ListTemplates(context.Background(), testToken, testWABA)
	if !errors.Is(err, ErrMalformedResponse) {
		t.Fatalf("err = %v, want ErrMalformedResponse", err)
	}
}

func TestTemplateParamCounts(t *testing.T) {
	body := func(text string) TemplateComponent { return TemplateComponent{Type: "BODY", Text: text} }
	header := func(format, text string) TemplateComponent {
		return TemplateComponent{Type: "HEADER", Format: format, Text: text}
	}
	tests := []struct {
		name         string
		comps        []TemplateComponent
		body, header int
		format       string
		bodyNames    []string
		headerNames  []string
	}{
		{"no components", nil, 0, 0, "", nil, nil},
		{"body without placeholders", []TemplateComponent{body("Thanks for your order.")}, 0, 0, "", nil, nil},
		{"positional", []TemplateComponent{body("Hi {{1}}, order {{2}} ships {{3}}.")}, 3, 0, "", []string{"1", "2", "3"}, nil},
		{"positional out of order and repeated", []TemplateComponent{body("{{2}} for {{1}}; again {{1}} and {{2}}")}, 2, 0, "", []string{"2", "1"}, nil},
		{"named", []TemplateComponent{body("Hi {{first_name}}, table for {{guests}}.")}, 2, 0, "", []string{"first_name", "guests"}, nil},
		{"named repeated", []TemplateComponent{body("{{first_name}}! {{first_name}}, your code is {{code_2}}")}, 2, 0, "", []string{"first_name", "code_2"}, nil},
		{"spaces inside braces", []TemplateComponent{body("Hi {{ 1 }} and {{1}}")}, 1, 0, "", []string{"1"}, nil},
		{"not placeholders", []TemplateComponent{body("Use {1}, {{}} or {{a-b}} literally")}, 0, 0, "", nil, nil},
		{"text header with placeholder", []TemplateComponent{header("TEXT", "Order {{1}} update"), body("Hi {{1}}")}, 1, 1, "TEXT", []string{"1"}, []string{"1"}},
		{"text header repeated placeholder", []TemplateComponent{header("TEXT", "{{1}} / {{1}}")}, 0, 1, "TEXT", nil, []string{"1"}},
		{"named text header", []TemplateComponent{header("TEXT", "Hello {{name}}")}, 0, 1, "TEXT", nil, []string{"name"}},
		{"text header without placeholder", []TemplateComponent{header("TEXT", "Your receipt"), body("{{1}}")}, 1, 0, "TEXT", []string{"1"}, nil},
		{"header with no format is text", []TemplateComponent{header("", "Hi {{1}}")}, 0, 1, "TEXT", nil, []string{"1"}},
		{"image header", []TemplateComponent{header("IMAGE", ""), body("{{1}}")}, 1, 1, "IMAGE", []string{"1"}, nil},
		{"video header", []TemplateComponent{header("VIDEO", "")}, 0, 1, "VIDEO", nil, nil},
		{"document header", []TemplateComponent{header("DOCUMENT", "")}, 0, 1, "DOCUMENT", nil, nil},
		{"location header", []TemplateComponent{header("LOCATION", "")}, 0, 1, "LOCATION", nil, nil},
		{"lower-case types", []TemplateComponent{{Type: "header", Format: "image"}, {Type: "body", Text: "{{1}} {{2}}"}}, 2, 1, "IMAGE", []string{"1", "2"}, nil},
		{"footer and buttons ignored", []TemplateComponent{
			body("Track {{1}}"),
			{Type: "FOOTER", Text: "Reply {{9}}"},
			{Type: "BUTTONS", Buttons: []TemplateButton{{Type: "URL", Text: "Go", URL: "https://x.example/{{1}}"}}},
		}, 1, 0, "", []string{"1"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tp := Template{Name: "t", Components: tt.comps}
			if got := tp.BodyParamCount(); got != tt.body {
				t.Errorf("BodyParamCount = %d, want %d", got, tt.body)
			}
			if got := tp.HeaderParamCount(); got != tt.header {
				t.Errorf("HeaderParamCount = %d, want %d", got, tt.header)
			}
			if got := tp.HeaderFormat(); got != tt.format {
				t.Errorf("HeaderFormat = %q, want %q", got, tt.format)
			}
			if got := tp.BodyParamNames(); !reflect.DeepEqual(got, tt.bodyNames) {
				t.Errorf("BodyParamNames = %q, want %q", got, tt.bodyNames)
			}
			if got := tp.HeaderParamNames(); !reflect.DeepEqual(got, tt.headerNames) {
				t.Errorf("HeaderParamNames = %q, want %q", got, tt.headerNames)
			}
		})
	}
}
