package store

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// A contact is a person known by a number (mobile), a business-scoped user id (user_id), or
// both; opt-out and block follow the person whichever identifier arrives. A user id is never
// normalised as a phone number.
//
// Linking and merging (identityFor). A message carrying both a number and a user id links
// them:
//   - no contact has either: one contact is created with both;
//   - one contact has one of them and not the other: the missing identifier is added to it;
//   - the number's contact has no user id and the user id's contact has no number: they are one
//     person met twice; the user id's contact is merged into the number's contact (which keeps
//     its id: it is the one v1 clients know), and is deleted;
//   - the two identifiers are each on a contact that already has another of the kind (the
//     number's contact has another user id, or the user id's contact another number): the user
//     id wins (it follows the person; numbers are reassigned), the message is recorded against
//     the user id's contact, and neither contact changes: the platform's user_changed_number and
//     user_changed_user_id say when an identifier really moved (ChangeContactNumber,
//     RelinkContactUserID).
//
// Merging moves the dropped contact's messages, conversation (or, when both have one, its
// messages into the kept one, keeping the later window), and aliases to the kept contact; the
// kept contact is blocked when either was, and takes the dropped one's name when it has none.
//
// Every change of a contact's identifiers writes a contact.updated event (data: contact_id,
// reason, mobile, user_id, parent_user_id, username, previous {mobile, user_id,
// parent_user_id}, and merged_contact_id after a merge; an identifier not known is left out)
// in the statement that changes it.
// Identity changes of an account serialise on a transaction advisory lock (identityLockSQL)
// and decide on rows read after taking it, so two concurrent first messages of one person make
// one contact. Creating the contact of a sender nobody knows does not need the whole account:
// it takes that lock shared, then a lock per identifier the message carries (each form of the
// number, the user id: identityCreateLockSQL), and decides on rows read after that. Two first
// messages that could find each other's contact share an identifier, so they still serialise;
// first messages of different people create their contacts side by side; a link, merge or
// identity change (the exclusive lock) waits for every creation and they for it.

// Reasons of a contact.updated event.
const (
	ContactLinked        = "linked"         // a message carried an identifier the contact lacked
	ContactMerged        = "merged"         // two contacts were found to be one person
	ContactNumberChanged = "number_changed" // user_changed_number
	ContactUserIDChanged = "user_id_changed"
)

// identityLockSQL serialises identity changes within an account (two-key advisory lock space;
// 1668247158 is this rule's class).
const identityLockSQL = `SELECT pg_advisory_xact_lock(1668247158, ($1::bigint % 2147483647)::int)`

// identityCreateLockSQL takes the account's identity lock shared, then each identifier's ($2:
// "m:" and each form of the number, "u:" and the user id) in the order of their keys, so that
// two creations never wait for each other crosswise.
const identityCreateLockSQL = `SELECT pg_advisory_xact_lock_shared(1668247158, ($1::bigint % 2147483647)::int),
		(SELECT count(pg_advisory_xact_lock(k)) FROM (
			SELECT DISTINCT hashtextextended('identity:' || $1::bigint || ':' || x, 0) AS k FROM unnest($2::text[]) x ORDER BY k) l)`

// identityRow is a contact as the identity rules read it.
type identityRow struct {
	ID           int64          `db:"id"`
	Mobile       sql.NullString `db:"mobile"`
	UserID       sql.NullString `db:"user_id"`
	ParentUserID sql.NullString `db:"parent_user_id"`
	Username     sql.NullString `db:"username"`
	Name         string         `db:"name"`
	Blocked      bool           `db:"blocked"`
	Created      bool           `db:"created"`
}

const identityColumns = `id, mobile, user_id, parent_user_id, username, name, blocked`

// The identity lookups: by user id, and by a number and its other forms as a mobile or an
// alias (best match first, as ContactByMobile).
const (
	contactByUserIDSQL = `SELECT ` + identityColumns + ` FROM contacts WHERE account_id = $1 AND user_id = $2`
	contactByFormsSQL  = `SELECT c.id, c.mobile, c.user_id, c.parent_user_id, c.username, c.name, c.blocked FROM contacts c JOIN (` + contactMatchesSQL + `) x ON x.id = c.id
		WHERE c.account_id = $1 ORDER BY x.pos, x.src LIMIT 1`
)

// Identity is who sent a message, or whom a change is about: a number (digits, with its other
// forms), a business-scoped user id, or both.
type Identity struct {
	Mobile       string
	MobileForms  []string // other forms of Mobile, tried after it
	UserID       string
	ParentUserID string
	Username     string
	Name         string // the profile name, for a new contact
}

