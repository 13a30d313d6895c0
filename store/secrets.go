package store

import (
	"context"
	"crypto/rand"
	"fmt"
	"slices"
	"strconv"
)

// Secrets at rest (platform access tokens, webhook signing secrets) are sealed with AES-256-GCM
// under GATEWAY_SECRET_KEY, bound to their row: the associated data names the table, the
// account and the row, so a ciphertext copied into another row (or another tenant's row) does
// not open.
//
// Format: version byte 1 || 12-byte nonce || ciphertext+tag, associated data
// "gateway.secret.v1/<table>/<account>/<id>". Rows sealed before binding existed are
// nonce || ciphertext without associated data; they stay readable (decision: a version byte,
// not a migration, since only Go holds the key) and `gateway admin secrets rotate`
// (ResealSecrets) upgrades them. A legacy ciphertext starts with a random nonce byte, so one in
// 256 begins with 1 too: opening tries the bound format first and falls back to the legacy
// one, and GCM's tag makes a wrong guess fail rather than yield garbage.
//
// Rotation: set GATEWAY_SECRET_KEY to the new key and GATEWAY_SECRET_KEY_PREVIOUS to the old
// one, run `gateway admin secrets rotate`, then drop the previous key.

const sealV1 = 1

// secretRow names the row a secret belongs to. Connections have no id of their own (one per
// account): their id is the account id.
type secretRow struct {
	table   string
	account int64
	id      int64
	// key replaces account and id for rows keyed by text (number_pins by phone number id).
	key string
}

// pinRow is the row of a number's two-step pin: number_pins is keyed by phone number id.
func pinRow(phoneNumberID string) secretRow {
	return secretRow{table: "number_pins", key: phoneNumberID}
}

func (r secretRow) aad() []byte {
	if r.key != "" {
		return []byte("gateway.secret.v1/" + r.table + "/" + r.key)
	}
	return []byte("gateway.secret.v1/" + r.table + "/" + strconv.FormatInt(r.account, 10) + "/" + strconv.FormatInt(r.id, 10))
}

func (r secretRow) String() string {
	if r.key != "" {
		return r.table + " " + r.key
	}
	if r.table == "connections" {
		return "connections account " + strconv.FormatInt(r.account, 10)
	}
	return r.table + " " + strconv.FormatInt(r.id, 10) + " (account " + strconv.FormatInt(r.account, 10) + ")"
}

// seal encrypts a secret for its row with the current key.
func (s *Store) seal(plain string, row secretRow) ([]byte, error) {
	n := s.aead.NonceSize()
	out := make([]byte, 1+n, 1+n+len(plain)+s.aead.Overhead())
	out[0] = sealV1
	if _, err := rand.Read(out[1:]); err != nil {
		return nil, err
	}
	return s.aead.Seal(out, out[1:], []byte(plain), row.aad()), nil
}

// open decrypts what seal produced for the row (or a legacy, unbound ciphertext), trying the
// current key and then the previous ones. current reports that it is in the bound format
// under the current key (nothing for ResealSecrets to do). It fails when no key opens it.
func (s *Store) openSecret(sealed []byte, row secretRow) (plain string, current bool, err error) {
	for i, k := range s.readKeys {
		n := k.NonceSize()
		if len(sealed) >= 1+n && sealed[0] == sealV1 {
			if p, err := k.Open(nil, sealed[1:1+n], sealed[1+n:], row.aad()); err == nil {
				return string(p), i == 0, nil
			}
		}
	}
	for _, k := range s.readKeys {
		n := k.NonceSize()
		if len(sealed) >= n {
			if p, err := k.Open(nil, sealed[:n], sealed[n:], nil); err == nil {
				return string(p), false, nil
			}
		}
	}
	return "", false, fmt.Errorf("decrypt secret of %s: no key opens it (wrong GATEWAY_SECRET_KEY, or the secret was copied from another row)", row)
}

