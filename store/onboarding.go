package store

import (
	"context"
	"time"
)

// ConnectionDetails is a connection with what the platform reported about the number when it
// was connected through onboarding (server/onboarding). For a connection saved by ConnectNumber
// (the operator CLI) the details are empty.
type ConnectionDetails struct {
	Connection
	QualityRating  string `db:"quality_rating" json:"quality_rating"`   // GREEN, YELLOW, RED, UNKNOWN or ""
	MessagingLimit string `db:"messaging_limit" json:"messaging_limit"` // e.g. TIER_1K, or ""
}

// detailsColumns reads the details only when they were written for the connected number, so
// a later ConnectNumber of another number does not show the previous number's details.
const detailsColumns = `CASE WHEN details_for = phone_number_id THEN quality_rating ELSE '' END AS quality_rating,
	CASE WHEN details_for = phone_number_id THEN messaging_limit ELSE '' END AS messaging_limit`

type connectionDetailsRow struct {
	connectionRow
	QualityRating  string `db:"quality_rating"`
	MessagingLimit string `db:"messaging_limit"`
}

func (s *Store) unsealDetails(row connectionDetailsRow) (ConnectionDetails, error) {
	c, err := s.unseal(row.connectionRow)
	if err != nil {
		return ConnectionDetails{}, err
	}
	return ConnectionDetails{Connection: c, QualityRating: row.QualityRating, MessagingLimit: row.MessagingLimit}, nil
}

// ConnectNumberDetails connects (or replaces) the account's number like ConnectNumber, with the
// platform's details, in one statement. It returns ErrNotFound when the account does not exist
// and ErrConflict when the phone number id is connected to another account.
func (s *Store) ConnectNumberDetails(ctx context.Context, d ConnectionDetails) (ConnectionDetails, error) {
	sealed, err := s.seal(d.AccessToken, secretRow{table: "connections", account: d.AccountID, id: d.AccountID})
	if err != nil {
		return ConnectionDetails{}, err
	}
	var row connectionDetailsRow
	err = s.db.GetContext(ctx, &row, `INSERT INTO connections (account_id, waba_id, phone_number_id, phone_number,
			display_name, access_token, quality_rating, messaging_limit, details_for)
		SELECT id, $2, $3, $4, $5, $6, $7, $8, $3 FROM accounts WHERE id = $1
		ON CONFLICT (account_id) DO UPDATE SET waba_id = EXCLUDED.waba_id, phone_number_id = EXCLUDED.phone_number_id,
			phone_number = EXCLUDED.phone_number, display_name = EXCLUDED.display_name,
			access_token = EXCLUDED.access_token, quality_rating = EXCLUDED.quality_rating,
			messaging_limit = EXCLUDED.messaging_limit, details_for = EXCLUDED.details_for, connected_at = now()
		RETURNING `+connectionColumns+`, `+detailsColumns,
		d.AccountID, d.WabaID, d.PhoneNumberID, d.PhoneNumber, d.DisplayName, sealed, d.QualityRating, d.MessagingLimit)
	s.targets.forget(d.AccountID)
	if err != nil {
		return ConnectionDetails{}, translate(err)
	}
	return s.unsealDetails(row)
}

// ConnectionDetailsByAccount returns the account's number with its details; ErrNotFound when
// none is connected.
func (s *Store) ConnectionDetailsByAccount(ctx context.Context, accountID int64) (ConnectionDetails, error) {
	var row connectionDetailsRow
	err := s.db.GetContext(ctx, &row, `SELECT `+connectionColumns+`, `+detailsColumns+` FROM connections WHERE account_id = $1`, accountID)
	if err != nil {
		return ConnectionDetails{}, translate(err)
	}
	return s.unsealDetails(row)
}

// NumberPIN returns the two-step verification pin stored for the number, storing newPIN (sealed)
// first when there is none, so every registration of a number uses the same pin. It fails only
// when the database (or decryption) does.
func (s *Store) NumberPIN(ctx context.Context, phoneNumberID, newPIN string) (string, error) {
	sealed, err := s.seal(newPIN, pinRow(phoneNumberID))
	if err != nil {
		return "", err
	}
	var stored []byte
	err = s.db.GetContext(ctx, &stored, `INSERT INTO number_pins (phone_number_id, pin, created_at) VALUES ($1, $2, $3)
		ON CONFLICT (phone_number_id) DO UPDATE SET pin = number_pins.pin
		RETURNING pin`, phoneNumberID, sealed, time.Now().UTC())
	if err != nil {
		return "", translate(err)
	}
	return s.open(stored, pinRow(phoneNumberID))
}

// UpdateConnectionDetails sets the platform's details of the account's connected number when it
// still is phoneNumberID. It returns ErrNotFound when the account has another number or none.
func (s *Store) UpdateConnectionDetails(ctx context.Context, accountID int64, phoneNumberID, qualityRating, messagingLimit string) error {
	res, err := s.db.ExecContext(ctx, `UPDATE connections SET quality_rating = $3, messaging_limit = $4, details_for = phone_number_id
		WHERE account_id = $1 AND phone_number_id = $2`, accountID, phoneNumberID, qualityRating, messagingLimit)
	if err != nil {
		return translate(err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrNotFound
	}
	return nil
}

// Connections returns every connected number (tokens decrypted), oldest connection first, at
// most limit. `gateway dev` uses it to give a restarted simulator the numbers connected in
// earlier runs. It fails when the database or decryption does.
func (s *Store) Connections(ctx context.Context, limit int) ([]Connection, error) {
	var rows []connectionRow
	if err := s.db.SelectContext(ctx, &rows, `SELECT `+connectionColumns+` FROM connections ORDER BY connected_at, account_id LIMIT $1`, limit); err != nil {
		return nil, translate(err)
	}
	out := make([]Connection, 0, len(rows))
	for _, r := range rows {
		c, err := s.unseal(r)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}