// findIdentity reads the contacts of the user id and of the number (either may be absent).
func findIdentity(ctx context.Context, q sqlx.QueryerContext, accountID int64, id Identity) (byUser, byNumber *identityRow, err error) {
	if id.UserID != "" {
		var r identityRow
		switch err := sqlx.GetContext(ctx, q, &r, contactByUserIDSQL, accountID, id.UserID); {
		case err == nil:
			byUser = &r
		case !errors.Is(err, sql.ErrNoRows):
			return nil, nil, translate(err)
		}
	}
	if id.Mobile != "" {
		var r identityRow
		forms := append([]string{id.Mobile}, id.MobileForms...)
		switch err := sqlx.GetContext(ctx, q, &r, contactByFormsSQL, accountID, pq.Array(forms)); {
		case err == nil:
			byNumber = &r
		case !errors.Is(err, sql.ErrNoRows):
			return nil, nil, translate(err)
		}
	}
	return byUser, byNumber, nil
}

// settled reports whether the contacts found need no identity change for id: the contact to
// record against (nil when a change is needed).
func settled(id Identity, byUser, byNumber *identityRow) *identityRow {
	switch {
	case byUser != nil && byNumber != nil:
		if byUser.ID == byNumber.ID || byUser.Mobile.Valid || byNumber.UserID.Valid {
			return byUser // the same contact, or the user id wins (see above)
		}
		return nil // merge
	case byUser != nil:
		if id.Mobile == "" || byUser.Mobile.Valid {
			return byUser
		}
		return nil // link the number
	case byNumber != nil:
		if id.UserID == "" || byNumber.UserID.Valid {
			return byNumber
		}
		return nil // link the user id
	}
	return nil // create
}

// identityRead is what the caller of identityFor read of the contacts just before.
type identityRead int

const (
	identityUnread    identityRead = iota // nothing: identityFor reads first without a lock
	identityUnsettled                     // contacts that need a link or a merge
	identityUnknown                       // no contact by either identifier: one is to be created
)

// identityFor returns the account's contact for id within tx, creating, linking or merging as
// the rules above say, each change with its event. A created contact comes back with Created.
// read says what the caller's own read just now found: after identityUnsettled the unlocked
// read is skipped for the locked one; after identityUnknown the contact is created under the
// identifiers' locks (createIdentity), and when that finds a contact needing a change after
// all, it fails with errContactChanged, with nothing written, for the caller to start again.
func identityFor(ctx context.Context, tx *sqlx.Tx, accountID int64, id Identity, read identityRead) (identityRow, error) {
	if id.Mobile == "" && id.UserID == "" {
		return identityRow{}, errors.New("contact identity: a number or a user id is required")
	}
	if read == identityUnknown {
		return createIdentity(ctx, tx, accountID, id)
	}
	if read == identityUnread {
		byUser, byNumber, err := findIdentity(ctx, tx, accountID, id)
		if err != nil {
			return identityRow{}, err
		}
		if c := settled(id, byUser, byNumber); c != nil {
			return *c, nil
		}
	}
	if _, err := tx.ExecContext(ctx, identityLockSQL, accountID); err != nil {
		return identityRow{}, translate(err)
	}
	byUser, byNumber, err := findIdentity(ctx, tx, accountID, id)
	if err != nil {
		return identityRow{}, err
	}
	if c := settled(id, byUser, byNumber); c != nil {
		return *c, nil
	}
	switch {
	case byUser != nil && byNumber != nil:
		return mergeContacts(ctx, tx, accountID, byNumber.ID, byUser.ID, identitySet{UserID: id.UserID,
			ParentUserID: id.ParentUserID, Username: id.Username}, ContactMerged)
	case byUser != nil:
		return setIdentity(ctx, tx, accountID, byUser.ID, identitySet{Mobile: id.Mobile}, ContactLinked, 0)
	case byNumber != nil:
		return setIdentity(ctx, tx, accountID, byNumber.ID, identitySet{UserID: id.UserID, ParentUserID: id.ParentUserID,
			Username: id.Username}, ContactLinked, 0)
	}
	c, err := createContact(ctx, tx, accountID, id)
	if !errors.Is(err, ErrNotFound) {
		return c, err
	}
	// A writer that does not take the identity lock (a send, POST /contacts) created the
	// number's contact meanwhile: it is now found.
	byUser, byNumber, err = findIdentity(ctx, tx, accountID, id)
	if err != nil {
		return identityRow{}, err
	}
	if c := settled(id, byUser, byNumber); c != nil {
		return *c, nil
	}
	if byNumber != nil {
		return setIdentity(ctx, tx, accountID, byNumber.ID, identitySet{UserID: id.UserID, ParentUserID: id.ParentUserID,
			Username: id.Username}, ContactLinked, 0)
	}
	return identityRow{}, fmt.Errorf("%w: the contact of %s %s was created concurrently", ErrConflict, id.Mobile, id.UserID)
}

