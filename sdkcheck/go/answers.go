package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"gateway/sdkcheck/go/client"
)

// The answer steps of the Go scenario: a simulated handset writes, and the business answers
// inside the service window (text, then an uploaded image); a handset whose last message is 25
// hours old gets the 409 window_closed; a username-only sender is answered by user id;
// message.received's per-kind union is read through its discriminator.

// handsetWrites makes a handset send a text to the dev number through the simulator's control API.
func handsetWrites(ctx context.Context, simulatorURL, phoneNumberID string, sender map[string]any) error {
	in := map[string]any{"phone_number_id": phoneNumberID, "name": "Ana", "type": "text", "payload": map[string]any{"body": "Is it in blue?"}}
	for k, v := range sender {
		in[k] = v
	}
	b, _ := json.Marshal(in)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, simulatorURL+"/_sim/inbound", bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	out, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("the simulator's handset did not write: %s %s", resp.Status, out)
	}
	return nil
}

// answerUntil sends the answer, again while until says the gateway has not yet recorded the
// handset's message (its webhook is recorded as it arrives; a few retries cover the moment
// before).
func answerUntil(ctx context.Context, live *client.ClientWithResponses, m client.SendMessageRequest,
	again func(*client.SendMessageResponse) bool) (*client.SendMessageResponse, error) {
	r, err := live.SendMessageWithResponse(ctx, nil, m)
	for i := 0; i < 50 && err == nil && again(r); i++ {
		time.Sleep(100 * time.Millisecond)
		r, err = live.SendMessageWithResponse(ctx, nil, m)
	}
	return r, err
}

func conflict(r *client.SendMessageResponse) bool { return r.StatusCode() == http.StatusConflict }

// detail is an answer's response body, for error messages ("" for none).
func detail(r *client.SendMessageResponse) string {
	if r == nil {
		return ""
	}
	return string(r.Body)
}

// kindSummary reads what the received kind carries, through the union's discriminator: each
// case reads a field only its kind has.
func kindSummary(d client.MessageReceivedData) (string, error) {
	v, err := d.ValueByDiscriminator()
	if err != nil {
		return "", err
	}
	switch k := v.(type) {
	case client.ReceivedText:
		return "text " + k.Text, nil
	case client.ReceivedImage:
		return "image " + k.Image.Id, nil
	case client.ReceivedLocation:
		return fmt.Sprintf("location %v,%v", k.Location.Latitude, k.Location.Longitude), nil
	default:
		return fmt.Sprintf("%T", v), nil
	}
}

