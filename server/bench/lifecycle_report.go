package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strings"
	"text/tabwriter"
	"time"
)

// judge says whether a step was sustained, and if not, why.
func judge(r stepResult) (bool, string) {
	rate := float64(r.Rate)
	bound := func(b lcBacklog) string {
		switch {
		case float64(b.Due) > math.Max(rate, 50):
			return fmt.Sprintf("%d deliveries due", b.Due)
		case b.OldestDueS > 2:
			return fmt.Sprintf("a delivery due for %.1fs", b.OldestDueS)
		case float64(b.Parked) > math.Max(rate, 50):
			return fmt.Sprintf("%d statuses parked", b.Parked)
		case float64(b.SimPending) > math.Max(2*rate, 100):
			return fmt.Sprintf("%d status webhooks in flight", b.SimPending)
		}
		return ""
	}
	switch {
	case r.Missed > 0:
		return false, fmt.Sprintf("%d sends could not start on time", r.Missed)
	case r.SendsPerSec < 0.95*rate:
		return false, fmt.Sprintf("sends %.0f/s below the rate", r.SendsPerSec)
	case float64(r.Errors) > 0.001*float64(r.Sends+r.Errors):
		return false, fmt.Sprintf("%d send errors", r.Errors)
	case r.Recv.BadSignature > 0 || r.Recv.Unknown > 0:
		return false, fmt.Sprintf("%d bad signatures, %d unreadable deliveries", r.Recv.BadSignature, r.Recv.Unknown)
	case r.LifecyclesSec < 0.9*r.SendsPerSec:
		return false, fmt.Sprintf("read webhooks %.0f/s behind the sends", r.LifecyclesSec)
	}
	if why := bound(r.Mid); why != "" {
		return false, "mid-window: " + why
	}
	if why := bound(r.End); why != "" {
		return false, "end: " + why
	}
	if !r.DrainedOK {
		return false, "did not drain"
	}
	return true, ""
}

func verdictWord(r stepResult) string {
	if r.Sustained {
		return "sustained"
	}
	return "NOT sustained (" + r.Why + ")"
}

func formatLifecycle(rs []stepResult, o lifecycleOptions) string {
	var b strings.Builder
	fmt.Fprintf(&b, "lifecycle: open-loop sends, %s warm-up + %s measured per step, %d accounts, %d client connections;\n",
		o.Warmup, o.Step, o.Accounts, o.Clients)
	b.WriteString("lifecycles/s = read-status webhooks verified by the receiver per second; send latency from the due time;\n")
	b.WriteString("lag = receiver arrival - event created_at (status applied in the gateway -> customer webhook);\n")
	b.WriteString("CPU per lifecycle by process (postgres = this database's backends; pg-aux = WAL writer, checkpointer,\n")
	b.WriteString("bgwriter, shared with every other database on the server; pgbouncer = the --pooler-pid process, - without it);\n")
	b.WriteString("machine = all busy CPU of the machine per lifecycle (other users' work included)\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "rate\tlifecycles/s\tsends/s\tsend p50\tsend p99\tlag p50\tlag p99\terrors\tgateway\tpostgres\tpg-aux\tpgbouncer\tsimulator\treceiver\tgenerator\tmachine\tbusy\tbacklog end (due/parked/sim)\tdrain\tverdict\t")
	best := 0.0
	for _, r := range rs {
		us := func(name string) string {
			if _, ok := r.CPU[name]; !ok && name == "pgbouncer" {
				return "-"
			}
			return fmtMicros(r.CPU[name])
		}
		fmt.Fprintf(tw, "%d\t%.1f\t%.1f\t%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d/%d/%d\t%s\t%s\t\n", r.Rate, r.LifecyclesSec,
			r.SendsPerSec, fmtDur(r.SendP50), fmtDur(r.SendP99), fmtDur(r.Recv.StatusLagP50), fmtDur(r.Recv.StatusLagP99),
			r.Errors, us("gateway"), us("postgres"), us("pg-aux"), us("pgbouncer"), us("simulator"), us("receiver"), us("generator"), fmtMicros(r.MachineCPU),
			fmtShare(r.Busy), r.End.Due, r.End.Parked, r.End.SimPending, r.Drained.Round(100*time.Millisecond), verdictWord(r))
		if r.Sustained {
			best = max(best, r.LifecyclesSec)
		}
	}
	tw.Flush()
	for _, r := range rs {
		for k, v := range r.Samples {
			fmt.Fprintf(&b, "  rate %d: %d× %s\n", r.Rate, v, k)
		}
	}
	if best > 0 {
		fmt.Fprintf(&b, "highest sustained: %.1f lifecycles/s (goal 500)\n", best)
	} else {
		b.WriteString("no step was sustained\n")
	}
	return b.String()
}

// getJSON fetches u and decodes its JSON answer into v; it fails unless the answer is 200.
func getJSON(ctx context.Context, u string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s answered %d", u, resp.StatusCode)
	}
	return json.NewDecoder(resp.Body).Decode(v)
}
