package server

import (
	"encoding/json"
	"testing"

	"gateway/gen"
	"gateway/platform/simulator"
	"gateway/platform/whatsapp"
)

// BenchmarkSendParams isolates what a rich send adds to a text-only one before the platform
// call: the rules (sendParams) and the stored content, for order_confirmation (2 body
// variables) and spring_sale (IMAGE header, 1 body variable, a URL button).
func BenchmarkSendParams(b *testing.B) {
	tpls := map[string]whatsapp.Template{}
	for _, st := range append(simulator.DefaultTemplates(), simulator.RichTemplates()...) {
		raw, _ := json.Marshal(st)
		var wt whatsapp.Template
		if err := json.Unmarshal(raw, &wt); err != nil {
			b.Fatal(err)
		}
		tpls[wt.Name] = wt
	}
	str := func(s string) *string { return &s }
	link := "https://cdn.example.com/spring.jpg"
	for _, c := range []struct {
		name string
		req  gen.SendTemplateRequest
	}{
		{"text", gen.SendTemplateRequest{Destination: "15551234567", TemplateName: str("order_confirmation"),
			BodyVariables: &[]string{"Ana", "ORD-7781"}}},
		{"image+url", gen.SendTemplateRequest{Destination: "15551234567", TemplateName: str("spring_sale"),
			BodyVariables: &[]string{"Ana"}, HeaderMedia: &gen.HeaderMedia{Type: gen.Image, Link: &link},
			ButtonVariables: &[]gen.ButtonVariable{{Index: 0, Value: "SPRING24"}}}},
	} {
		in, err := templateInput(tpls[*c.req.TemplateName])
		if err != nil {
			b.Fatal(err)
		}
		tpl := fixture(1, in.Name, 1, in.Category, in.Category, string(in.Components))
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				p, fail := sendParams(tpl, &c.req)
				if fail != nil {
					b.Fatal(fail.Message)
				}
				if _, err := json.Marshal(sentContent{Language: "en_US", HeaderVariables: orEmpty(p.header), BodyVariables: orEmpty(p.body),
					HeaderMedia: c.req.HeaderMedia, Buttons: p.buttons}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