// createContactSQL creates a contact with a number, a user id or both, with its event in the
// same statement (nothing, and ErrNotFound, when a concurrent writer made the number's contact
// first): contact.created when it has a mobile, contact.created_without_number (data:
// contact_id, user_id, parent_user_id, username, name) when it has only a user id, so that no
// receiver gets a contact.created without mobile.
const createContactSQL = `WITH c AS (
		INSERT INTO contacts (account_id, mobile, user_id, parent_user_id, username, name)
		VALUES ($1, NULLIF($2, ''), NULLIF($3, ''), NULLIF($4, ''), NULLIF($5, ''), $6)
		ON CONFLICT DO NOTHING
		RETURNING ` + identityColumns + `
	), e AS (
		INSERT INTO events (account_id, type, data)
		SELECT $1, CASE WHEN c.mobile IS NULL THEN 'contact.created_without_number' ELSE 'contact.created' END,
			CASE WHEN c.mobile IS NULL
				THEN jsonb_build_object('contact_id', c.id, 'name', c.name)
				ELSE jsonb_build_object('contact_id', c.id, 'mobile', c.mobile, 'name', c.name) END
			|| jsonb_strip_nulls(jsonb_build_object('user_id', c.user_id, 'parent_user_id', c.parent_user_id,
				'username', c.username))
		FROM c
	)
	SELECT *, true AS created FROM c`

// createIdentity creates the contact of a sender no contact was found for, under the account's
// identity lock shared and the identifiers' own (identityCreateLockSQL): the contact found once
// they are held when there is one and it needs no change, else the one created. It fails with
// errContactChanged when a contact needing a link or a merge is found then, or a writer that
// takes no identity lock (a send, POST /contacts) created the number's contact meanwhile.
func createIdentity(ctx context.Context, tx *sqlx.Tx, accountID int64, id Identity) (identityRow, error) {
	keys := make([]string, 0, 2+len(id.MobileForms))
	if id.UserID != "" {
		keys = append(keys, "u:"+id.UserID)
	}
	if id.Mobile != "" {
		keys = append(keys, "m:"+id.Mobile)
		for _, f := range id.MobileForms {
			keys = append(keys, "m:"+f)
		}
	}
	if _, err := tx.ExecContext(ctx, identityCreateLockSQL, accountID, pq.Array(keys)); err != nil {
		return identityRow{}, translate(err)
	}
	byUser, byNumber, err := findIdentity(ctx, tx, accountID, id)
	switch {
	case err != nil:
		return identityRow{}, err
	case byUser != nil || byNumber != nil:
		if c := settled(id, byUser, byNumber); c != nil {
			return *c, nil
		}
		return identityRow{}, errContactChanged
	}
	c, err := createContact(ctx, tx, accountID, id)
	if errors.Is(err, ErrNotFound) {
		return identityRow{}, errContactChanged
	}
	return c, err
}

func createContact(ctx context.Context, tx *sqlx.Tx, accountID int64, id Identity) (identityRow, error) {
	var r identityRow
	err := tx.GetContext(ctx, &r, createContactSQL, accountID, id.Mobile, id.UserID, id.ParentUserID, id.Username, id.Name)
	return r, translate(err)
}

// identitySet is what setIdentity changes: a non-empty field replaces the stored one.
type identitySet struct {
	Mobile, UserID, ParentUserID, Username string
	Block                                  bool // block the contact (after a merge with a blocked one)
	Name                                   string
}

