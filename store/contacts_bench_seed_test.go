package store

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/jmoiron/sqlx"
)

// benchCountContactsSQL and benchSuffixContactsSQL make the contact index of every contact at
// once, from the contacts table: what the contacts_index_inserted trigger does for the contacts
// of one statement, which benchSeed inserts with its triggers off (a bulk build of 18 million
// suffix rows without their primary key is far faster). TestBenchSeedIndexAgreesWithTriggers
// checks that they make the rows the trigger makes.
const (
	benchCountContactsSQL = `INSERT INTO contact_counts (account_id, stripe, n)
		SELECT account_id, 0, count(*) FROM contacts GROUP BY account_id`
	benchSuffixContactsSQL = `INSERT INTO contact_name_suffixes (account_id, suffix, contact_id, created_at, first_len)
		SELECT c.account_id, r.suffix, c.id, c.created_at, r.first_len FROM contacts c, contact_name_suffix_rows(c.name) AS r`
)

// sqlArray is xs as an SQL array literal.
func sqlArray(xs []string) string {
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = "'" + strings.ReplaceAll(x, "'", "''") + "'"
	}
	return "ARRAY[" + strings.Join(q, ",") + "]"
}

// benchSeed fills the database in one transaction: the contacts table's secondary indexes and
// the unique constraints nothing refers to are dropped, the rows inserted by one INSERT ...
// SELECT generate_series with foreign-key triggers off (session_replication_role = replica; the
// rows are valid by construction), and the indexes and constraints rebuilt from their own
// definitions (a bulk build is far faster than 1.2M random insertions). 25-40 s on the
// 2-core dev box.
func benchSeed(b *testing.B, db *sqlx.DB) {
	b.Helper()
	ctx := context.Background()
	tx, err := db.BeginTxx(ctx, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer tx.Rollback()
	exec := func(q string, args ...any) {
		b.Helper()
		if _, err := tx.ExecContext(ctx, q, args...); err != nil {
			b.Fatalf("%v\n%s", err, q)
		}
	}
	exec(`SET LOCAL maintenance_work_mem = '512MB'`)
	exec(`SET LOCAL synchronous_commit = off`)
	exec(`DELETE FROM events`)
	exec(`DELETE FROM contacts`) // the database holds only benchmark data
	exec(`DELETE FROM accounts WHERE email LIKE 'bench-%'`)
	exec(`SET LOCAL session_replication_role = replica`)
	var constraints []struct {
		Name string `db:"conname"`
		Def  string `db:"def"`
	}
	if err := tx.SelectContext(ctx, &constraints, `SELECT c.conname, pg_get_constraintdef(c.oid) AS def FROM pg_constraint c
		WHERE c.conrelid = 'contacts'::regclass AND c.contype = 'u'
		AND NOT EXISTS (SELECT 1 FROM pg_constraint f WHERE f.contype = 'f' AND f.conindid = c.conindid)`); err != nil {
		b.Fatal(err)
	}
	var indexes []struct {
		Name string `db:"indexname"`
		Def  string `db:"indexdef"`
	}
	if err := tx.SelectContext(ctx, &indexes, `SELECT indexname, indexdef FROM pg_indexes
		WHERE schemaname = current_schema() AND tablename = 'contacts'
		AND indexname NOT IN (SELECT conname FROM pg_constraint WHERE conrelid = 'contacts'::regclass)`); err != nil {
		b.Fatal(err)
	}
	for _, c := range constraints {
		exec(`ALTER TABLE contacts DROP CONSTRAINT ` + c.Name)
	}
	for _, d := range indexes {
		exec(`DROP INDEX ` + d.Name)
	}
	exec(`SELECT setseed(0.4242)`)
	// The one seeding statement: 11 accounts and 1,200,000 contacts.
	exec(fmt.Sprintf(`WITH a AS (
			INSERT INTO accounts (name, email, join_code)
			SELECT CASE WHEN i = 0 THEN 'Bench Big' ELSE 'Bench Small ' || i END, 'bench-' || i || $1, 'bench-seed-' || i
			FROM generate_series(0, $2::int) AS i
			RETURNING id, CASE WHEN email = 'bench-0' || $1 THEN $3::int ELSE $4::int END AS n
		), f AS (SELECT %[1]s AS first, %[2]s AS last,
			ARRAY['5511','5521','4477','4915','1415','3361','3460','3933'] AS cc)
		INSERT INTO contacts (account_id, mobile, name, created_at)
		SELECT a.id,
			f.cc[1 + (g %% 8)] || lpad(((g::bigint * 2654435761) %% 1000000000)::text, 9, '0'),
			CASE WHEN random() < 0.03 THEN ''
				ELSE f.first[1 + floor(random() * array_length(f.first, 1))::int] || ' ' ||
					f.last[1 + floor(random() * array_length(f.last, 1))::int] END,
			now() - random() * interval '730 days'
		FROM a CROSS JOIN f CROSS JOIN LATERAL generate_series(1, a.n) AS g`,
		sqlArray(benchFirstNames), sqlArray(benchLastNames)),
		benchSeedMark, benchOtherAccounts, benchBigContacts, benchOtherContacts)
	// The triggers that keep contact_counts and contact_name_suffixes are off in replica
	// mode: fill both from the rows (benchCountContactsSQL, benchSuffixContactsSQL), the
	// suffixes with their primary key built afterwards.
	exec(`DELETE FROM contact_counts`)
	exec(`TRUNCATE contact_name_suffixes`)
	exec(benchCountContactsSQL)
	var pkey string
	if err := tx.GetContext(ctx, &pkey, `SELECT pg_get_constraintdef(oid) FROM pg_constraint
		WHERE conname = 'contact_name_suffixes_pkey'`); err != nil {
		b.Fatal(err)
	}
	exec(`ALTER TABLE contact_name_suffixes DROP CONSTRAINT contact_name_suffixes_pkey`)
	exec(benchSuffixContactsSQL)
	exec(`ALTER TABLE contact_name_suffixes ADD CONSTRAINT contact_name_suffixes_pkey ` + pkey)
	for _, c := range constraints {
		exec(`ALTER TABLE contacts ADD CONSTRAINT ` + c.Name + ` ` + c.Def)
	}
	for _, d := range indexes {
		exec(d.Def)
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	for _, t := range []string{"contacts", "contact_name_suffixes", "contact_counts"} {
		if _, err := db.ExecContext(ctx, `VACUUM ANALYZE `+t); err != nil {
			b.Fatal(err)
		}
	}
}
