package whatsapp

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"
)

// SendMessage sends a non-template message from phoneNumberID with token. It is allowed only
// inside the customer's service window: outside it the platform answers 131047, either at once
// (a *Error matching ErrOutsideWindow) or later as a failed status. A message that breaks the
// platform's rules (one recipient, one content, the limits above) returns an error wrapping
// ErrInvalidArgument before any request. Other errors are as for SendTemplate.
func (c *Client) SendMessage(ctx context.Context, token, phoneNumberID string, m Message) (SendResult, error) {
	req, err := sessionRequest(m)
	if err != nil {
		return SendResult{}, err
	}
	return c.send(ctx, token, phoneNumberID, req)
}

// sessionRequest validates m and builds its request body.
func sessionRequest(m Message) (sendRequest, error) {
	req := sendRequest{MessagingProduct: "whatsapp", RecipientType: "individual", BizOpaqueCallbackData: m.CallbackData}
	var err error
	if req.To, req.Recipient, err = recipientOf(m.To, m.ToUserID); err != nil {
		return sendRequest{}, err
	}
	if m.ReplyTo != "" {
		req.Context = &sessionContext{MessageID: m.ReplyTo}
	}
	kinds := m.kinds()
	if len(kinds) != 1 {
		return sendRequest{}, fmt.Errorf("%w: a message needs exactly one content, got %d (%s)", ErrInvalidArgument, len(kinds), strings.Join(kinds, ", "))
	}
	req.Type = kinds[0]
	switch req.Type {
	case TypeText:
		if err := checkText("text body", m.Text.Body, MaxTextBody); err != nil {
			return sendRequest{}, err
		}
		req.Text = &textPayload{PreviewURL: m.Text.PreviewURL, Body: m.Text.Body}
	case TypeImage, TypeVideo, TypeAudio, TypeDocument, TypeSticker:
		p, err := mediaOf(req.Type, m)
		if err != nil {
			return sendRequest{}, err
		}
		switch req.Type {
		case TypeImage:
			req.Image = p
		case TypeVideo:
			req.Video = p
		case TypeAudio:
			req.Audio = p
		case TypeDocument:
			req.Document = p
		case TypeSticker:
			req.Sticker = p
		}
	case TypeLocation:
		l := m.Location
		if l.Latitude < -90 || l.Latitude > 90 || l.Longitude < -180 || l.Longitude > 180 {
			return sendRequest{}, fmt.Errorf("%w: location %v,%v is outside -90..90, -180..180", ErrInvalidArgument, l.Latitude, l.Longitude)
		}
		req.Location = &locationPayload{Latitude: l.Latitude, Longitude: l.Longitude, Name: l.Name, Address: l.Address}
	case TypeContacts:
		if len(m.Contacts) == 0 {
			return sendRequest{}, fmt.Errorf("%w: a contacts message needs at least one card", ErrInvalidArgument)
		}
		for i, c := range m.Contacts {
			if strings.TrimSpace(c.Name.FormattedName) == "" {
				return sendRequest{}, fmt.Errorf("%w: contact card %d has no name.formatted_name", ErrInvalidArgument, i)
			}
		}
		req.Contacts = m.Contacts
	case TypeReaction:
		if m.Reaction.MessageID == "" {
			return sendRequest{}, fmt.Errorf("%w: a reaction needs the message id it reacts to", ErrInvalidArgument)
		}
		req.Reaction = &reactionPayload{MessageID: m.Reaction.MessageID, Emoji: m.Reaction.Emoji}
	case TypeInteractive:
		p, err := interactiveOf(*m.Interactive)
		if err != nil {
			return sendRequest{}, err
		}
		req.Interactive = p
	}
	return req, nil
}

// recipientOf returns the "to" and "recipient" members for a number or a user id (exactly one).
func recipientOf(to, userID string) (toField, recipientField string, err error) {
	switch {
	case to != "" && userID != "":
		return "", "", fmt.Errorf("%w: both a number and a user id given; send to one", ErrInvalidArgument)
	case userID != "":
		if !IsUserID(userID) {
			return "", "", fmt.Errorf("%w: %q is not a business-scoped user id (CC.digits-or-letters)", ErrInvalidArgument, userID)
		}
		return "", userID, nil
	default:
		to, err := recipient(to)
		return to, "", err
	}
}

