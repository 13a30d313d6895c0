package domain

import (
	"context"
	"strings"

	"gateway/store"
)

// Contacts: the people an account sends to, as the API (GET and POST /v1/contacts), the
// dashboard's contact pages and the operator's `contact block` see them.

// Contacts lists the account's contacts newest first, a page at a time (store.ListContactsWith:
// the name or the number searched; a user id finds its contact; the contacts known only by a
// user id when o.WithoutMobile), each with its service window.
func (l LiveRecords) Contacts(ctx context.Context, accountID int64, o store.ContactListOptions) (store.ContactPage, error) {
	p, err := l.Store.ListContactsWith(ctx, accountID, o)
	if err != nil {
		return p, err
	}
	return p, l.Store.FillServiceWindows(ctx, accountID, p.Contacts)
}

// UpsertContact creates the contact or updates the one with that number (in any of its forms).
func (l LiveRecords) UpsertContact(ctx context.Context, accountID int64, in store.ContactInput) (store.Contact, bool, error) {
	return l.Store.UpsertContact(ctx, accountID, in)
}

// Contact is the account's contact with that id; store.ErrNotFound for another account's.
func (l LiveRecords) Contact(ctx context.Context, accountID, id int64) (store.Contact, error) {
	return l.Store.ContactByID(ctx, accountID, id)
}

// SetContactBlocked blocks or unblocks the account's contact with that number (the operation
// the API leaves to the dashboard and the operator): a blocked contact's next send is refused.
// It returns the contact and the audit action the caller records under its own name.
func (l LiveRecords) SetContactBlocked(ctx context.Context, accountID int64, mobile string, blocked bool) (store.Contact, string, error) {
	c, err := l.Store.SetContactBlocked(ctx, accountID, mobile, blocked)
	action := store.AuditContactUnblocked
	if blocked {
		action = store.AuditContactBlocked
	}
	return c, action, err
}

// JoinName is a contact's name as its first and last name make it: the non-empty parts,
// trimmed, joined by a space.
func JoinName(first, last *string) string {
	var parts []string
	for _, p := range []*string{first, last} {
		if p != nil && strings.TrimSpace(*p) != "" {
			parts = append(parts, strings.TrimSpace(*p))
		}
	}
	return strings.Join(parts, " ")
}