// setIdentitySQL changes a contact's identifiers and writes contact.updated when an identifier
// changed (or a merge happened: $9 > 0), in one statement.
const setIdentitySQL = `WITH o AS (
		SELECT mobile, user_id, parent_user_id FROM contacts WHERE account_id = $1 AND id = $2
	), u AS (
		UPDATE contacts SET mobile = COALESCE(NULLIF($3, ''), mobile), user_id = COALESCE(NULLIF($4, ''), user_id),
			parent_user_id = COALESCE(NULLIF($5, ''), parent_user_id), username = COALESCE(NULLIF($6, ''), username),
			blocked = blocked OR $7, name = CASE WHEN name = '' THEN $8 ELSE name END, updated_at = now()
		WHERE account_id = $1 AND id = $2
		RETURNING ` + identityColumns + `
	), e AS (
		INSERT INTO events (account_id, type, data)
		SELECT $1, 'contact.updated', jsonb_strip_nulls(jsonb_build_object('contact_id', u.id, 'reason', $10::text,
				'mobile', u.mobile, 'user_id', u.user_id, 'parent_user_id', u.parent_user_id, 'username', u.username,
				'previous', jsonb_build_object('mobile', o.mobile, 'user_id', o.user_id, 'parent_user_id', o.parent_user_id)))
			|| CASE WHEN $9::bigint > 0 THEN jsonb_build_object('merged_contact_id', $9::bigint) ELSE '{}'::jsonb END
		FROM u, o
		WHERE $9::bigint > 0 OR (u.mobile, u.user_id, u.parent_user_id) IS DISTINCT FROM (o.mobile, o.user_id, o.parent_user_id)
	)
	SELECT *, false AS created FROM u`

func setIdentity(ctx context.Context, tx *sqlx.Tx, accountID, contactID int64, set identitySet, reason string, merged int64) (identityRow, error) {
	var r identityRow
	err := tx.GetContext(ctx, &r, setIdentitySQL, accountID, contactID, set.Mobile, set.UserID, set.ParentUserID,
		set.Username, set.Block, set.Name, merged, reason)
	return r, translate(err)
}

// mergeContacts moves everything of contact drop to contact keep, deletes drop, and then sets
// keep's identity (with drop's block and name), writing one contact.updated naming drop.
func mergeContacts(ctx context.Context, tx *sqlx.Tx, accountID, keep, drop int64, set identitySet, reason string) (identityRow, error) {
	var convs []struct {
		ID        int64 `db:"id"`
		ContactID int64 `db:"contact_id"`
	}
	if err := tx.SelectContext(ctx, &convs, `SELECT id, contact_id FROM conversations
		WHERE account_id = $1 AND contact_id IN ($2, $3) FOR UPDATE`, accountID, keep, drop); err != nil {
		return identityRow{}, translate(err)
	}
	var keepConv, dropConv int64
	for _, c := range convs {
		if c.ContactID == keep {
			keepConv = c.ID
		} else {
			dropConv = c.ID
		}
	}
	type stmt struct {
		sql  string
		args []any
	}
	var stmts []stmt
	switch {
	case dropConv != 0 && keepConv == 0:
		stmts = append(stmts,
			stmt{`UPDATE conversations SET contact_id = $2 WHERE account_id = $1 AND id = $3`, []any{accountID, keep, dropConv}},
			stmt{`UPDATE messages SET contact_id = $2 WHERE account_id = $1 AND contact_id = $3`, []any{accountID, keep, drop}})
	case dropConv != 0:
		stmts = append(stmts,
			stmt{`UPDATE messages SET contact_id = $2, conversation_id = $4 WHERE account_id = $1 AND contact_id = $3`,
				[]any{accountID, keep, drop, keepConv}},
			stmt{`UPDATE conversations k SET last_inbound_at = GREATEST(k.last_inbound_at, d.last_inbound_at),
				window_expires_at = GREATEST(k.window_expires_at, d.window_expires_at)
				FROM conversations d WHERE k.account_id = $1 AND k.id = $2 AND d.account_id = $1 AND d.id = $3`,
				[]any{accountID, keepConv, dropConv}},
			stmt{`DELETE FROM conversations WHERE account_id = $1 AND id = $2`, []any{accountID, dropConv}})
	}
	stmts = append(stmts, stmt{`UPDATE contact_aliases SET contact_id = $2 WHERE account_id = $1 AND contact_id = $3`,
		[]any{accountID, keep, drop}})
	for _, st := range stmts {
		if _, err := tx.ExecContext(ctx, st.sql, st.args...); err != nil {
			return identityRow{}, translate(err)
		}
	}
	var dropped identityRow
	if err := tx.GetContext(ctx, &dropped, `DELETE FROM contacts WHERE account_id = $1 AND id = $2
		RETURNING `+identityColumns, accountID, drop); err != nil {
		return identityRow{}, translate(err)
	}
	set.Block = set.Block || dropped.Blocked
	set.Name = dropped.Name
	// What the change does not say is taken from the dropped contact where the kept one lacks
	// it (setIdentity keeps the stored value when this is "").
	set.UserID = cmp.Or(set.UserID, dropped.UserID.String)
	set.ParentUserID = cmp.Or(set.ParentUserID, dropped.ParentUserID.String)
	set.Username = cmp.Or(set.Username, dropped.Username.String)
	return setIdentity(ctx, tx, accountID, keep, set, reason, drop)
}