// checkText fails for an empty text or one longer than limit characters.
func checkText(what, s string, limit int) error {
	if strings.TrimSpace(s) == "" {
		return fmt.Errorf("%w: empty %s", ErrInvalidArgument, what)
	}
	if n := utf8.RuneCountInString(s); n > limit {
		return fmt.Errorf("%w: %s has %d characters, the limit is %d", ErrInvalidArgument, what, n, limit)
	}
	return nil
}

// mediaOf checks a media message's content for its kind.
func mediaOf(kind string, m Message) (*mediaPayload, error) {
	md := map[string]*MediaMessage{TypeImage: m.Image, TypeVideo: m.Video, TypeAudio: m.Audio, TypeDocument: m.Document, TypeSticker: m.Sticker}[kind]
	switch {
	case (md.ID == "") == (md.Link == ""):
		return nil, fmt.Errorf("%w: %s needs exactly one of a media id and a link", ErrInvalidArgument, kind)
	case md.Link != "" && !isHTTPSURL(md.Link):
		return nil, fmt.Errorf("%w: %s link %q is not an absolute https URL", ErrInvalidArgument, kind, md.Link)
	case md.Caption != "" && (kind == TypeAudio || kind == TypeSticker):
		return nil, fmt.Errorf("%w: %s messages take no caption", ErrInvalidArgument, kind)
	case md.Filename != "" && kind != TypeDocument:
		return nil, fmt.Errorf("%w: only documents take a filename", ErrInvalidArgument)
	case utf8.RuneCountInString(md.Caption) > MaxCaption:
		return nil, fmt.Errorf("%w: caption longer than %d characters", ErrInvalidArgument, MaxCaption)
	}
	return &mediaPayload{ID: md.ID, Link: md.Link, Caption: md.Caption, Filename: md.Filename}, nil
}

func isHTTPSURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && u.Scheme == "https" && u.Host != ""
}

