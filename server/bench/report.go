package bench

import (
	"fmt"
	"math"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// runStats is one row of the report.
type runStats struct {
	Phase       string
	Concurrency int
	Target      string
	PerSec      float64 // 2xx answers per second of the measured window
	P50, P99    time.Duration
	OK, Errors  int
	ServerCPU   time.Duration // the target process's CPU per 2xx answer (0 = unknown)
	ClientCPU   time.Duration // the load generator's CPU per 2xx answer (0 = unknown)
	DBCPU       time.Duration // PostgreSQL's CPU per 2xx answer: the database's backends and the WAL writer, checkpointer and background writer (0 = unknown)
	Busy        float64       // the machine's busy share during the window, steal included (0..1; -1 = unknown)
	Steal       float64       // the share the hypervisor took (0..1; -1 = unknown)
	Round       int           // 1-based; rows of one round pair up for the ratio
	Settle      time.Duration // waiting for the database to be quiet before the run
	Samples     map[string]int
}

// percentile returns the nearest-rank p-th percentile (0 < p <= 100) of sorted durations, 0
// for none.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	rank = min(max(rank, 1), len(sorted))
	return sorted[rank-1]
}

// summarize turns a run's results into a report row (Phase, Concurrency and Target are left
// to the caller). It sorts res.Latencies.
func summarize(res loadResult) runStats {
	slices.Sort(res.Latencies)
	s := runStats{OK: res.OK, Errors: res.Failed, Samples: res.Samples, Busy: -1, Steal: -1,
		P50: percentile(res.Latencies, 50), P99: percentile(res.Latencies, 99)}
	if res.Window > 0 {
		s.PerSec = float64(res.OK) / res.Window.Seconds()
	}
	return s
}

// ratio returns gateway/floor req/s for the phase at concurrency c in one round, and false
// when either row is missing or the floor did nothing.
func ratio(rows []runStats, phase string, c, round int) (float64, bool) {
	var ours, floor *runStats
	for i := range rows {
		if rows[i].Phase != phase || rows[i].Concurrency != c || rows[i].Round != round {
			continue
		}
		switch rows[i].Target {
		case targetGateway:
			ours = &rows[i]
		case targetFloor:
			floor = &rows[i]
		}
	}
	if ours == nil || floor == nil || floor.PerSec <= 0 {
		return 0, false
	}
	return ours.PerSec / floor.PerSec, true
}

// medianRatio returns the median over the rounds of ratio(phase, c), and false when no round
// has one.
func medianRatio(rows []runStats, phase string, c int) (float64, bool) {
	var rs []float64
	seen := map[int]bool{}
	for _, r := range rows {
		if r.Phase == phase && r.Concurrency == c && !seen[r.Round] {
			seen[r.Round] = true
			if v, ok := ratio(rows, phase, c, r.Round); ok {
				rs = append(rs, v)
			}
		}
	}
	if len(rs) == 0 {
		return 0, false
	}
	slices.Sort(rs)
	if len(rs)%2 == 1 {
		return rs[len(rs)/2], true
	}
	return (rs[len(rs)/2-1] + rs[len(rs)/2]) / 2, true
}

// benchGoal is the ratio the messaging issue asks of each path.
const benchGoal = 0.6

// formatReport renders the rows as a table, with the ratio gateway/floor on each gateway row,
// and a verdict per phase against benchGoal (the median over rounds when there are several).
func formatReport(rows []runStats, duration, warmup time.Duration) string {
	var b strings.Builder
	fmt.Fprintf(&b, "closed loop, %s warm-up + %s measured per row; req/s counts 2xx answers; latency of 2xx answers;\n", warmup, duration)
	b.WriteString("CPU/req = CPU per 2xx answer of the target process (srv), PostgreSQL (db: its backends, walwriter, checkpointer, bgwriter), this load generator (gen);\n")
	b.WriteString("busy = machine CPU busy during the row, steal = share taken by the hypervisor (both include other users' work)\n")
	rounds := 1
	for _, r := range rows {
		rounds = max(rounds, r.Round)
	}
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := "phase\tclients\ttarget\treq/s\tp50\tp99\terrors\tsrv CPU/req\tdb CPU/req\tgen CPU/req\tbusy\tsteal\tours/floor\t"
	if rounds > 1 {
		head = "round\t" + head
	}
	fmt.Fprintln(tw, head)
	for _, r := range rows {
		rat := ""
		if r.Target == targetGateway {
			if v, ok := ratio(rows, r.Phase, r.Concurrency, r.Round); ok {
				rat = fmt.Sprintf("%.2fx", v)
			}
		}
		if rounds > 1 {
			fmt.Fprintf(tw, "%d\t", r.Round)
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t\n", r.Phase, r.Concurrency, r.Target,
			thousands(int64(math.Round(r.PerSec))), fmtDur(r.P50), fmtDur(r.P99), r.Errors,
			fmtMicros(r.ServerCPU), fmtMicros(r.DBCPU), fmtMicros(r.ClientCPU), fmtShare(r.Busy), fmtShare(r.Steal), rat)
	}
	tw.Flush()
	var verdicts []string
	for _, phase := range []string{phaseSend, phaseStatus, phasePoll} {
		var parts []string
		worst, any := math.Inf(1), false
		var concs []int
		for _, r := range rows {
			if r.Phase == phase && !slices.Contains(concs, r.Concurrency) {
				concs = append(concs, r.Concurrency)
			}
		}
		for _, c := range concs {
			if v, ok := medianRatio(rows, phase, c); ok {
				parts = append(parts, fmt.Sprintf("c=%d %.2fx", c, v))
				worst, any = min(worst, v), true
			}
		}
		if !any {
			continue
		}
		verdict := "meets"
		if worst < benchGoal {
			verdict = "BELOW"
		}
		verdicts = append(verdicts, fmt.Sprintf("  %-6s %s: %s the %.1fx goal", phase, strings.Join(parts, ", "), verdict, benchGoal))
	}
	if len(verdicts) > 0 {
		label := "ours/floor:"
		if rounds > 1 {
			label = fmt.Sprintf("ours/floor (median of %d rounds):", rounds)
		}
		b.WriteString("\n" + label + "\n" + strings.Join(verdicts, "\n") + "\n")
	}
	if line := richCost(rows); line != "" {
		b.WriteString("\n" + line + "\n")
	}
	return b.String()
}

