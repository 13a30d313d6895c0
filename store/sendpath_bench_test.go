package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"gateway/store"
	"gateway/store/storetest"
)

// BenchmarkSendPathWAL measures the WAL each statement of a message's life writes: BeginSend
// (a new contact, as the load tool's sends are), RecordSent, the delivered and read reports
// (with the raw body, as the platform webhook stores them) and a duplicate report, with one
// webhook endpoint on the account (so each event fans out to a delivery) or none. WAL is the
// read back with pg_walinspect (PostgreSQL 15+, superuser) and counted only for the
// transactions that touched this database's relations, so other databases' WAL on a shared
// server does not count; the figures are bytes per operation (full-page images included,
// fpiB/op of them) and WAL records per operation.
//
//	go test -run '^$' -bench SendPathWAL -benchtime 2000x ./store/
func BenchmarkSendPathWAL(b *testing.B) {
	for _, endpoints := range []int{0, 1} {
		b.Run(fmt.Sprintf("endpoints=%d", endpoints), func(b *testing.B) {
			st := storetest.New(b)
			ctx := context.Background()
			a := newAccount(b, st, "walbench")
			if endpoints > 0 {
				if _, err := st.CreateWebhookEndpoint(ctx, a.ID, "http://127.0.0.1:9/hook", "whsec_AAAA"); err != nil {
					b.Fatal(err)
				}
			}
			if _, err := st.DB().Exec(`CREATE EXTENSION IF NOT EXISTS pg_walinspect`); err != nil {
				b.Skipf("pg_walinspect: %v", err)
			}
			var dboid string
			if err := st.DB().Get(&dboid, `SELECT oid::text FROM pg_database WHERE datname = current_database()`); err != nil {
				b.Fatal(err)
			}
			insertLSN := func() string {
				var l string
				if err := st.DB().Get(&l, `SELECT pg_current_wal_insert_lsn()::text`); err != nil {
					b.Fatal(err)
				}
				return l
			}
			// walOf sums the WAL records from lo up to the flushed end that belong to
			// transactions that touched this database (and xid-less records on its blocks).
			skipped := 0
			walOf := func(lo string) (bytes, fpi, records int64) {
				var ahead bool
				if err := st.DB().Get(&ahead, `SELECT $1::pg_lsn < pg_current_wal_flush_lsn()`, lo); err != nil {
					b.Fatal(err)
				}
				if !ahead {
					return 0, 0, 0 // nothing was written (and flushed) since lo
				}
				var r struct {
					Bytes   int64 `db:"bytes"`
					FPI     int64 `db:"fpi"`
					Records int64 `db:"records"`
				}
				if err := st.DB().Get(&r, `WITH r AS MATERIALIZED (
						SELECT * FROM pg_get_wal_records_info($1::pg_lsn, pg_current_wal_flush_lsn())
					), mine AS (SELECT DISTINCT xid FROM r WHERE xid <> '0' AND block_ref LIKE '%rel 1663/' || $2 || '/%')
					SELECT COALESCE(sum(record_length), 0) AS bytes, COALESCE(sum(fpi_length), 0) AS fpi, count(*) AS records
					FROM r WHERE xid IN (SELECT xid FROM mine) OR (xid = '0' AND block_ref LIKE '%rel 1663/' || $2 || '/%')`,
					lo, dboid); err != nil {
					// lo can fall where no record starts (a page boundary); the step is not counted.
					skipped++
					return 0, 0, 0
				}
				return r.Bytes, r.FPI, r.Records
			}
			phases := []string{"begin", "recordsent", "delivered", "read", "duplicate"}
			wal, fpis, recs := make([]int64, len(phases)), make([]int64, len(phases)), make([]int64, len(phases))
			body := []byte(`{"object":"whatsapp_business_account"}`)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				mobile := fmt.Sprintf("1555%08d", i)
				pid := fmt.Sprintf("wamid.wal.%d", i)
				var rec store.SendRecord
				steps := []func() error{
					func() (err error) {
						rec, err = st.BeginSend(ctx, a.ID, sendIn(mobile, "Bench User", "API"))
						return err
					},
					func() error { return st.RecordSent(ctx, a.ID, rec.MessageID, pid, mobile, time.Now()) },
					func() error {
						_, err := st.ApplyStatusRecordingWebhook(ctx, a.ID, store.StatusReport{PlatformMessageID: pid, Status: "delivered", OccurredAt: time.Now()}, body)
						return err
					},
					func() error {
						_, err := st.ApplyStatusRecordingWebhook(ctx, a.ID, store.StatusReport{PlatformMessageID: pid, Status: "read", OccurredAt: time.Now()}, body)
						return err
					},
					func() error {
						_, err := st.ApplyStatusRecordingWebhook(ctx, a.ID, store.StatusReport{PlatformMessageID: pid, Status: "read", OccurredAt: time.Now()}, body)
						return err
					},
				}
				for j, step := range steps {
					l0 := insertLSN()
					if err := step(); err != nil {
						b.Fatalf("%s: %v", phases[j], err)
					}
					w, f, n := walOf(l0)
					wal[j] += w
					fpis[j] += f
					recs[j] += n
				}
			}
			b.StopTimer()
			if skipped > b.N/10 {
				b.Fatalf("%d of %d steps could not be read back", skipped, b.N*len(phases))
			}
			b.ReportMetric(float64(skipped), "skipped_steps")
			var total, totalFPI, totalRecs int64
			for j, p := range phases {
				b.ReportMetric(float64(wal[j])/float64(b.N), p+"_walB/op")
				b.ReportMetric(float64(recs[j])/float64(b.N), p+"_records/op")
				total, totalFPI, totalRecs = total+wal[j], totalFPI+fpis[j], totalRecs+recs[j]
			}
			b.ReportMetric(float64(total)/float64(b.N), "lifecycle_walB/op")
			b.ReportMetric(float64(totalFPI)/float64(b.N), "lifecycle_fpiB/op")
			b.ReportMetric(float64(totalRecs)/float64(b.N), "lifecycle_records/op")
		})
	}
}