func answerSteps(ctx context.Context, live *client.ClientWithResponses, simulatorURL, phoneNumberID, uploadedImage string) (string, error) {
	// Inside the window: text, then the uploaded image.
	const inside = "15551230201"
	if err := handsetWrites(ctx, simulatorURL, phoneNumberID, map[string]any{"from": inside}); err != nil {
		return "", err
	}
	text, err := answerUntil(ctx, live, client.SendMessageRequest{Destination: inside, Type: client.SendText,
		Text: &client.OutgoingText{Body: "Yes, in blue and navy"}}, conflict)
	if err != nil || text.JSON200 == nil || text.JSON200.Data.Type == nil || *text.JSON200.Data.Type != client.SentText {
		return "", fmt.Errorf("POST /messages (text inside the window): %v %s %s", err, body(text), detail(text))
	}
	caption := "The blue one"
	image, err := live.SendMessageWithResponse(ctx, nil, client.SendMessageRequest{Destination: inside, Type: client.SendImage,
		Image: &client.OutgoingMedia{Id: &uploadedImage, Caption: &caption}})
	if err != nil || image.JSON200 == nil {
		return "", fmt.Errorf("POST /messages (uploaded image): %v %s %s", err, body(image), detail(image))
	}

	// After the window: the handset's last message was sent 25 hours ago.
	const closed = "15551230202"
	if err := handsetWrites(ctx, simulatorURL, phoneNumberID, map[string]any{"from": closed, "sent_seconds_ago": 25 * 3600}); err != nil {
		return "", err
	}
	late, err := answerUntil(ctx, live, client.SendMessageRequest{Destination: closed, Type: client.SendText,
		Text: &client.OutgoingText{Body: "Still there?"}}, func(r *client.SendMessageResponse) bool {
		return r.JSON409 != nil && r.JSON409.WindowClosedAt == nil
	})
	if err != nil || late.JSON409 == nil || late.JSON409.Code != client.ErrorCodeWindowClosed || late.JSON409.WindowClosedAt == nil {
		return "", fmt.Errorf("an answer after the window: %v %s %s", err, body(late), detail(late))
	}
	if d := time.Since(late.JSON409.WindowClosedAt.Add(time.Hour)); d < -2*time.Minute || d > 2*time.Minute {
		return "", fmt.Errorf("window_closed_at %s, want about an hour ago", late.JSON409.WindowClosedAt)
	}

	// A username-only sender, answered by user id, then sent a template by user id.
	userID := "US.77001234567891"
	if err := handsetWrites(ctx, simulatorURL, phoneNumberID, map[string]any{"from": "", "user_id": userID, "username": "bea.sdkcheck"}); err != nil {
		return "", err
	}
	byID, err := answerUntil(ctx, live, client.SendMessageRequest{UserId: &userID, Type: client.SendText,
		Text: &client.OutgoingText{Body: "Hi, how can we help?"}}, conflict)
	if err != nil || byID.JSON200 == nil {
		return "", fmt.Errorf("POST /messages to a user id: %v %s %s", err, body(byID), detail(byID))
	}
	name, vars := "order_confirmation", []string{"Bea", "ORD-2"}
	tpl, err := live.SendTemplateMessageWithResponse(ctx, nil, client.SendTemplateRequest{UserId: &userID, TemplateName: &name, BodyVariables: &vars})
	if err != nil || tpl.JSON200 == nil || tpl.JSON200.Data.ContactId != byID.JSON200.Data.ContactId {
		return "", fmt.Errorf("POST /messages/template to a user id: %v %s", err, body(tpl))
	}

	// The per-kind union: the example message.received, and an image as a receiver gets it.
	ex, err := live.ListEventExamplesWithResponse(ctx)
	if err != nil || ex.JSON200 == nil {
		return "", fmt.Errorf("GET /events/examples: %v %s", err, body(ex))
	}
	example := ""
	for _, w := range ex.JSON200.Data.Events {
		v, err := w.ValueByDiscriminator()
		if err != nil {
			return "", err
		}
		if e, ok := v.(client.MessageReceivedEvent); ok {
			if example, err = kindSummary(e.Data); err != nil {
				return "", err
			}
		}
	}
	if example != "text Is it in blue?" {
		return "", fmt.Errorf("the example message.received read as %q", example)
	}
	received := client.MessageReceivedData{MessageId: 1003, ConversationId: 77, ContactId: 501, From: inside, Name: "Ana"}
	if err := received.FromReceivedImage(client.ReceivedImage{Type: client.ReceivedKindImage, Image: client.InboundMedia{Id: uploadedImage}}); err != nil {
		return "", err
	}
	// As a receiver gets it: through JSON.
	raw, err := json.Marshal(received)
	if err != nil {
		return "", err
	}
	var got client.MessageReceivedData
	if err := json.Unmarshal(raw, &got); err != nil {
		return "", err
	}
	if s, err := kindSummary(got); err != nil || s != "image "+uploadedImage {
		return "", fmt.Errorf("an image read as %q %v (%s)", s, err, raw)
	}
	return fmt.Sprintf("text and an uploaded image answered inside the window, 409 window_closed at %s, user id %s answered, union read (%s)",
		late.JSON409.WindowClosedAt.Format(time.RFC3339), userID, example), nil
}
