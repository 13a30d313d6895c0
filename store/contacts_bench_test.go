package store

// BenchmarkContactSearch measures ListContacts with a search term on a large account.
//
// Data: account "Bench Big" with 1,000,000 contacts and ten other accounts with 20,000 each
// (names first + last from fixed lists, ~3 % without a name; mobiles of 13 digits that look
// random and are unique per account; created_at spread over two years). It is seeded by one
// INSERT ... SELECT generate_series statement into a persistent database,
// gw_bench_contacts_<hash of the migrations>, created from the migrations on the first run and
// reused afterwards (older gw_bench_contacts_* databases are dropped when the migrations
// change). Drop it by hand to reseed:
//
//	psql -h 127.0.0.1 -U postgres -c 'DROP DATABASE gw_bench_contacts_<hash>'
//
// Run:
//
//	go test -run '^$' -bench ContactSearch -benchtime 200x ./store/
//
// Each sub-benchmark reports the median and 99th percentile of one ListContacts call (the page
// of 50 and the exact total, one statement) as p50_ms and p99_ms, and checks the totals of its
// first terms against a plain count. The shapes of issue 13 come first: a full name, a common
// surname (~10,000-14,000 matches), seven digits of a number, a whole number, no search; then
// the older mixes of fragments. The plans of the shapes, and of the broadest fragment
// ("mari", about 57,000 matches), are printed with -v.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"net/url"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"gateway/migrations"
)

const (
	benchBigContacts   = 1_000_000
	benchOtherAccounts = 10
	benchOtherContacts = 20_000
	benchSeedMark      = "@seed-v1.bench" // in the seeded accounts' emails; change it to reseed
)

var benchFirstNames = []string{
	"Ana", "Maria", "João", "José", "Pedro", "Lucas", "Mariana", "Juliana", "Gabriel", "Rafael",
	"Fernanda", "Camila", "Bruno", "Carlos", "Paulo", "Luiza", "Beatriz", "Thiago", "Felipe", "Larissa",
	"Oliver", "Amelia", "Harry", "Isla", "George", "Emily", "Jack", "Sophie", "Noah", "Grace",
	"James", "Olivia", "William", "Emma", "Liam", "Ava", "Mason", "Mia", "Ethan", "Chloe",
	"Lukas", "Leonie", "Jonas", "Hannah", "Finn", "Lena", "Elias", "Marie", "Sofía", "Lucía",
	"Hugo", "Martín", "Alejandro", "Paula", "Daniel", "Valentina", "Yuki", "Haruto", "Aarav", "Priya",
}

var benchLastNames = []string{
	"Silva", "Santos", "Oliveira", "Souza", "Rodrigues", "Ferreira", "Alves", "Pereira", "Lima", "Gomes",
	"Costa", "Ribeiro", "Martins", "Carvalho", "Almeida", "Lopes", "Soares", "Fernandes", "Vieira", "Barbosa",
	"Rocha", "Dias", "Nascimento", "Andrade", "Moreira", "Nunes", "Marques", "Machado", "Mendes", "Freitas",
	"Smith", "Jones", "Taylor", "Brown", "Williams", "Wilson", "Johnson", "Davies", "Robinson", "Wright",
	"Thompson", "Evans", "Walker", "White", "Roberts", "Green", "Hall", "Wood", "Jackson", "Clarke",
	"Müller", "Schmidt", "Schneider", "Fischer", "Weber", "Meyer", "Wagner", "Becker", "Schulz", "Hoffmann",
	"García", "Fernández", "González", "López", "Martínez", "Sánchez", "Pérez", "Gómez", "Martín", "Jiménez",
	"Rossi", "Russo", "Ferrari", "Esposito", "Bianchi", "Romano", "Colombo", "Ricci", "Marino", "Greco",
	"Dubois", "Moreau", "Laurent", "Lefebvre", "Leroy", "Tanaka", "Suzuki", "Sato", "Patel", "Sharma",
	"Kowalski", "Nowak", "Novák", "Horvat", "Jensen", "Nielsen", "Hansen", "Larsen", "Andersen", "Berg",
}

