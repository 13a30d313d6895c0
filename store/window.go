package store

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/lib/pq"
)

// The customer service window: a business may answer a person freely until
// conversations.window_expires_at, which RecordInbound sets to the later of its stored value
// and the message's time plus its window (24 hours, or 72 hours after a message from a
// click-to-WhatsApp ad). A later ordinary message never shortens an ad's 72 hours.

// ServiceWindow is a contact's service window.
type ServiceWindow struct {
	ContactID int64
	// ExpiresAt is when the window closes (closed), nil when the person never wrote.
	ExpiresAt *time.Time
}

// OpenAt reports whether the window is open at now.
func (w ServiceWindow) OpenAt(now time.Time) bool {
	return w.ExpiresAt != nil && now.Before(*w.ExpiresAt)
}

// ServiceWindowOfContact returns the service window of the account's contact (ExpiresAt nil
// when it has none). It fails only when the database does.
func (s *Store) ServiceWindowOfContact(ctx context.Context, accountID, contactID int64) (ServiceWindow, error) {
	w := ServiceWindow{ContactID: contactID}
	var at sql.NullTime
	err := s.getPrepared(ctx, &at, `SELECT window_expires_at FROM conversations WHERE account_id = $1 AND contact_id = $2`,
		accountID, contactID)
	switch {
	case errors.Is(err, ErrNotFound):
	case err != nil:
		return ServiceWindow{}, err
	case at.Valid:
		t := at.Time
		w.ExpiresAt = &t
	}
	return w, nil
}

// FillServiceWindows sets the WindowExpiresAt of each of the account's contacts in cs (a page
// of a listing), in one statement; a contact whose person never wrote keeps nil. It fails only
// when the database does.
func (s *Store) FillServiceWindows(ctx context.Context, accountID int64, cs []Contact) error {
	if len(cs) == 0 {
		return nil
	}
	ids := make([]int64, len(cs))
	for i, c := range cs {
		ids[i] = c.ID
	}
	var rows []struct {
		ContactID int64     `db:"contact_id"`
		ExpiresAt time.Time `db:"window_expires_at"`
	}
	// The listing's page may come from the replica; its windows may too.
	err := s.readMayLag(ctx, false, &rows, `SELECT contact_id, window_expires_at FROM conversations
		WHERE account_id = $1 AND contact_id = ANY($2) AND window_expires_at IS NOT NULL`, accountID, pq.Array(ids))
	if err != nil {
		return err
	}
	at := make(map[int64]time.Time, len(rows))
	for _, r := range rows {
		at[r.ContactID] = r.ExpiresAt
	}
	for i := range cs {
		if t, ok := at[cs[i].ID]; ok {
			cs[i].WindowExpiresAt = &t
		}
	}
	return nil
}
