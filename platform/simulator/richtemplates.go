package simulator

// RichTemplates returns seed templates with more than text (reference §3 and §10), one of
// each kind a gateway must fill, all APPROVED, en_US:
//
//   - spring_sale (1094411223344101, MARKETING): IMAGE header, body "Hi {{1}}, ...", a URL
//     button with a {{1}} suffix (index 0) and a QUICK_REPLY button (index 1);
//   - product_demo (1094411223344102, MARKETING): VIDEO header, body with 1 variable, a static
//     URL button;
//   - invoice_ready (1094411223344103, UTILITY): DOCUMENT header, body with 1 variable;
//   - store_directions (1094411223344104, UTILITY): LOCATION header, body without variables;
//   - coupon_offer (1094411223344105, MARKETING): body with 1 variable, a COPY_CODE button
//     (index 0) and a QUICK_REPLY button (index 1);
//   - login_code (1094411223344106, AUTHENTICATION): "*{{1}}* is your verification code.",
//     an expiry footer and the copy-code OTP button, listed as type URL as Meta lists it;
//   - holiday_carousel (1094411223344107, MARKETING): a CAROUSEL of two image cards;
//   - booking_flow (1094411223344108, UTILITY): a FLOW button.
//
// It returns a fresh slice each call.
func RichTemplates() []Template {
	body := func(text string, examples ...any) map[string]any {
		c := map[string]any{"type": "BODY", "text": text}
		if len(examples) > 0 {
			c["example"] = map[string]any{"body_text": []any{examples}}
		}
		return c
	}
	media := func(format, handle string) map[string]any {
		return map[string]any{"type": "HEADER", "format": format, "example": map[string]any{"header_handle": []any{handle}}}
	}
	buttons := func(bs ...map[string]any) map[string]any {
		l := make([]any, len(bs))
		for i, b := range bs {
			l[i] = b
		}
		return map[string]any{"type": "BUTTONS", "buttons": l}
	}
	return []Template{
		{ID: "1094411223344101", Name: "spring_sale", Language: "en_US", Status: "APPROVED", Category: "MARKETING",
			Components: []map[string]any{
				media("IMAGE", "https://scontent.whatsapp.net/v/spring.jpg"),
				body("Hi {{1}}, our spring sale is on: 20% off everything this week.", "Ana"),
				{"type": "FOOTER", "text": "Reply STOP to opt out"},
				buttons(
					map[string]any{"type": "URL", "text": "Shop now", "url": "https://shop.example.com/sale/{{1}}",
						"example": []any{"https://shop.example.com/sale/SPRING24"}},
					map[string]any{"type": "QUICK_REPLY", "text": "Stop promotions"}),
			}},
		{ID: "1094411223344102", Name: "product_demo", Language: "en_US", Status: "APPROVED", Category: "MARKETING",
			Components: []map[string]any{
				media("VIDEO", "https://scontent.whatsapp.net/v/demo.mp4"),
				body("See the new {{1}} in action.", "Acme Kettle"),
				buttons(map[string]any{"type": "URL", "text": "Visit us", "url": "https://shop.example.com/"}),
			}},
		{ID: "1094411223344103", Name: "invoice_ready", Language: "en_US", Status: "APPROVED", Category: "UTILITY",
			Components: []map[string]any{
				media("DOCUMENT", "https://scontent.whatsapp.net/v/invoice.pdf"),
				body("Your invoice {{1}} is attached.", "INV-1001"),
			}},
		{ID: "1094411223344104", Name: "store_directions", Language: "en_US", Status: "APPROVED", Category: "UTILITY",
			Components: []map[string]any{
				{"type": "HEADER", "format": "LOCATION"},
				body("Your order is ready for pickup at our store."),
			}},
		{ID: "1094411223344105", Name: "coupon_offer", Language: "en_US", Status: "APPROVED", Category: "MARKETING",
			Components: []map[string]any{
				body("Hi {{1}}, here is 20% off your next order.", "Ana"),
				buttons(
					map[string]any{"type": "COPY_CODE", "example": "SAVE20"},
					map[string]any{"type": "QUICK_REPLY", "text": "Not interested"}),
			}},
		{ID: "1094411223344106", Name: "login_code", Language: "en_US", Status: "APPROVED", Category: "AUTHENTICATION",
			Components: []map[string]any{
				body("*{{1}}* is your verification code. For your security, do not share this code.", "482913"),
				{"type": "FOOTER", "text": "This code expires in 10 minutes."},
				buttons(map[string]any{"type": "URL", "text": "Copy code",
					"url":     "https://www.whatsapp.com/otp/code/?otp_type=COPY_CODE&code_expiration_minutes=10&code=otp{{1}}",
					"example": []any{"https://www.whatsapp.com/otp/code/?otp_type=COPY_CODE&code=otp482913"}}),
			}},
		{ID: "1094411223344107", Name: "holiday_carousel", Language: "en_US", Status: "APPROVED", Category: "MARKETING",
			Components: []map[string]any{
				body("Our holiday picks for you."),
				{"type": "CAROUSEL", "cards": []any{
					map[string]any{"components": []any{media("IMAGE", "https://scontent.whatsapp.net/v/a.jpg")}},
					map[string]any{"components": []any{media("IMAGE", "https://scontent.whatsapp.net/v/b.jpg")}},
				}},
			}},
		{ID: "1094411223344108", Name: "booking_flow", Language: "en_US", Status: "APPROVED", Category: "UTILITY",
			Components: []map[string]any{
				body("Book your next visit in a few taps."),
				buttons(map[string]any{"type": "FLOW", "text": "Book now", "flow_id": "1234567890", "flow_action": "navigate"}),
			}},
	}
}
