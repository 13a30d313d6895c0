package store

import (
	"cmp"
	"context"
	"errors"
	"fmt"

	"github.com/jmoiron/sqlx"
)

// The platform's identity changes of a person (user_changed_number, user_changed_user_id),
// applied under the identity rules of identity.go.

// ContactByUserID returns the account's contact with that business-scoped user id;
// ErrNotFound when none has it.
func (s *Store) ContactByUserID(ctx context.Context, accountID int64, userID string) (Contact, error) {
	var c Contact
	err := s.getPrepared(ctx, &c, `SELECT `+contactColumns+` FROM contacts WHERE account_id = $1 AND user_id = $2`,
		accountID, userID)
	return c, err
}

// NumberChange is a user's change of number (the platform's user_changed_number): the person
// is found by UserID, else by OldMobile (and its forms); NewMobile is their number from now on.
type NumberChange struct {
	UserID       string
	OldMobile    string
	NewMobile    string // digits
	NewForms     []string
	ParentUserID string
	// NewUserID is the user id the platform gives the person with their new number (a user id
	// is regenerated when the number changes); "" keeps UserID.
	NewUserID string
}

// ChangeContactNumber moves the person to their new number in one transaction, keeping their
// contact (id, history, opt-out and block). Another contact that already had the new number (a
// send to it, or a message from it before the platform told us of the change) is the same
// person and is merged into this one, unless it has another user id: then ErrConflict and
// nothing changes. The old number's aliases are dropped (the number may now be someone
// else's). It writes contact.updated (reason number_changed) and returns the contact;
// ErrNotFound when the account has no contact with that user id or old number.
func (s *Store) ChangeContactNumber(ctx context.Context, accountID int64, ch NumberChange) (Contact, error) {
	if ch.NewMobile == "" || (ch.UserID == "" && ch.OldMobile == "") {
		return Contact{}, errors.New("change contact number: the new number and the user id or old number are required")
	}
	return s.identityChange(ctx, accountID, func(tx *sqlx.Tx) (int64, error) {
		person, byOld, err := findIdentity(ctx, tx, accountID, Identity{UserID: ch.UserID, Mobile: ch.OldMobile})
		if err != nil {
			return 0, err
		}
		if person == nil {
			person = byOld
		}
		if person == nil {
			return 0, ErrNotFound
		}
		_, holder, err := findIdentity(ctx, tx, accountID, Identity{Mobile: ch.NewMobile, MobileForms: ch.NewForms})
		if err != nil {
			return 0, err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM contact_aliases WHERE account_id = $1 AND contact_id = $2`,
			accountID, person.ID); err != nil {
			return 0, translate(err)
		}
		newUserID := cmp.Or(ch.NewUserID, ch.UserID)
		set := identitySet{Mobile: ch.NewMobile, UserID: newUserID, ParentUserID: ch.ParentUserID}
		if holder != nil && holder.ID != person.ID {
			if holder.UserID.Valid && holder.UserID.String != person.UserID.String && holder.UserID.String != newUserID {
				return 0, fmt.Errorf("%w: number %s belongs to the contact %d with another user id", ErrConflict, ch.NewMobile, holder.ID)
			}
			// The holder is deleted before the person takes its number.
			_, err = mergeContacts(ctx, tx, accountID, person.ID, holder.ID, set, ContactNumberChanged)
			return person.ID, err
		}
		_, err = setIdentity(ctx, tx, accountID, person.ID, set, ContactNumberChanged, 0)
		return person.ID, err
	})
}

// UserIDChange is a user's new business-scoped user id (the platform's user_changed_user_id).
type UserIDChange struct {
	PreviousUserID string
	Mobile         string // the person's number, to find them when the previous user id is unknown
	MobileForms    []string
	UserID         string
	ParentUserID   string
}

// RelinkContactUserID gives the person their new user id in one transaction, keeping their
// contact. Another contact that already has the new user id (a message under it arrived
// first) is merged into this one. It writes contact.updated (reason user_id_changed) and
// returns the contact; ErrNotFound when no contact has the previous user id or the number.
func (s *Store) RelinkContactUserID(ctx context.Context, accountID int64, ch UserIDChange) (Contact, error) {
	if ch.UserID == "" || (ch.PreviousUserID == "" && ch.Mobile == "") {
		return Contact{}, errors.New("relink user id: the new user id and the previous one or the number are required")
	}
	return s.identityChange(ctx, accountID, func(tx *sqlx.Tx) (int64, error) {
		person, byNumber, err := findIdentity(ctx, tx, accountID, Identity{UserID: ch.PreviousUserID, Mobile: ch.Mobile,
			MobileForms: ch.MobileForms})
		if err != nil {
			return 0, err
		}
		if person == nil {
			person = byNumber
		}
		if person == nil {
			return 0, ErrNotFound
		}
		holder, _, err := findIdentity(ctx, tx, accountID, Identity{UserID: ch.UserID})
		if err != nil {
			return 0, err
		}
		set := identitySet{UserID: ch.UserID, ParentUserID: ch.ParentUserID}
		if holder != nil && holder.ID != person.ID {
			if holder.Mobile.Valid && person.Mobile.Valid && holder.Mobile.String != person.Mobile.String {
				return 0, fmt.Errorf("%w: user id %s belongs to the contact %d with another number", ErrConflict, ch.UserID, holder.ID)
			}
			if !person.Mobile.Valid {
				set.Mobile = holder.Mobile.String
			}
			_, err = mergeContacts(ctx, tx, accountID, person.ID, holder.ID, set, ContactUserIDChanged)
			return person.ID, err
		}
		_, err = setIdentity(ctx, tx, accountID, person.ID, set, ContactUserIDChanged, 0)
		return person.ID, err
	})
}

// identityChange runs change under the account's identity lock in one transaction and returns
// the changed contact.
func (s *Store) identityChange(ctx context.Context, accountID int64, change func(*sqlx.Tx) (int64, error)) (Contact, error) {
	tx, err := s.db.BeginTxx(ctx, nil)
	if err != nil {
		return Contact{}, translate(err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, identityLockSQL, accountID); err != nil {
		return Contact{}, translate(err)
	}
	id, err := change(tx)
	if err != nil {
		return Contact{}, err
	}
	var c Contact
	if err := tx.GetContext(ctx, &c, `SELECT `+contactColumns+` FROM contacts WHERE account_id = $1 AND id = $2`,
		accountID, id); err != nil {
		return Contact{}, translate(err)
	}
	if err := tx.Commit(); err != nil {
		return Contact{}, translate(err)
	}
	s.eventsWritten()
	return c, nil
}
