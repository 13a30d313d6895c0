package server

import (
	"context"
	"errors"

	"gateway/platform/whatsapp"
	"gateway/server/domain"
)

// The inbound half of the platform's messages webhook: each message is turned from the
// platform's wire format into the domain's terms and recorded by domain.Inbound. A message
// that cannot be parsed or applied is kept as a dead letter, with its reason logged: nothing
// the platform sends is dropped silently.

// recordInbound records one inbound message (an edit, a deletion, an identity notice or a
// message of any kind) of the account's number; it fails only when the item could not be
// applied and its dead letter could not be stored.
func (s *Server) recordInbound(ctx context.Context, d *platformPost, accountID int64, destination string, m whatsapp.InboundMessage) error {
	item := map[string]any{"message": rawOr(m.Raw, m), "sender": m.Sender}
	if m.Err != nil {
		return s.deadLetter(ctx, d, accountID, "message", item, m.Err)
	}
	return s.isolate(ctx, d, accountID, "message", item, func() error {
		out, err := s.inbound().Record(ctx, accountID, destination, inboundFromPlatform(m))
		if err != nil {
			return err
		}
		if out.Duplicate {
			s.log.DebugContext(ctx, "platform webhook: inbound item already applied", "account_id", accountID, "wamid", m.ID,
				"type", m.Type)
		}
		return nil
	})
}

// applySingleInbound handles a delivery that is exactly one message (not an edit, a deletion or
// an identity notice) of a known, non-sandbox number: the raw body is stored with the message,
// which for a known sender is one statement (store.RecordInbound), or on its own for a
// redelivery. It reports false, with
// nothing written, for any other delivery, and for a message that cannot be applied (the caller
// applies it again as an item, which keeps it as a dead letter); it fails, with nothing
// written, when the database does.
func (s *Server) applySingleInbound(ctx context.Context, p *whatsapp.WebhookPayload, body []byte) (bool, error) {
	if len(p.Entry) != 1 || len(p.Entry[0].Changes) != 1 {
		return false, nil
	}
	ch := p.Entry[0].Changes[0]
	v := ch.Value
	pnid := v.Metadata.PhoneNumberID
	if ch.Field != "messages" || len(v.Messages) != 1 || len(v.Statuses) != 0 || len(v.Errors) != 0 || v.Messages[0].Err != nil ||
		pnid == "" || pnid == s.opts.Sandbox.PhoneNumberID {
		return false, nil
	}
	in := inboundFromPlatform(v.Messages[0])
	if !in.IsMessage() {
		return false, nil
	}
	conn, err := s.tenantByPhoneNumberID(ctx, pnid)
	if err != nil || conn == nil {
		return false, err
	}
	in.Body = body
	out, err := s.inbound().Record(ctx, conn.AccountID, conn.PhoneNumber, in)
	switch {
	case errors.Is(err, domain.ErrInboundNotApplicable):
		return false, nil
	case err != nil:
		return false, err
	case out.Duplicate:
		// A redelivery records nothing, its body included: it is kept on its own, as every
		// delivery is.
		if _, err := s.store.RecordPlatformWebhook(ctx, body); err != nil {
			return false, err
		}
		s.log.DebugContext(ctx, "platform webhook: inbound item already applied", "account_id", conn.AccountID, "wamid", in.PlatformMessageID,
			"type", in.Type)
	}
	return true, nil
}

// inbound is the domain's inbound recorder over the server's store and clock.
func (s *Server) inbound() domain.Inbound {
	return domain.Inbound{Store: s.store, Now: s.now}
}

// inboundFromPlatform turns a parsed platform message into the domain's terms.
func inboundFromPlatform(m whatsapp.InboundMessage) domain.InboundMessage {
	in := domain.InboundMessage{
		PlatformMessageID: m.ID,
		Sender: domain.InboundSender{WaID: m.Sender.WaID, UserID: m.Sender.UserID, ParentUserID: m.Sender.ParentUserID,
			Username: m.Sender.Username, Name: m.Sender.Name},
		Type:    m.Type,
		Raw:     m.Raw,
		Content: inboundContent(m),
		Window:  m.Window(),
	}
	if at, ok := m.Time(); ok {
		in.SentAt = at
	}
	if c := m.Context; c != nil {
		in.ReplyTo, in.Forwarded, in.FrequentlyForwarded = c.ID, c.Forwarded, c.FrequentlyForwarded
		if p := c.ReferredProduct; p != nil {
			in.ReferredProduct = &domain.ReferredProduct{CatalogID: p.CatalogID, ProductRetailerID: p.ProductRetailerID}
		}
	}
	if r := m.Referral; r != nil {
		in.Referral = &domain.Referral{SourceURL: r.SourceURL, SourceID: r.SourceID, SourceType: r.SourceType,
			Headline: r.Headline, Body: r.Body, MediaType: r.MediaType, ImageURL: r.ImageURL, VideoURL: r.VideoURL,
			ThumbnailURL: r.ThumbnailURL, CtwaClid: r.CtwaClid}
	}
	switch {
	case m.Type == whatsapp.TypeEdit && m.Edit != nil && m.Edit.Message != nil:
		in.Edit = &domain.InboundEdit{OriginalID: m.Edit.OriginalMessageID, Type: m.Edit.Message.Type,
			Content: inboundContent(*m.Edit.Message)}
	case m.Type == whatsapp.TypeRevoke && m.Revoke != nil:
		in.RevokedID = m.Revoke.OriginalMessageID
	}
	return in
}

