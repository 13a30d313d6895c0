package server

import (
	"context"
	"hash/fnv"
	"strings"
	"time"

	"gateway/gen"
	"gateway/store"
)

// ListContacts lists the account's contacts newest first, a page at a time. Test and demo keys
// see fixture contacts.
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
	var res store.ContactPage
	if p.Mode == ModeLive {
		res, err = a.s.store.ListContacts(ctx, p.AccountID, search, limit, (page-1)*limit)
		if err != nil {
			return nil, err
		}
	} else {
		res = fixtureContacts(search, limit, (page-1)*limit)
	}
	out := gen.ContactList{Contacts: make([]gen.Contact, 0, len(res.Contacts)),
		Pagination: gen.Pagination{Page: page, Total: res.Total, Pages: (res.Total + limit - 1) / limit}}
	for _, c := range res.Contacts {
		out.Contacts = append(out.Contacts, gen.Contact{Id: c.ID, Name: c.Name, Mobile: c.Mobile,
			Blocked: c.Blocked, Created: c.CreatedAt.UTC(), Note: c.Note})
	}
	return gen.ListContacts200JSONResponse{Body: gen.ContactsEnvelope{Success: true, Message: "OK", Data: out}}, nil
}

// UpsertContact creates the contact or updates the one with the same mobile. The name is built
// from firstname and lastname when either is given; fields left out keep their values. Test and
// demo keys get the fixture answer and nothing is written.
func (a *api) UpsertContact(ctx context.Context, req gen.UpsertContactRequestObject) (gen.UpsertContactResponseObject, error) {
	p, err := principalFrom(ctx)
	if err != nil {
		return nil, err
	}
	mobile, ok := normalizeMobile(req.Body.Mobile)
	if !ok {
		return gen.UpsertContact422JSONResponse{ValidationFailedJSONResponse: gen.ValidationFailedJSONResponse{Body: gen.ValidationFailedEnvelope{
			Success: false, Code: gen.ErrorCodeValidationFailed, Message: "Invalid request: mobile",
			Errors: gen.FieldErrors{"mobile": {"must be an international number: 8 to 15 digits with the country code first"}}}}}, nil
	}
	in := store.ContactInput{Mobile: mobile, Note: req.Body.Note}
	if req.Body.Firstname != nil || req.Body.Lastname != nil {
		name := joinName(req.Body.Firstname, req.Body.Lastname)
		in.Name = &name
	}
	var c store.Contact
	var created bool
	if p.Mode == ModeLive {
		c, created, err = a.s.store.UpsertContact(ctx, p.AccountID, in)
		if err != nil {
			return nil, err
		}
	} else {
		c = fixtureContact(mobile, in.Name)
		created = true
	}
	msg := "Contact updated"
	if created {
		msg = "Contact created"
	}
	return gen.UpsertContact200JSONResponse{Body: gen.ContactUpsertEnvelope{Success: true, Message: msg,
		Data: gen.ContactUpsert{ContactId: c.ID, Created: created, Name: c.Name, Mobile: c.Mobile}}}, nil
}

func joinName(first, last *string) string {
	var parts []string
	for _, p := range []*string{first, last} {
		if p != nil && strings.TrimSpace(*p) != "" {
			parts = append(parts, strings.TrimSpace(*p))
		}
	}
	return strings.Join(parts, " ")
}

// fixtureContacts are what test and demo keys list: fixed, realistic, never from the database.
var fixtures = []store.Contact{
	{ID: 3, Mobile: "5511987654321", Name: "Ana Souza", CreatedAt: time.Date(2026, 1, 12, 9, 30, 0, 0, time.UTC)},
	{ID: 2, Mobile: "447700900123", Name: "Oliver Smith", CreatedAt: time.Date(2026, 1, 10, 15, 0, 0, 0, time.UTC)},
	{ID: 1, Mobile: "15551234567", Name: "Maria Garcia", Note: "VIP", CreatedAt: time.Date(2026, 1, 5, 8, 0, 0, 0, time.UTC)},
}

func fixtureContacts(search string, limit, offset int) store.ContactPage {
	var match []store.Contact
	q := strings.ToLower(strings.TrimSpace(search))
	for _, c := range fixtures {
		if q == "" || strings.Contains(strings.ToLower(c.Name), q) || strings.Contains(c.Mobile, q) {
			match = append(match, c)
		}
	}
	page := store.ContactPage{Total: len(match), Contacts: []store.Contact{}}
	if offset < len(match) {
		page.Contacts = match[offset:min(len(match), offset+limit)]
	}
	return page
}

func fixtureContact(mobile string, name *string) store.Contact {
	h := fnv.New32a()
	h.Write([]byte(mobile))
	c := store.Contact{ID: int64(h.Sum32()%100000) + 1000, Mobile: mobile}
	if name != nil {
		c.Name = *name
	}
	return c
}
