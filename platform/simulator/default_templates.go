package simulator

// DefaultTemplates returns realistic seed templates for a WABA, for local
// runs and tests. All are en_US unless noted:
//
//   - order_confirmation (1094411223344001), APPROVED UTILITY, body with 2
//     positional variables: "Hi {{1}}, your order {{2}} is confirmed. ...";
//   - welcome (1094411223344002), APPROVED MARKETING, no variables, a footer
//     and a quick-reply button;
//   - shipping_update (1094411223344003), APPROVED UTILITY, TEXT header with
//     one variable ("Order {{1}} shipped") and a body with one variable;
//   - appointment_reminder, APPROVED UTILITY in two languages: en_US
//     (1094411223344004) and es_MX (1094411223344005), body with 2 variables;
//   - reservation_confirmation (1094411223344006), APPROVED UTILITY, NAMED
//     parameters {{first_name}} and {{guests}};
//   - payment_reminder (1094411223344007), PENDING UTILITY, 1 variable;
//   - flash_sale (1094411223344008), REJECTED MARKETING (PROMOTIONAL), 1 variable.
//
// It returns a fresh slice each call.
func DefaultTemplates() []Template {
	body := func(text string, examples ...string) map[string]any {
		c := map[string]any{"type": "BODY", "text": text}
		if len(examples) > 0 {
			ex := make([]any, len(examples))
			for i, e := range examples {
				ex[i] = e
			}
			c["example"] = map[string]any{"body_text": []any{ex}}
		}
		return c
	}
	return []Template{
		{
			ID: "1094411223344001", Name: "order_confirmation", Language: "en_US", Status: "APPROVED",
			Category: "UTILITY", ParameterFormat: "POSITIONAL",
			Components: []map[string]any{
				body("Hi {{1}}, your order {{2}} is confirmed. We'll let you know when it ships.", "Ana", "ORD-7781"),
				{"type": "FOOTER", "text": "Acme Store"},
			},
		},
		{
			ID: "1094411223344002", Name: "welcome", Language: "en_US", Status: "APPROVED",
			Category: "MARKETING", ParameterFormat: "POSITIONAL",
			Components: []map[string]any{
				body("Welcome to Acme! We'll keep you posted about new arrivals and offers."),
				{"type": "FOOTER", "text": "Reply STOP to opt out"},
				{"type": "BUTTONS", "buttons": []any{
					map[string]any{"type": "QUICK_REPLY", "text": "Stop promotions"},
				}},
			},
		},
		{
			ID: "1094411223344003", Name: "shipping_update", Language: "en_US", Status: "APPROVED",
			Category: "UTILITY", ParameterFormat: "POSITIONAL",
			Components: []map[string]any{
				{"type": "HEADER", "format": "TEXT", "text": "Order {{1}} shipped",
					"example": map[string]any{"header_text": []any{"ORD-7781"}}},
				body("Your package is on its way and should arrive by {{1}}.", "Friday"),
			},
		},
		{
			ID: "1094411223344004", Name: "appointment_reminder", Language: "en_US", Status: "APPROVED",
			Category: "UTILITY", ParameterFormat: "POSITIONAL",
			Components: []map[string]any{
				body("Reminder: your appointment is on {{1}} at {{2}}.", "March 12", "10:30"),
			},
		},
		{
			ID: "1094411223344005", Name: "appointment_reminder", Language: "es_MX", Status: "APPROVED",
			Category: "UTILITY", ParameterFormat: "POSITIONAL",
			Components: []map[string]any{
				body("Recordatorio: su cita es el {{1}} a las {{2}}.", "12 de marzo", "10:30"),
			},
		},
		{
			ID: "1094411223344006", Name: "reservation_confirmation", Language: "en_US", Status: "APPROVED",
			Category: "UTILITY", ParameterFormat: "NAMED",
			Components: []map[string]any{
				{"type": "BODY", "text": "Hi {{first_name}}, your table for {{guests}} is confirmed.",
					"example": map[string]any{"body_text_named_params": []any{
						map[string]any{"param_name": "first_name", "example": "Ana"},
						map[string]any{"param_name": "guests", "example": "4"},
					}}},
			},
		},
		{
			ID: "1094411223344007", Name: "payment_reminder", Language: "en_US", Status: "PENDING",
			Category: "UTILITY", ParameterFormat: "POSITIONAL",
			Components: []map[string]any{
				body("Your invoice {{1}} is due tomorrow.", "INV-1001"),
			},
		},
		{
			ID: "1094411223344008", Name: "flash_sale", Language: "en_US", Status: "REJECTED",
			Category: "MARKETING", ParameterFormat: "POSITIONAL", RejectedReason: "PROMOTIONAL",
			Components: []map[string]any{
				body("FLASH SALE! {{1}} off everything today only!!!", "50%"),
			},
		},
	}
}