// inboundContent is the typed content of a message of any kind.
func inboundContent(m whatsapp.InboundMessage) domain.InboundContent {
	var c domain.InboundContent
	if m.Text != nil {
		body := m.Text.Body
		c.Text = &body
	}
	c.Image, c.Video, c.Audio = inboundMedia(m.Image), inboundMedia(m.Video), inboundMedia(m.Audio)
	c.Document, c.Sticker = inboundMedia(m.Document), inboundMedia(m.Sticker)
	if l := m.Location; l != nil {
		c.Location = &domain.Location{Latitude: l.Latitude, Longitude: l.Longitude, Name: l.Name, Address: l.Address, URL: l.URL}
	}
	for _, k := range m.Contacts {
		c.Contacts = append(c.Contacts, contactCard(k))
	}
	if i := m.Interactive; i != nil {
		c.Interactive = &domain.Interactive{Type: i.Type}
		if r := i.ButtonReply; r != nil {
			c.Interactive.ButtonReply = &domain.ReplyRow{ID: r.ID, Title: r.Title}
		}
		if r := i.ListReply; r != nil {
			c.Interactive.ListReply = &domain.ReplyRow{ID: r.ID, Title: r.Title, Description: r.Description}
		}
		if r := i.NFMReply; r != nil {
			c.Interactive.NFMReply = &domain.FlowReply{Name: r.Name, Body: r.Body, Response: r.ResponseJSON, FlowToken: r.FlowToken}
			if len(r.ResponseJSON) == 0 {
				c.Interactive.NFMReply.Response = []byte("{}")
			}
		}
	}
	if b := m.Button; b != nil {
		c.Button = &domain.Button{Payload: b.Payload, Text: b.Text}
	}
	if r := m.Reaction; r != nil {
		c.Reaction = &domain.Reaction{PlatformMessageID: r.MessageID, Emoji: r.Emoji}
	}
	if o := m.Order; o != nil {
		c.Order = &domain.Order{CatalogID: o.CatalogID, Text: o.Text, Items: make([]domain.OrderItem, 0, len(o.ProductItems))}
		for _, it := range o.ProductItems {
			c.Order.Items = append(c.Order.Items, domain.OrderItem{ProductRetailerID: it.ProductRetailerID,
				Quantity: it.Quantity, ItemPrice: it.ItemPrice, Currency: it.Currency})
		}
	}
	if sy := m.System; sy != nil {
		c.System = &domain.SystemNotice{Type: sy.Type, Body: sy.Body, NewWaID: sy.WaID, NewUserID: sy.UserID,
			NewParentUserID: sy.ParentUserID, PreviousUserID: sy.PreviousUserID, PreviousParentUserID: sy.PreviousParentUserID}
	}
	if len(m.Errors) > 0 {
		c.Unsupported = &domain.Unsupported{}
		for _, e := range m.Errors {
			c.Unsupported.Errors = append(c.Unsupported.Errors, domain.UnsupportedError{Code: e.Code, Title: e.Title,
				Message: e.Message, Details: e.ErrorData.Details})
		}
	}
	return c
}

func inboundMedia(md *whatsapp.Media) *domain.MediaContent {
	if md == nil {
		return nil
	}
	return &domain.MediaContent{ID: md.ID, MimeType: md.MimeType, SHA256: md.SHA256, Caption: md.Caption, Filename: md.Filename,
		Voice: md.Voice, Animated: md.Animated}
}

func contactCard(k whatsapp.ContactCard) domain.ContactCard {
	n := k.Name
	out := domain.ContactCard{Name: domain.ContactCardName{FormattedName: n.FormattedName, FirstName: n.FirstName,
		LastName: n.LastName, MiddleName: n.MiddleName, Suffix: n.Suffix, Prefix: n.Prefix}, Birthday: k.Birthday}
	for _, p := range k.Phones {
		out.Phones = append(out.Phones, domain.ContactPhone{Phone: p.Phone, WaID: p.WaID, Type: p.Type})
	}
	for _, e := range k.Emails {
		out.Emails = append(out.Emails, domain.ContactEmail{Email: e.Email, Type: e.Type})
	}
	for _, u := range k.URLs {
		out.URLs = append(out.URLs, domain.ContactURL{URL: u.URL, Type: u.Type})
	}
	for _, a := range k.Addresses {
		out.Addresses = append(out.Addresses, domain.ContactAddress{Street: a.Street, City: a.City, State: a.State,
			Zip: a.Zip, Country: a.Country, CountryCode: a.CountryCode, Type: a.Type})
	}
	if o := k.Org; o != nil {
		out.Org = &domain.ContactOrg{Company: o.Company, Department: o.Department, Title: o.Title}
	}
	return out
}
