package whatsapp

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// scanSeeds are envelopes at the edges of what scanWebhook takes: repeated keys, other cases,
// nulls, trailing data, odd white space, wrong types at each level.
var scanSeeds = []string{
	`{"object":"whatsapp_business_account","entry":[{"id":"1","changes":[{"field":"messages","value":{"statuses":[{"id":"wamid.1","status":"read","timestamp":"1"}]}}]}]}`,
	`{"entry":[{"changes":null}],"entry":[{"id":2,"time":"3","changes":[{"value":null,"value":{"x":1}}]}]}`,
	`{"Entry":[],"entry":[]}`,
	`{"object":null,"entry":[{"changes":[{"field":1,"field":true}]}]}`,
	`{"object":1,"entry":[]}`,
	`{"entry":[{"changes":"x"},{"changes":[]}]}`,
	`{"entry":[{"changes":[{"value":[]},null]}]}`,
	`{"entry":null}`,
	` {"entry":[{}]} ` + "\v",
	`{"entry":[{}]} {}`,
	`{"entry":[{"id":{"a":1},"time":1.5e3}]}`,
	`{"entry":[{"changes":[{"value":{"statuses":[{"id":"w","errors":[{"code":"x"}]}]}}]}]}`,
	"{\"entry\":[{\"id\":\"\xff\"}],\"\xffentry\":1}",
	`{"entry":[],"\u0065ntry":[{"id":"1"}]}`,
	`{"entry":[{"changes":[{"value":{"a":"}]\"{["},"v\u0061lue":{"b":[1,{}]}}]}]}`,
	`{"object":"wh\u0061ts\"app","entry":[{"time":-0.5e-3,"changes":[{"field":"x","value":[true,false,null]}]}]}`,
}

// Where scanWebhook answers, its answer is parseWebhookLevels' (deeply equal, raw bytes
// included); where it does not, the levels parse decides.
func FuzzScanWebhookSameAsLevels(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.json"))
	for _, name := range files {
		if b, err := os.ReadFile(name); err == nil {
			f.Add(b)
		}
	}
	for _, s := range scanSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		fast, ok := scanWebhook(body)
		slow, err := parseWebhookLevels(body)
		if !ok {
			return
		}
		if err != nil {
			t.Fatalf("scanWebhook took %q, which parseWebhookLevels refuses: %v", body, err)
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Fatalf("%q:\nscan   %+v\nlevels %+v", body, fast, slow)
		}
	})
}

// Every recorded platform webhook takes the single pass (otherwise the fast path would
// silently never run).
func TestScanWebhookTakesRecordedBodies(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no recorded webhooks: %v", err)
	}
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := parseWebhookLevels(b); err != nil {
			continue // a malformed sample: the levels parse answers it
		}
		if _, ok := scanWebhook(b); !ok {
			t.Errorf("%s: scanWebhook declined a well-formed webhook", name)
		}
	}
}

// BenchmarkParseWebhook compares the single pass with the level-by-level parse on a status
// report as the platform sends it.
func BenchmarkParseWebhook(b *testing.B) {
	body := []byte(`{"object":"whatsapp_business_account","entry":[{"id":"102290129340398","changes":[{"value":` +
		`{"messaging_product":"whatsapp","metadata":{"display_phone_number":"15550783881","phone_number_id":"106540352242922"},` +
		`"statuses":[{"id":"wamid.HBgLMTY1MDM4Nzk0MzkVAgARGBI3MTE5MjA3NzQzQjk0QjEwMEMA","status":"delivered",` +
		`"timestamp":"1750263773","recipient_id":"16505551234","pricing":{"billable":true,"pricing_model":"PMP",` +
		`"category":"utility","type":"regular"}}]},"field":"messages"}]}]}`)
	b.Run("scan", func(b *testing.B) {
		for b.Loop() {
			if _, ok := scanWebhook(body); !ok {
				b.Fatal("declined")
			}
		}
	})
	b.Run("levels", func(b *testing.B) {
		for b.Loop() {
			if _, err := parseWebhookLevels(body); err != nil {
				b.Fatal(err)
			}
		}
	})
	// An inbound text with the sender's user id, the other common delivery.
	text := []byte(`{"object":"whatsapp_business_account","entry":[{"id":"102290129340398","changes":[{"value":` +
		`{"messaging_product":"whatsapp","metadata":{"display_phone_number":"15550783881","phone_number_id":"106540352242922"},` +
		`"contacts":[{"profile":{"name":"Sheena Nelson"},"wa_id":"16505551234","user_id":"US.13491208655302741918"}],` +
		`"messages":[{"from":"16505551234","from_user_id":"US.13491208655302741918","id":"wamid.HBgLMTY1MDU1NTEyMzQVAgASGBQzQTRBNjU5OUFFRTAzODEwMTQ0RgA=",` +
		`"timestamp":"1749416383","type":"text","text":{"body":"Is it in blue?"}}]},"field":"messages"}]}]}`)
	b.Run("scan-text", func(b *testing.B) {
		for b.Loop() {
			p, ok := scanWebhook(text)
			if !ok || p.Entry[0].Changes[0].Value.Messages[0].Err != nil {
				b.Fatal("declined")
			}
		}
	})
}
