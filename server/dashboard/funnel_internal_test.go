package dashboard

import (
	"testing"

	"gateway/store"
)

// A funnel's rates are of the answered sends; with none answered (only messages waiting, or
// none) they are "—", as the overview says, not "0.0 %".
func TestFunnelRatesNeedAnsweredSends(t *testing.T) {
	for _, c := range []struct {
		counts         store.StatusCounts
		delivery, read string
	}{
		{store.StatusCounts{}, "—", "—"},
		{store.StatusCounts{Pending: 3}, "—", "—"},
		{store.StatusCounts{Pending: 1, Sent: 1, Failed: 1}, "0.0 %", "0.0 %"},
		{store.StatusCounts{Delivered: 1, Read: 1, Failed: 2}, "50.0 %", "25.0 %"},
	} {
		f := funnelOf(c.counts)
		if f.DeliveryPct != c.delivery || f.ReadPct != c.read {
			t.Errorf("%+v: delivery %q, read %q; want %q, %q", c.counts, f.DeliveryPct, f.ReadPct, c.delivery, c.read)
		}
	}
}
