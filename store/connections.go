package store

import (
	"context"
	"time"
)

// Connection is an account's number on the messaging platform. AccessToken is decrypted.
type Connection struct {
	AccountID     int64     `db:"account_id" json:"account_id"`
	WabaID        string    `db:"waba_id" json:"waba_id"`
	PhoneNumberID string    `db:"phone_number_id" json:"phone_number_id"`
	PhoneNumber   string    `db:"phone_number" json:"phone_number"`
	DisplayName   string    `db:"display_name" json:"display_name"`
	AccessToken   string    `db:"-" json:"-"`
	ConnectedAt   time.Time `db:"connected_at" json:"connected_at"`
}

type connectionRow struct {
	Connection
	Sealed []byte `db:"access_token"`
}

const connectionColumns = `account_id, waba_id, phone_number_id, phone_number, display_name, access_token, connected_at`

// ConnectNumber connects (or replaces) the account's number, encrypting the access token.
// It returns ErrNotFound when the account does not exist and ErrConflict when the phone number
// id is connected to another account.
func (s *Store) ConnectNumber(ctx context.Context, c Connection) (Connection, error) {
	sealed, err := s.seal(c.AccessToken, secretRow{table: "connections", account: c.AccountID, id: c.AccountID})
	if err != nil {
		return Connection{}, err
	}
	var row connectionRow
	err = s.db.GetContext(ctx, &row, `INSERT INTO connections (account_id, waba_id, phone_number_id, phone_number, display_name, access_token)
		SELECT id, $2, $3, $4, $5, $6 FROM accounts WHERE id = $1
		ON CONFLICT (account_id) DO UPDATE SET waba_id = EXCLUDED.waba_id, phone_number_id = EXCLUDED.phone_number_id,
			phone_number = EXCLUDED.phone_number, display_name = EXCLUDED.display_name,
			access_token = EXCLUDED.access_token, connected_at = now()
		RETURNING `+connectionColumns, c.AccountID, c.WabaID, c.PhoneNumberID, c.PhoneNumber, c.DisplayName, sealed)
	s.targets.forget(c.AccountID)
	if err != nil {
		return Connection{}, translate(err)
	}
	return s.unseal(row)
}

// DisconnectNumber removes the account's number; ErrNotFound when none is connected.
func (s *Store) DisconnectNumber(ctx context.Context, accountID int64) error {
	res, err := s.db.ExecContext(ctx, `DELETE FROM connections WHERE account_id = $1`, accountID)
	s.targets.forget(accountID)
	if err != nil {
		return translate(err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrNotFound
	}
	return nil
}

// ConnectionByAccount returns the account's number; ErrNotFound when none is connected.
func (s *Store) ConnectionByAccount(ctx context.Context, accountID int64) (Connection, error) {
	var row connectionRow
	if err := s.getPrepared(ctx, &row, `SELECT `+connectionColumns+` FROM connections WHERE account_id = $1`, accountID); err != nil {
		return Connection{}, err
	}
	return s.unseal(row)
}

// ConnectionByPhoneNumberID finds the tenant a platform webhook is for; ErrNotFound when no
// account has that number connected.
func (s *Store) ConnectionByPhoneNumberID(ctx context.Context, phoneNumberID string) (Connection, error) {
	var row connectionRow
	if err := s.getPrepared(ctx, &row, `SELECT `+connectionColumns+` FROM connections WHERE phone_number_id = $1`, phoneNumberID); err != nil {
		return Connection{}, err
	}
	return s.unseal(row)
}

func (s *Store) unseal(row connectionRow) (Connection, error) {
	tok, err := s.open(row.Sealed, secretRow{table: "connections", account: row.AccountID, id: row.AccountID})
	if err != nil {
		return Connection{}, err
	}
	c := row.Connection
	c.AccessToken = tok
	return c, nil
}

// AccountIDsByWabaID returns the accounts whose connected number belongs to the WhatsApp
// Business Account (the entry id of a template webhook), oldest connection first; an empty list
// when none does. It fails only when the database does.
func (s *Store) AccountIDsByWabaID(ctx context.Context, wabaID string) ([]int64, error) {
	ids := []int64{}
	err := s.db.SelectContext(ctx, &ids, `SELECT account_id FROM connections WHERE waba_id = $1 ORDER BY connected_at, account_id`, wabaID)
	return ids, translate(err)
}
