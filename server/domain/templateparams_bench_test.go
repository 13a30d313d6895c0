package domain

import (
	"encoding/json"
	"testing"

	"gateway/store"
)

// BenchmarkSendParams isolates what a rich send adds to a text-only one before the platform
// call: the rules (sendParams) and the stored content, for order_confirmation (2 body
// variables) and spring_sale (IMAGE header, 1 body variable, a URL button and a quick reply),
// the simulator's templates as the store keeps them.
func BenchmarkSendParams(b *testing.B) {
	str := func(s string) *string { return &s }
	link := "https://cdn.example.com/spring.jpg"
	for _, c := range []struct {
		name string
		tpl  store.Template
		req  TemplateSend
	}{
		{"text", store.Template{ID: 1, Name: "order_confirmation", Language: "en_US", Status: store.TemplateApproved, BodyParams: 2},
			TemplateSend{Destination: "15551234567", TemplateName: str("order_confirmation"), BodyVariables: []string{"Ana", "ORD-7781"}}},
		{"image+url", store.Template{ID: 2, Name: "spring_sale", Language: "en_US", Status: store.TemplateApproved, HeaderFormat: "IMAGE",
			HeaderParams: 1, BodyParams: 1, Buttons: store.TemplateButtons{{Index: 0, Type: ButtonURL, Text: "Shop now", TakesValue: true},
				{Index: 1, Type: ButtonQuickReply, Text: "Stop promotions", TakesValue: true}}},
			TemplateSend{Destination: "15551234567", TemplateName: str("spring_sale"), BodyVariables: []string{"Ana"},
				HeaderMedia: &HeaderMedia{Type: "image", Link: &link}, ButtonVariables: []ButtonVariable{{Index: 0, Value: "SPRING24"}}}},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				p, fail := sendParams(c.tpl, c.req)
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
