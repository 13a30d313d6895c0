package server_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"gateway/server"
	"gateway/server/servertest"
)

// TestMain checks, after a full run of the package, that every (operation, status) pair the spec
// documents was received by some test through the contract-checking harness, and that no
// optional response field was present in every response received (it should be required). It
// is skipped when a -run filter selects only some tests.
func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 && !filtered() {
		spec, err := server.LoadSpec()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		if missing := servertest.Uncovered(spec); len(missing) > 0 {
			fmt.Fprintf(os.Stderr, "contract coverage: no test received these documented responses:\n  %s\n", strings.Join(missing, "\n  "))
			code = 1
		}
		var always []string
		for _, f := range servertest.AlwaysPresentOptional() {
			if _, ok := optionalByDesign[f]; !ok {
				always = append(always, f)
			}
		}
		if len(always) > 0 {
			fmt.Fprintf(os.Stderr, "contract: every response the tests received carried these optional fields; make them required in openapi.yaml or list them in optionalByDesign with the reason:\n  %s\n", strings.Join(always, "\n  "))
			code = 1
		}
	}
	os.Exit(code)
}

// optionalByDesign are optional response fields that every response of the suite happens to
// carry, with the reason they stay optional ("operation status path.field", as reported).
var optionalByDesign = map[string]string{
	"cancelBroadcast 200 data.finished_at":                                                                       "set only once the broadcast is scheduled, started, paused or finished; the suite's broadcasts all reached that state",
	"cancelBroadcast 200 data.mode":                                                                              "present only on a test-mode object (mode: test); the suite reads these from test keys or the examples, which are test mode",
	"cancelBroadcast 200 data.scheduled_at":                                                                      "set only once the broadcast is scheduled, started, paused or finished; the suite's broadcasts all reached that state",
	"getBroadcast 200 data.started_at":                                                                           "set only once the broadcast is scheduled, started, paused or finished; the suite's broadcasts all reached that state",
	"getMessage 200 data.pricing.category":                                                                       "the platform reports pricing on some statuses only; the suite's messages and example carry it",
	"getMessage 200 data.pricing.model":                                                                          "the platform reports pricing on some statuses only; the suite's messages and example carry it",
	"getMessage 200 data.pricing.type":                                                                           "the platform reports pricing on some statuses only; the suite's messages and example carry it",
	"getMessage 200 data.recipient":                                                                              "added to v1's message (optional so that a v1 description stays valid); the suite's messages are all template sends to known contacts",
	"getMessage 200 data.recipient.mobile":                                                                       "added to v1's message (optional so that a v1 description stays valid); the suite's messages are all template sends to known contacts",
	"getMessage 200 data.template":                                                                               "added to v1's message (optional so that a v1 description stays valid); the suite's messages are all template sends to known contacts",
	"getMessage 200 data.type":                                                                                   "added to v1's message (optional so that a v1 description stays valid); the suite's messages are all template sends to known contacts",
	"listBroadcastRecipients 200 data.recipients[].finished_at":                                                  "set only once the broadcast is scheduled, started, paused or finished; the suite's broadcasts all reached that state",
	"listBroadcastRecipients 200 data.recipients[].message_id":                                                   "a recipient has a message only once it was sent; the suite's listed recipients were all sent",
	"listBroadcasts 200 data.broadcasts[].finished_at":                                                           "set only once the broadcast is scheduled, started, paused or finished; the suite's broadcasts all reached that state",
	"listBroadcasts 200 data.broadcasts[].mode":                                                                  "present only on a test-mode object (mode: test); the suite reads these from test keys or the examples, which are test mode",
	"listBroadcasts 200 data.broadcasts[].started_at":                                                            "set only once the broadcast is scheduled, started, paused or finished; the suite's broadcasts all reached that state",
	"listEventExamples 200 data.events[](ContactCreatedWithoutNumberEvent).data.username":                        "an example event shows every field its type can carry; a real event leaves out what the platform did not send",
	"listEventExamples 200 data.events[](ContactCreatedWithoutNumberEvent).mode":                                 "present only on a test-mode object (mode: test); the suite reads these from test keys or the examples, which are test mode",
	"listEventExamples 200 data.events[](ContactUpdatedEvent).data.mobile":                                       "an example event shows every field its type can carry; a real event leaves out what the platform did not send",
	"listEventExamples 200 data.events[](ContactUpdatedEvent).data.previous.mobile":                              "an example event shows every field its type can carry; a real event leaves out what the platform did not send",
	"listEventExamples 200 data.events[](ContactUpdatedEvent).data.previous.user_id":                             "an example event shows every field its type can carry; a real event leaves out what the platform did not send",
	"listEventExamples 200 data.events[](ContactUpdatedEvent).data.user_id":                                      "an example event shows every field its type can carry; a real event leaves out what the platform did not send",
	"listEventExamples 200 data.events[](BroadcastCompletedEvent).mode":                                          "present only on a test-mode object (mode: test); the suite reads these from test keys or the examples, which are test mode",
	"listEventExamples 200 data.events[](BroadcastPausedEvent).mode":                                             "present only on a test-mode object (mode: test); the suite reads these from test keys or the examples, which are test mode",
	"listEventExamples 200 data.events[](ContactUpdatedEvent).mode":                                              "present only on a test-mode object (mode: test); the suite reads these from test keys or the examples, which are test mode",
	"listEventExamples 200 data.events[](MessageDeletedEvent).mode":                                              "present only on a test-mode object (mode: test); the suite reads these from test keys or the examples, which are test mode",
	"listEventExamples 200 data.events[](MessageEditedEvent).mode":                                               "present only on a test-mode object (mode: test); the suite reads these from test keys or the examples, which are test mode",
	"listEventExamples 200 data.events[](MessageReceivedEvent).data(ReceivedText).reply_to":                      "an example event shows every field its type can carry; a real event leaves out what the platform did not send",
	"listEventExamples 200 data.events[](MessageReceivedEvent).data(ReceivedText).reply_to.message_id":           "an example event shows every field its type can carry; a real event leaves out what the platform did not send",
	"listEventExamples 200 data.events[](MessageReceivedEvent).data(ReceivedText).user_id":                       "an example event shows every field its type can carry; a real event leaves out what the platform did not send",
	"listEventExamples 200 data.events[](MessageReceivedWithoutNumberEvent).data(ReceivedImage).image.caption":   "an example event shows every field its type can carry; a real event leaves out what the platform did not send",
	"listEventExamples 200 data.events[](MessageReceivedWithoutNumberEvent).data(ReceivedImage).image.mime_type": "an example event shows every field its type can carry; a real event leaves out what the platform did not send",
	"listEventExamples 200 data.events[](MessageReceivedWithoutNumberEvent).data(ReceivedImage).image.sha256":    "an example event shows every field its type can carry; a real event leaves out what the platform did not send",
	"listEventExamples 200 data.events[](MessageReceivedWithoutNumberEvent).data(ReceivedImage).media":           "an example event shows every field its type can carry; a real event leaves out what the platform did not send",
	"listEventExamples 200 data.events[](MessageReceivedWithoutNumberEvent).data(ReceivedImage).media.caption":   "an example event shows every field its type can carry; a real event leaves out what the platform did not send",
	"listEventExamples 200 data.events[](MessageReceivedWithoutNumberEvent).data(ReceivedImage).media.mime_type": "an example event shows every field its type can carry; a real event leaves out what the platform did not send",
	"listEventExamples 200 data.events[](MessageReceivedWithoutNumberEvent).data(ReceivedImage).username":        "an example event shows every field its type can carry; a real event leaves out what the platform did not send",
	"listEventExamples 200 data.events[](MessageReceivedWithoutNumberEvent).mode":                                "present only on a test-mode object (mode: test); the suite reads these from test keys or the examples, which are test mode",
	"listEventExamples 200 data.events[](MessageStatusEvent).data.pricing":                                       "the platform reports pricing on some statuses only; the suite's messages and example carry it",
	"listEventExamples 200 data.events[](MessageStatusEvent).data.pricing.category":                              "the platform reports pricing on some statuses only; the suite's messages and example carry it",
	"listEventExamples 200 data.events[](MessageStatusEvent).data.pricing.model":                                 "the platform reports pricing on some statuses only; the suite's messages and example carry it",
	"listEventExamples 200 data.events[](MessageStatusEvent).data.pricing.type":                                  "the platform reports pricing on some statuses only; the suite's messages and example carry it",
	"pauseBroadcast 200 data.mode":                                                                               "present only on a test-mode object (mode: test); the suite reads these from test keys or the examples, which are test mode",
	"pauseBroadcast 200 data.pause_reason":                                                                       "set only once the broadcast is scheduled, started, paused or finished; the suite's broadcasts all reached that state",
	"pauseBroadcast 200 data.scheduled_at":                                                                       "set only once the broadcast is scheduled, started, paused or finished; the suite's broadcasts all reached that state",
	"resumeBroadcast 200 data.mode":                                                                              "present only on a test-mode object (mode: test); the suite reads these from test keys or the examples, which are test mode",
	"resumeBroadcast 200 data.scheduled_at":                                                                      "set only once the broadcast is scheduled, started, paused or finished; the suite's broadcasts all reached that state",
	"getMessage 200 data.error.details":                                                                          "the platform leaves error_data.details out of some failures; the suite's failures all carry it",
	"listEventExamples 200 data.events[](MessageReceivedEvent).data.text":                                        "only text messages and button or list replies have text; the example is a text message",
	"listEventExamples 200 data.events[](ContactCreatedEvent).mode":                                              "the examples are all marked test; live deliveries carry no mode",
	"listEventExamples 200 data.events[](MessageReceivedEvent).mode":                                             "the examples are all marked test; live deliveries carry no mode",
	"listEventExamples 200 data.events[](MessageSentEvent).mode":                                                 "the examples are all marked test; live deliveries carry no mode",
	"listEventExamples 200 data.events[](MessageStatusEvent).mode":                                               "the examples are all marked test; live deliveries carry no mode",
	"listEventExamples 200 data.events[](WebhookTestEvent).mode":                                                 "the examples are all marked test; a webhook.test of a live endpoint carries no mode",
	"getCampaign 200 data.failure_reasons":                                                                       "the Campaign schema is shared with GET /campaigns, whose items leave the reasons out",
	"listMessages 200 data.messages[].campaign_id":                                                               "every send since campaigns exist has one; a message stored without a campaign has none",
	"listMessages 200 data.messages[].campaign_name":                                                             "as campaign_id: absent for a message stored without a campaign",
	"sendMessage 200 data.type":                                                                                  "SendResult is shared with POST /messages/template, whose answers leave the type out",
}

func filtered() bool {
	for _, a := range os.Args[1:] {
		if strings.HasPrefix(a, "-test.run") || strings.HasPrefix(a, "-test.skip") || strings.HasPrefix(a, "-test.bench") {
			return true
		}
	}
	return testing.Short()
}