// Search terms of 3+ characters: name fragments and 4-6 digit fragments of numbers.
var (
	benchNameTerms  = []string{"silv", "santos", "oliveira", "souz", "rodri", "smith", "schmidt", "gonz", "ferr", "mari", "yuki", "patel", "müll", "costa", "ana s"}
	benchDigitTerms = []string{"98765", "4321", "123456", "5567", "80808", "314159", "2718", "99887", "606060", "1357"}
)

func benchAdminDSN() string {
	for _, k := range []string{"TEST_DATABASE_URL", "DATABASE_URL"} {
		if v := os.Getenv(k); v != "" {
			return v
		}
	}
	return "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
}

func benchDSN(dsn, name string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		panic(err)
	}
	u.Path = "/" + name
	return u.String()
}

func benchDBName() string {
	h := sha256.New()
	var names []string
	fs.WalkDir(migrations.FS, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			names = append(names, p)
		}
		return nil
	})
	sort.Strings(names)
	for _, n := range names {
		b, _ := fs.ReadFile(migrations.FS, n)
		h.Write([]byte(n))
		h.Write(b)
	}
	return "gw_bench_contacts_" + hex.EncodeToString(h.Sum(nil))[:12]
}

// benchStore returns a Store over the persistent, seeded benchmark database, creating and
// seeding it when needed, and the big account's id and one small account's id.
func benchStore(b *testing.B) (s *Store, big, small int64) {
	b.Helper()
	ctx := context.Background()
	adminDSN := benchAdminDSN()
	admin, err := sqlx.Open("postgres", adminDSN)
	if err != nil {
		b.Fatal(err)
	}
	defer admin.Close()
	conn, err := admin.Connx(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	// One benchmark process at a time creates and seeds.
	if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock(8675310)`); err != nil {
		b.Fatal(err)
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock(8675310)`)

	name := benchDBName()
	var exists bool
	if err := conn.GetContext(ctx, &exists, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, name); err != nil {
		b.Fatal(err)
	}
	if !exists {
		var stale []string
		conn.SelectContext(ctx, &stale, `SELECT datname FROM pg_database WHERE datname LIKE 'gw\_bench\_contacts\_%'`)
		for _, d := range stale {
			conn.ExecContext(ctx, `DROP DATABASE IF EXISTS `+d+` WITH (FORCE)`)
		}
		if _, err := conn.ExecContext(ctx, `CREATE DATABASE `+name); err != nil {
			b.Fatal(err)
		}
	}
	dsn := benchDSN(adminDSN, name)
	m, err := NewMigrator(dsn, migrations.FS)
	if err != nil {
		b.Fatal(err)
	}
	if err := m.Up(); err != nil {
		m.Close()
		b.Fatal(err)
	}
	m.Close()

	db, err := Open(ctx, dsn, 16)
	if err != nil {
		b.Fatal(err)
	}
	s, err = New(db, []byte("0123456789abcdef0123456789abcdef"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close(); db.Close() })

	var seeded int
	if err := db.GetContext(ctx, &seeded, `SELECT count(*) FROM accounts WHERE email LIKE '%' || $1`, benchSeedMark); err != nil {
		b.Fatal(err)
	}
	if seeded != 1+benchOtherAccounts {
		start := time.Now()
		benchSeed(b, db)
		b.Logf("seeded %s in %s", name, time.Since(start).Round(time.Millisecond))
	} else {
		b.Logf("reusing seeded database %s", name)
	}
	if err := db.GetContext(ctx, &big, `SELECT id FROM accounts WHERE email = 'bench-0'||$1`, benchSeedMark); err != nil {
		b.Fatal(err)
	}
	if err := db.GetContext(ctx, &small, `SELECT id FROM accounts WHERE email = 'bench-1'||$1`, benchSeedMark); err != nil {
		b.Fatal(err)
	}
	return s, big, small
}