// richCostGoal is how much more gateway CPU a rich send (media header, button value) may cost
// than a text-only one.
const richCostGoal = 0.10

// richCost compares the gateway's CPU per send-rich request with its CPU per text-only send,
// the median of each over every run at each concurrency; "" when either is missing.
func richCost(rows []runStats) string {
	median := func(phase string, c int) (time.Duration, bool) {
		var ds []time.Duration
		for _, r := range rows {
			if r.Phase == phase && r.Concurrency == c && r.Target == targetGateway && r.ServerCPU > 0 {
				ds = append(ds, r.ServerCPU)
			}
		}
		if len(ds) == 0 {
			return 0, false
		}
		slices.Sort(ds)
		return ds[len(ds)/2], true
	}
	var parts []string
	worst := math.Inf(-1)
	for _, r := range rows {
		if r.Phase != phaseSendRich || r.Target != targetGateway || slices.ContainsFunc(parts, func(p string) bool {
			return strings.HasPrefix(p, fmt.Sprintf("c=%d ", r.Concurrency))
		}) {
			continue
		}
		rich, ok1 := median(phaseSendRich, r.Concurrency)
		text, ok2 := median(phaseSend, r.Concurrency)
		if !ok1 || !ok2 {
			continue
		}
		extra := float64(rich)/float64(text) - 1
		worst = max(worst, extra)
		parts = append(parts, fmt.Sprintf("c=%d %s vs %s (%+.0f%%)", r.Concurrency, fmtMicros(rich), fmtMicros(text), 100*extra))
	}
	if len(parts) == 0 {
		return ""
	}
	verdict := "meets"
	if worst > richCostGoal {
		verdict = "ABOVE"
	}
	return fmt.Sprintf("gateway CPU per send, send-rich vs send: %s: %s the +%.0f%% limit", strings.Join(parts, ", "), verdict, 100*richCostGoal)
}

func fmtShare(v float64) string {
	if v < 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f%%", v*100)
}

// errorSamples lists the first distinct failures of every row that had any.
func errorSamples(rows []runStats) string {
	var b strings.Builder
	for _, r := range rows {
		if r.Errors == 0 {
			continue
		}
		keys := make([]string, 0, len(r.Samples))
		for k := range r.Samples {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			fmt.Fprintf(&b, "  %s c=%d %s: %d× %s\n", r.Phase, r.Concurrency, r.Target, r.Samples[k], k)
		}
	}
	return b.String()
}

// fmtDur renders a latency with two or three significant digits: 850µs, 4.2ms, 17ms, 1.25s.
func fmtDur(d time.Duration) string {
	switch {
	case d <= 0:
		return "-"
	case d < time.Millisecond:
		return fmt.Sprintf("%dµs", d.Microseconds())
	case d < 10*time.Millisecond:
		return fmt.Sprintf("%.2fms", float64(d)/float64(time.Millisecond))
	case d < time.Second:
		return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond))
	}
	return fmt.Sprintf("%.2fs", d.Seconds())
}

func fmtMicros(d time.Duration) string {
	if d <= 0 {
		return "-"
	}
	return fmt.Sprintf("%dµs", d.Microseconds())
}

// thousands renders n with comma separators: 1234567 → "1,234,567".
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// oneLine squeezes b to one line of at most n bytes.
func oneLine(b []byte, n int) string {
	s := strings.Join(strings.Fields(string(b)), " ")
	if len(s) > n {
		s = s[:n] + "…"
	}
	return s
}

// commandLine renders argv as a shell command line.
func commandLine(argv []string) string {
	out := make([]string, len(argv))
	for i, a := range argv {
		if a == "" || strings.ContainsAny(a, " \t\n'\"\\$`*?[]{}()<>|&;#~") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		out[i] = a
	}
	if len(out) > 0 {
		out[0] = filepath.Base(out[0])
		if out[0] != "gateway" {
			out[0] = argv[0]
		}
	}
	return strings.Join(out, " ")
}

// redactDSN drops the password from a database URL.
func redactDSN(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
}
