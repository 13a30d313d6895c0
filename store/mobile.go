package store

import (
	"context"
	"strings"

	"github.com/lib/pq"
)

// One person, several numbers: WhatsApp addresses some users under two forms of one number
// (the Mexican 521, the Brazilian mobile 9, the Argentinian 9), and the platform's wa_id may
// differ from the number a send used. The inbound path keeps the other form as an alias
// (contact_aliases); every other path that looks a person up — a send, POST /contacts,
// blocking — resolves the mobile through MobileForms and the aliases with ContactByMobile, so
// an opted-out person is never messaged under another form of their number.

// MobileForms returns the other forms under which the same WhatsApp user may be stored (or be
// addressed), besides digits itself:
//   - Mexico: 521 + 10 digits ↔ 52 + 10 digits;
//   - Brazil: 55 + area code + 8 digits ↔ 55 + area code + 9 + 8 digits (the mobile 9);
//   - Argentina: 549 + 10 digits ↔ 54 + 10 digits.
//
// It returns nil for any other number.
func MobileForms(digits string) []string {
	n := len(digits)
	switch {
	case strings.HasPrefix(digits, "521") && n == 13:
		return []string{"52" + digits[3:]}
	case strings.HasPrefix(digits, "52") && n == 12:
		return []string{"521" + digits[2:]}
	case strings.HasPrefix(digits, "549") && n == 13:
		return []string{"54" + digits[3:]}
	case strings.HasPrefix(digits, "54") && n == 12:
		return []string{"549" + digits[2:]}
	case strings.HasPrefix(digits, "55") && n == 13 && digits[4] == '9':
		return []string{digits[:4] + digits[5:]}
	case strings.HasPrefix(digits, "55") && n == 12:
		return []string{digits[:4] + "9" + digits[4:]}
	}
	return nil
}

// mobileAndForms is mobile followed by its other forms: the order in which a lookup prefers
// its matches.
func mobileAndForms(mobile string) []string {
	return append([]string{mobile}, MobileForms(mobile)...)
}

// contactMatchesSQL lists the account's contacts that are the person with one of the numbers
// $2 (a mobile first, then its other forms), as a mobile or as an alias, best match first: by
// the position of the matched number in $2, a mobile before an alias. Each number is joined to
// its probe of the (account, mobile) and (account, alias) keys: "mobile = ANY ($2)" was planned,
// on an account's contacts not analysed yet, as a walk of all of them, and as a scan of the
// mobile's trigram index otherwise.
const contactMatchesSQL = `SELECT x.id, array_position($2::text[], x.matched) AS pos, x.src FROM (
		SELECT k.id, 0 AS src, k.mobile AS matched FROM unnest($2::text[]) AS f(n) JOIN contacts k ON k.account_id = $1::bigint AND k.mobile = f.n
		UNION ALL
		SELECT a.contact_id, 1, a.alias FROM unnest($2::text[]) AS f(n) JOIN contact_aliases a ON a.account_id = $1::bigint AND a.alias = f.n
	) x`

// ContactByMobile returns the account's contact that is the person with that mobile (digits):
// under the mobile itself or any of its other forms (MobileForms), as a contact's mobile or as
// an alias; the best match when several are. Blocked is true when any contact that is this
// person is blocked. It returns ErrNotFound when none is, and fails otherwise only when the
// database does.
func (s *Store) ContactByMobile(ctx context.Context, accountID int64, mobile string) (Contact, error) {
	var c Contact
	err := s.getPrepared(ctx, &c, `WITH x AS (`+contactMatchesSQL+`)
		SELECT `+contactColumnsOf("c.")+`
		FROM contacts c WHERE c.account_id = $1::bigint AND c.id = (SELECT id FROM x ORDER BY pos, src LIMIT 1)`,
		accountID, pq.Array(mobileAndForms(mobile)))
	if err != nil {
		return Contact{}, err
	}
	if !c.Blocked {
		var blocked bool
		if err := s.getPrepared(ctx, &blocked, `WITH x AS (`+contactMatchesSQL+`)
			SELECT EXISTS (SELECT 1 FROM contacts c WHERE c.account_id = $1::bigint AND c.blocked AND c.id IN (SELECT id FROM x))`,
			accountID, pq.Array(mobileAndForms(mobile))); err != nil {
			return Contact{}, err
		}
		c.Blocked = blocked
	}
	return c, nil
}