// explainListing logs the plan of the statement ListContacts runs for the search.
func explainListing(b *testing.B, s *Store, accountID int64, search string) {
	b.Helper()
	q := contactListQuery(accountID, search, 50, 0)
	var lines []string
	if err := s.db.Select(&lines, `EXPLAIN (ANALYZE, BUFFERS) `+q.sql, q.args...); err != nil {
		b.Fatal(err)
	}
	b.Logf("EXPLAIN ANALYZE, search %q:\n%s\n%s", search, q.sql, strings.Join(lines, "\n"))
}

func BenchmarkContactSearch(b *testing.B) {
	if testing.Short() {
		b.Skip("seeds 1.2M rows")
	}
	s, big, small := benchStore(b)
	ctx := context.Background()

	run := func(name string, accountID int64, terms []string) {
		b.Run(name, func(b *testing.B) {
			// Warm the cache once per term, as a live server would be, and check the total of
			// the first few terms against a plain count (the listing's total must be exact).
			for i, term := range terms {
				p, err := s.ListContacts(ctx, accountID, term, 50, 0)
				if err != nil {
					b.Fatal(err)
				}
				if i >= 3 {
					continue
				}
				if want := plainCount(b, s, accountID, term); p.Total != want {
					b.Fatalf("search %q: total %d, a plain count says %d", term, p.Total, want)
				}
			}
			lat := make([]time.Duration, 0, b.N)
			matched := 0
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				start := time.Now()
				p, err := s.ListContacts(ctx, accountID, terms[i%len(terms)], 50, 0)
				lat = append(lat, time.Since(start))
				if err != nil {
					b.Fatal(err)
				}
				matched += p.Total
			}
			b.StopTimer()
			sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
			ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
			b.ReportMetric(ms(lat[len(lat)/2]), "p50_ms")
			b.ReportMetric(ms(lat[(len(lat)-1)*99/100]), "p99_ms")
			b.ReportMetric(float64(matched)/float64(b.N), "matches/op")
		})
	}
	// The shapes of issue 13: a full name, a common surname, 7 digits of a number, a whole
	// number (of contacts drawn from the big account), and no search.
	var sample []struct {
		Name   string `db:"name"`
		Mobile string `db:"mobile"`
	}
	if err := s.db.SelectContext(ctx, &sample, `SELECT name, mobile FROM contacts TABLESAMPLE SYSTEM (1) REPEATABLE (7)
		WHERE account_id = $1 AND name <> '' LIMIT 100`, big); err != nil {
		b.Fatal(err)
	}
	var fullNames, fragments, numbers []string
	for _, c := range sample {
		fullNames = append(fullNames, strings.ToLower(c.Name))
		fragments = append(fragments, c.Mobile[len(c.Mobile)-7:])
		numbers = append(numbers, c.Mobile)
	}
	surnames := []string{"silva", "santos", "smith", "schmidt", "patel", "costa"}
	for _, t := range []string{fullNames[0], surnames[0], fragments[0], numbers[0], "", "mari"} {
		explainListing(b, s, big, t)
	}
	run("1M/full-name", big, fullNames)
	run("1M/surname", big, surnames)
	run("1M/7-digits", big, fragments)
	run("1M/number", big, numbers)
	run("1M/no-search", big, []string{""})
	run("1M/fragments", big, benchNameTerms)
	run("1M/digit-runs", big, benchDigitTerms)
	run("20k/names", small, benchNameTerms)
	run("20k/digits", small, benchDigitTerms)
}

// plainCount counts the account's contacts the search matches with the plain predicate the
// listing's indexes stand for (the name contains the term, or the mobile its digits).
func plainCount(b *testing.B, s *Store, accountID int64, term string) int {
	b.Helper()
	term = strings.TrimSpace(term)
	var n int
	q, args := `SELECT count(*) FROM contacts WHERE account_id = $1`, []any{accountID}
	if term != "" {
		q += ` AND (strpos(lower(name), lower($2)) > 0 OR ($3 <> '' AND strpos(mobile, $3) > 0))`
		digits := onlyDigits(term)
		if !IsPhoneFragment(term) {
			digits = ""
		}
		args = append(args, term, digits)
	}
	if err := s.db.Get(&n, q, args...); err != nil {
		b.Fatal(err)
	}
	return n
}