func (s *Store) open(sealed []byte, row secretRow) (string, error) {
	p, _, err := s.openSecret(sealed, row)
	return p, err
}

// ResealResult is what ResealSecrets did.
type ResealResult struct {
	Connections      int `json:"connections"`
	WebhookEndpoints int `json:"webhook_endpoints"`
	NumberPINs       int `json:"number_pins"`
	// Unreadable names the rows no key opened; they are left as they are.
	Unreadable []string `json:"unreadable"`
	// Accounts are the accounts whose connection or webhook endpoints were re-sealed, once
	// each, ascending.
	Accounts []int64 `json:"-"`
}

// ResealSecrets re-seals every secret at rest with the current key, bound to its row: after it
// the previous key is no longer needed. Each row is swapped only if it still holds what was
// read (a concurrent change wins). Rows no key opens are listed, not fatal. It fails only when
// the database does.
func (s *Store) ResealSecrets(ctx context.Context) (ResealResult, error) {
	res := ResealResult{Unreadable: []string{}}
	type sealedRow struct {
		Account int64  `db:"account"`
		ID      int64  `db:"id"`
		Sealed  []byte `db:"sealed"`
	}
	tables := []struct {
		table, query, update string
		count                *int
	}{
		{"connections", `SELECT account_id AS account, account_id AS id, access_token AS sealed FROM connections ORDER BY account_id`,
			`UPDATE connections SET access_token = $3 WHERE account_id = $1 AND account_id = $2 AND access_token = $4`, &res.Connections},
		{"webhook_endpoints", `SELECT account_id AS account, id, secret AS sealed FROM webhook_endpoints ORDER BY id`,
			`UPDATE webhook_endpoints SET secret = $3 WHERE account_id = $1 AND id = $2 AND secret = $4`, &res.WebhookEndpoints},
	}
	for _, t := range tables {
		var rows []sealedRow
		if err := s.db.SelectContext(ctx, &rows, t.query); err != nil {
			return res, translate(err)
		}
		for _, r := range rows {
			row := secretRow{table: t.table, account: r.Account, id: r.ID}
			plain, _, err := s.openSecret(r.Sealed, row)
			if err != nil {
				res.Unreadable = append(res.Unreadable, row.String())
				continue
			}
			sealed, err := s.seal(plain, row)
			if err != nil {
				return res, err
			}
			if _, err := s.db.ExecContext(ctx, t.update, r.Account, r.ID, sealed, r.Sealed); err != nil {
				return res, translate(err)
			}
			*t.count++
			if i, found := slices.BinarySearch(res.Accounts, r.Account); !found {
				res.Accounts = slices.Insert(res.Accounts, i, r.Account)
			}
		}
	}
	return res, s.resealPINs(ctx, &res)
}

// resealPINs is ResealSecrets for number_pins, whose rows are keyed by phone number id.
func (s *Store) resealPINs(ctx context.Context, res *ResealResult) error {
	var rows []struct {
		PhoneNumberID string `db:"phone_number_id"`
		Sealed        []byte `db:"pin"`
	}
	if err := s.db.SelectContext(ctx, &rows, `SELECT phone_number_id, pin FROM number_pins ORDER BY phone_number_id`); err != nil {
		return translate(err)
	}
	for _, r := range rows {
		row := pinRow(r.PhoneNumberID)
		plain, _, err := s.openSecret(r.Sealed, row)
		if err != nil {
			res.Unreadable = append(res.Unreadable, row.String())
			continue
		}
		sealed, err := s.seal(plain, row)
		if err != nil {
			return err
		}
		if _, err := s.db.ExecContext(ctx, `UPDATE number_pins SET pin = $2 WHERE phone_number_id = $1 AND pin = $3`,
			r.PhoneNumberID, sealed, r.Sealed); err != nil {
			return translate(err)
		}
		res.NumberPINs++
	}
	return nil
}
