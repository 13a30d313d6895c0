package store_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"gateway/store"
	"gateway/store/storetest"
)

// BenchmarkBatchWrites times the group-committed statements of a message's life, each a batch
// of n rows passed in one argument: BeginSends (new contacts), RecordSentWrites, and
// ApplyStatusWrites (delivered, with the raw body), with one webhook endpoint on the account so
// that every event fans out; and RecordAttempts of the resulting deliveries (a retry). The
// figures are the median microseconds of each statement per batch (begin_µs, recordsent_µs,
// status_µs, attempts_µs); ns/op is the whole iteration.
//
//	go test -run '^$' -bench BatchWrites -benchtime 300x ./store/
func BenchmarkBatchWrites(b *testing.B) {
	for _, n := range []int{1, 16} {
		b.Run(fmt.Sprintf("batch=%d", n), func(b *testing.B) {
			st := storetest.New(b)
			ctx := context.Background()
			a := newAccount(b, st, "batchbench")
			if _, err := st.CreateWebhookEndpoint(ctx, a.ID, "http://127.0.0.1:9/hook", "whsec_AAAA"); err != nil {
				b.Fatal(err)
			}
			body := []byte(`{"object":"whatsapp_business_account","entry":[]}`)
			phases := []string{"begin", "recordsent", "status", "attempts"}
			times := make([][]float64, len(phases))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				begins := make([]store.SendBegin, n)
				for j := range begins {
					begins[j] = store.SendBegin{AccountID: a.ID, SendInput: sendIn(fmt.Sprintf("1666%04d%04d", i, j), "Bench User", "API")}
				}
				var recs []store.SendRecord
				var claims []store.ClaimedDelivery
				steps := []func() error{
					func() (err error) {
						recs, err = st.BeginSends(ctx, begins)
						return err
					},
					func() error {
						ws := make([]store.SentWrite, n)
						for j, r := range recs {
							ws[j] = store.SentWrite{AccountID: a.ID, MessageID: r.MessageID,
								PlatformMessageID: fmt.Sprintf("wamid.batch.%d.%d", i, j), At: time.Now()}
						}
						_, err := st.RecordSentWrites(ctx, ws)
						return err
					},
					func() error {
						ws := make([]store.StatusWrite, n)
						for j := range ws {
							ws[j] = store.StatusWrite{AccountID: a.ID, Body: body, Report: store.StatusReport{
								PlatformMessageID: fmt.Sprintf("wamid.batch.%d.%d", i, j), Status: "delivered", OccurredAt: time.Now()}}
						}
						_, err := st.ApplyStatusWrites(ctx, ws)
						return err
					},
					func() error {
						results := make([]store.AttemptResult, len(claims))
						for j, c := range claims {
							results[j] = store.AttemptResult{ClaimRef: c.Ref(), AttemptedAt: time.Now(), StatusCode: 503,
								Latency: time.Millisecond, Error: "503", Response: []byte("busy"), Outcome: store.OutcomeRetry,
								RetryIn: time.Hour}
						}
						return st.RecordAttempts(ctx, time.Time{}, results)
					},
				}
				for j, step := range steps {
					if j == 3 {
						b.StopTimer()
						var err error
						if claims, err = st.ClaimDueDeliveries(ctx, time.Time{}, 4*n, time.Minute, nil, nil); err != nil {
							b.Fatal(err)
						}
						b.StartTimer()
					}
					t0 := time.Now()
					if err := step(); err != nil {
						b.Fatalf("%s: %v", phases[j], err)
					}
					times[j] = append(times[j], float64(time.Since(t0).Microseconds()))
				}
			}
			b.StopTimer()
			for j, p := range phases {
				slices.Sort(times[j])
				b.ReportMetric(times[j][len(times[j])/2], p+"_µs")
			}
		})
	}
}
