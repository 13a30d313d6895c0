package server

import (
	"context"
	"strings"

	"gateway/gen"
	"gateway/server/domain"
	"gateway/server/refusal"
	"gateway/store"
)

// ListContacts lists the account's contacts newest first, a page at a time (the key's
// domain.Records), each with its identity and service window. Contacts known only by a user
// id are listed only on request. Test and demo keys see fixture contacts.
func (a *api) ListContacts(ctx context.Context, req gen.ListContactsRequestObject) (gen.ListContactsResponseObject, error) {
	p, err := principalFrom(ctx)
	if err != nil {
		return nil, err
	}
	limit, page, search := 50, 1, ""
	if req.Params.Limit != nil {
		limit = *req.Params.Limit
	}
	if req.Params.Page != nil {
		page = *req.Params.Page
	}
	if req.Params.Search != nil {
		search = *req.Params.Search
	}
	// Contacts known only by a user id have no mobile: a v1 client receives them only when it
	// asks (include_user_id_only).
	res, err := p.records.Contacts(ctx, p.AccountID, store.ContactListOptions{Search: search, Limit: limit,
		Offset: (page - 1) * limit, WithoutMobile: deref(req.Params.IncludeUserIdOnly)})
	if err != nil {
		return nil, err
	}
	out := gen.ContactList{Contacts: make([]gen.Contact, 0, len(res.Contacts)),
		Pagination: gen.Pagination{Page: page, Total: res.Total, Pages: (res.Total + limit - 1) / limit}}
	for _, c := range res.Contacts {
		gc := gen.Contact{Id: c.ID, Name: c.Name, Mobile: c.Mobile, Blocked: c.Blocked, Created: c.CreatedAt.UTC(),
			Note: c.Note, UserId: omitEmpty(c.UserID), ParentUserId: omitEmpty(c.ParentUserID), Username: omitEmpty(c.Username)}
		if c.WindowExpiresAt != nil {
			t := c.WindowExpiresAt.UTC()
			gc.WindowExpiresAt = &t
		}
		out.Contacts = append(out.Contacts, gc)
	}
	return gen.ListContacts200JSONResponse{Body: gen.ContactsEnvelope{Success: true, Message: "OK", Data: out}}, nil
}

// UpsertContact creates the contact or updates the one with the same mobile. firstname and
// lastname are stored apart and the name is their join: a part left out keeps its stored
// value, as every other field left out does. Test and
// demo keys get the fixture answer and nothing is written.
func (a *api) UpsertContact(ctx context.Context, req gen.UpsertContactRequestObject) (gen.UpsertContactResponseObject, error) {
	p, err := principalFrom(ctx)
	if err != nil {
		return nil, err
	}
	mobile, ok := domain.NormalizeMobile(req.Body.Mobile)
	if !ok {
		return nil, invalid(refusal.One("mobile", "must be an international number: 8 to 15 digits with the country code first"))
	}
	in := store.ContactInput{Mobile: mobile, Note: req.Body.Note,
		Firstname: trimmed(req.Body.Firstname), Lastname: trimmed(req.Body.Lastname)}
	c, created, err := p.records.UpsertContact(ctx, p.AccountID, in)
	if err != nil {
		return nil, err
	}
	msg := "Contact updated"
	if created {
		msg = "Contact created"
	}
	return gen.UpsertContact200JSONResponse{Body: gen.ContactUpsertEnvelope{Success: true, Message: msg,
		Data: gen.ContactUpsert{ContactId: c.ID, Created: created, Name: c.Name, Mobile: c.Mobile}}}, nil
}

// trimmed is the value without surrounding spaces; nil stays nil.
func trimmed(p *string) *string {
	if p == nil {
		return nil
	}
	v := strings.TrimSpace(*p)
	return &v
}
