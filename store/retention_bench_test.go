package store_test

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"testing"
	"time"

	"gateway/store"
	"gateway/store/storetest"
)

var (
	retentionRows = flag.Int("retention.rows", 10_000_000, "rows per table in BenchmarkRetention")
	retentionRuns = flag.Int("retention.days", 3, "days BenchmarkRetention deletes, one run of the retention service each")
)

// retentionBatch is the retention service's batch (server.DefaultRetentionBatch): events take
// a tenth of it, since each cascades to its deliveries and attempts.
const retentionBatch = 5000

// retentionDays is the span the seeded rows cover, oldest first, in arrival order.
const retentionDays = 60

// BenchmarkRetention measures the retention statements at scale. For each table it fills a
// fresh database with -retention.rows rows (default 10,000,000) spread evenly over 60 days in
// arrival order, as a live table holds them, then deletes the oldest day, then the next, for
// -retention.days days (default 3), each as one run of the retention service does: the
// store's statement in the service's batches until a batch comes back short. Run (-benchtime
// 1x: the days are the rounds, and b.N is not used):
//
//	go test -run '^$' -bench Retention -benchtime 1x -timeout 2h -v ./store/ -args -retention.rows=10000000
//
// It logs each day's figures (-v) and reports, over every batch, the median and largest time
// of a batch (batch-p50-ms, batch-max-ms), the median WAL written by one (wal-kB/batch, the
// server's whole WAL: run it alone), and rows deleted per second. The tables:
//
//   - webhook_attempts: attempt-log rows of about 150 bytes (its three B-trees and BRIN);
//   - platform_webhooks: raw platform webhooks of 1 kB, about a status report's size;
//   - events: events with one delivered webhook each (an event, its delivery and its attempt,
//     deleted together by the foreign keys' cascade; rows counts the events).
//
// Seeding writes the rows directly, without the foreign keys' checks (session_replication_role
// replica: PostgreSQL must let the test's user set it), so an attempt's delivery need not
// exist; deleting never checks those keys. The seed takes minutes and gigabytes at the
// default size.
func BenchmarkRetention(b *testing.B) {
	for _, tc := range []struct {
		name  string
		seed  string
		batch int
		del   func(*store.Store, context.Context, time.Time, int) (int64, error)
	}{
		{"webhook_attempts", seedAttempts, retentionBatch, (*store.Store).DeleteWebhookAttemptsBefore},
		{"platform_webhooks", seedPlatformWebhooks, retentionBatch, (*store.Store).DeletePlatformWebhooksBefore},
		{"events", seedEvents, retentionBatch / 10, (*store.Store).DeleteEventsBefore},
	} {
		b.Run(tc.name, func(b *testing.B) {
			s := storetest.New(b)
			start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			seedRetention(b, s, tc.seed, *retentionRows, start)
			ctx := context.Background()
			var all, wal []float64
			var rows int64
			var total time.Duration
			b.ResetTimer()
			for day := range *retentionRuns {
				cutoff := start.Add(time.Duration(day+1) * 24 * time.Hour)
				var times, wals []float64
				var deleted int64
				var spent time.Duration
				for {
					var lsn string
					if err := s.DB().GetContext(ctx, &lsn, `SELECT pg_current_wal_lsn()::text`); err != nil {
						b.Fatal(err)
					}
					t0 := time.Now()
					n, err := tc.del(s, ctx, cutoff, tc.batch)
					if err != nil {
						b.Fatal(err)
					}
					took := time.Since(t0)
					var bytes int64
					if err := s.DB().GetContext(ctx, &bytes, `SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1::pg_lsn)::bigint`, lsn); err != nil {
						b.Fatal(err)
					}
					times, wals = append(times, float64(took.Microseconds())/1000), append(wals, float64(bytes)/1024)
					deleted, spent = deleted+n, spent+took
					if n < int64(tc.batch) {
						break
					}
				}
				if want := int64(*retentionRows / retentionDays); deleted < want*99/100 || deleted > want*101/100 {
					b.Fatalf("day %d: deleted %d rows, want about %d", day+1, deleted, want)
				}
				b.Logf("day %d: %d rows in %d batches, batch p50 %.1f ms, max %.1f ms, WAL p50 %.0f kB, %.0f rows/s",
					day+1, deleted, len(times), median(times), slices.Max(times), median(wals), float64(deleted)/spent.Seconds())
				all, wal = append(all, times...), append(wal, wals...)
				rows, total = rows+deleted, total+spent
			}
			b.StopTimer()
			b.ReportMetric(median(all), "batch-p50-ms")
			b.ReportMetric(slices.Max(all), "batch-max-ms")
			b.ReportMetric(median(wal), "wal-kB/batch")
			b.ReportMetric(float64(rows)/total.Seconds(), "rows/s")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// median is the middle value of xs (the upper one of an even count); xs is sorted in place.
func median(xs []float64) float64 {
	slices.Sort(xs)
	return xs[len(xs)/2]
}

// seedRetention runs seed in steps of a million rows: $1 the first row's number, $2 the last,
// $3 the time of row 0 and $4 the seconds between two rows. It then vacuums and analyzes the
// database, as autovacuum would have.
func seedRetention(b *testing.B, s *store.Store, seed string, rows int, start time.Time) {
	b.Helper()
	ctx := context.Background()
	conn, err := s.DB().Connx(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `SET session_replication_role = replica`); err != nil {
		b.Fatalf("seeding needs session_replication_role (a superuser): %v", err)
	}
	if _, err := conn.ExecContext(ctx, `INSERT INTO accounts (id, name, email, join_code) VALUES (1, 'Retention', 'r@example.com', 'retention')`); err != nil {
		b.Fatal(err)
	}
	step := float64(retentionDays*24*3600) / float64(rows)
	t0 := time.Now()
	for from := 0; from < rows; from += 1_000_000 {
		if _, err := conn.ExecContext(ctx, seed, from, min(from+1_000_000, rows)-1, start, step); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := conn.ExecContext(ctx, `VACUUM ANALYZE`); err != nil {
		b.Fatal(err)
	}
	b.Logf("seeded %d rows in %s", rows, time.Since(t0).Round(time.Second))
}

// uuidV7 is a SQL expression for a version 7 UUID of the time at (a timestamptz expression) and
// row g, salted so that two kinds of row get different ids: time-ordered, as the ids the
// database makes (uuid_v7()).
func uuidV7(at, salt string) string {
	return fmt.Sprintf(`(lpad(to_hex((extract(epoch FROM %[1]s) * 1000)::bigint), 12, '0') || '7' ||
		substr(md5('%[2]s' || g), 1, 3) || '8' || substr(md5('%[2]s' || g), 4, 15))::uuid`, at, salt)
}

var seedAttempts = `INSERT INTO webhook_attempts (account_id, delivery_id, attempt, attempted_at, status_code, latency_ms, error, response_body)
	SELECT 1, ` + uuidV7("at", "d") + `, 1, at, 200, 40, '', '{"ok":true}'
	FROM (SELECT g, $3::timestamptz + g * $4::float8 * interval '1 second' AS at FROM generate_series($1::int, $2::int) g) g`

var seedPlatformWebhooks = `INSERT INTO platform_webhooks (received_at, body)
	SELECT $3::timestamptz + g * $4::float8 * interval '1 second', decode(repeat(md5(g::text), 32), 'hex')
	FROM generate_series($1::int, $2::int) g`

// seedEvents writes each event with one webhook delivery that succeeded a second later and its
// attempt.
var seedEvents = `WITH t AS (
		SELECT g, $3::timestamptz + g * $4::float8 * interval '1 second' AS at FROM generate_series($1::int, $2::int) g
	), g AS (
		SELECT g, at, ` + uuidV7("at", "e") + ` AS event_id, ` + uuidV7("at", "d") + ` AS delivery_id FROM t
	), e AS (
		INSERT INTO events (id, account_id, type, data, created_at)
		SELECT event_id, 1, 'message.status', jsonb_build_object('message_id', g, 'chat_message_id', 'wamid.' || md5(g::text),
			'conversation_id', g / 3, 'status', 'delivered', 'timestamp', at), at
		FROM g
	), d AS (
		INSERT INTO webhook_deliveries (id, account_id, event_id, endpoint_id, status, attempts, next_attempt_at, last_status_code, created_at, completed_at)
		SELECT delivery_id, 1, event_id, 1, 'succeeded', 1, at, 200, at, at + interval '1 second'
		FROM g
	)
	INSERT INTO webhook_attempts (account_id, delivery_id, attempt, attempted_at, status_code, latency_ms, error, response_body)
	SELECT 1, delivery_id, 1, at + interval '1 second', 200, 40, '', ''
	FROM g`