// interactiveOf checks an interactive message against the platform's limits.
func interactiveOf(im InteractiveMessage) (*interactivePayload, error) {
	p := &interactivePayload{Type: im.Type, Body: interactiveBody{Text: im.Body}}
	if im.Header != "" {
		if err := checkText("interactive header", im.Header, MaxHeaderFooter); err != nil {
			return nil, err
		}
		p.Header = &interactiveText{Type: "text", Text: im.Header}
	}
	if im.Footer != "" {
		if err := checkText("interactive footer", im.Footer, MaxHeaderFooter); err != nil {
			return nil, err
		}
		p.Footer = &interactiveBody{Text: im.Footer}
	}
	switch im.Type {
	case InteractiveButton:
		if err := checkText("interactive body", im.Body, MaxInteractiveBody); err != nil {
			return nil, err
		}
		if len(im.Sections) > 0 || im.ListButton != "" {
			return nil, fmt.Errorf("%w: a button message takes no list", ErrInvalidArgument)
		}
		if len(im.Buttons) == 0 || len(im.Buttons) > MaxReplyButtons {
			return nil, fmt.Errorf("%w: a button message needs 1 to %d buttons, got %d", ErrInvalidArgument, MaxReplyButtons, len(im.Buttons))
		}
		seen := map[string]bool{}
		for i, b := range im.Buttons {
			if err := checkText(fmt.Sprintf("button %d id", i+1), b.ID, MaxButtonID); err != nil {
				return nil, err
			}
			if err := checkText(fmt.Sprintf("button %d title", i+1), b.Title, MaxReplyButtonTitle); err != nil {
				return nil, err
			}
			if seen[b.ID] {
				return nil, fmt.Errorf("%w: button id %q is used twice", ErrInvalidArgument, b.ID)
			}
			seen[b.ID] = true
			p.Action.Buttons = append(p.Action.Buttons, replyButtonPayload{Type: "reply", Reply: replyButtonReply{ID: b.ID, Title: b.Title}})
		}
	case InteractiveList:
		if err := checkText("list body", im.Body, MaxListBody); err != nil {
			return nil, err
		}
		if len(im.Buttons) > 0 {
			return nil, fmt.Errorf("%w: a list message takes no reply buttons", ErrInvalidArgument)
		}
		if err := checkText("list button label", im.ListButton, MaxListButton); err != nil {
			return nil, err
		}
		if len(im.Sections) == 0 || len(im.Sections) > MaxListSections {
			return nil, fmt.Errorf("%w: a list needs 1 to %d sections, got %d", ErrInvalidArgument, MaxListSections, len(im.Sections))
		}
		p.Action.Button = im.ListButton
		rows, seen := 0, map[string]bool{}
		for i, s := range im.Sections {
			if len(im.Sections) > 1 || s.Title != "" {
				if err := checkText(fmt.Sprintf("section %d title", i+1), s.Title, MaxListSectionTitle); err != nil {
					return nil, err
				}
			}
			if len(s.Rows) == 0 {
				return nil, fmt.Errorf("%w: section %d has no rows", ErrInvalidArgument, i+1)
			}
			sp := listSectionPayload{Title: s.Title}
			for j, r := range s.Rows {
				rows++
				if err := checkText(fmt.Sprintf("row %d.%d id", i+1, j+1), r.ID, MaxListRowID); err != nil {
					return nil, err
				}
				if err := checkText(fmt.Sprintf("row %d.%d title", i+1, j+1), r.Title, MaxListRowTitle); err != nil {
					return nil, err
				}
				if utf8.RuneCountInString(r.Description) > MaxListRowDesc {
					return nil, fmt.Errorf("%w: row %d.%d description longer than %d characters", ErrInvalidArgument, i+1, j+1, MaxListRowDesc)
				}
				if seen[r.ID] {
					return nil, fmt.Errorf("%w: row id %q is used twice", ErrInvalidArgument, r.ID)
				}
				seen[r.ID] = true
				sp.Rows = append(sp.Rows, listRowPayload{ID: r.ID, Title: r.Title, Description: r.Description})
			}
			p.Action.Sections = append(p.Action.Sections, sp)
		}
		if rows > MaxListRows {
			return nil, fmt.Errorf("%w: a list has at most %d rows, got %d", ErrInvalidArgument, MaxListRows, rows)
		}
	default:
		return nil, fmt.Errorf("%w: interactive type %q is not %q or %q", ErrInvalidArgument, im.Type, InteractiveButton, InteractiveList)
	}
	return p, nil
}

// MarkRead marks an inbound message (its wamid) read, which also marks the earlier ones of the
// conversation read; with typing the user sees a typing indicator until the next answer (or
// 25 seconds). Errors are as for SendTemplate.
func (c *Client) MarkRead(ctx context.Context, token, phoneNumberID, messageID string, typing bool) error {
	if err := checkToken(token); err != nil {
		return err
	}
	if err := checkID("phone number id", phoneNumberID); err != nil {
		return err
	}
	if err := checkID("message id", messageID); err != nil {
		return err
	}
	u, err := c.endpoint(phoneNumberID, "messages")
	if err != nil {
		return err
	}
	type indicator struct {
		Type string `json:"type"`
	}
	req := struct {
		MessagingProduct string     `json:"messaging_product"`
		Status           string     `json:"status"`
		MessageID        string     `json:"message_id"`
		TypingIndicator  *indicator `json:"typing_indicator,omitempty"`
	}{MessagingProduct: "whatsapp", Status: "read", MessageID: messageID}
	if typing {
		req.TypingIndicator = &indicator{Type: "text"}
	}
	body, err := marshalRequest(req)
	if err != nil {
		return fmt.Errorf("%w: encode request: %v", ErrInvalidArgument, err)
	}
	data, err := c.do(ctx, http.MethodPost, u, token, body)
	if err != nil {
		return err
	}
	var resp struct {
		Success bool `json:"success"`
	}
	if err := lenientUnmarshal(data, &resp); err != nil || !resp.Success {
		return fmt.Errorf("%w: mark read answered %s", ErrMalformedResponse, data)
	}
	return nil
}
