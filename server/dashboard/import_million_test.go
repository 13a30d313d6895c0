package dashboard_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"gateway/server/worker"
)

// millionCSV writes rows data rows after a header, generated as they are read: local
// Brazilian mobiles, every 10th row an earlier person without the mobile 9 (merged), every
// 50th an invalid number (rejected).
func millionCSV(rows int) io.Reader {
	pr, pw := io.Pipe()
	go func() {
		w := bufio.NewWriterSize(pw, 64<<10)
		fmt.Fprintln(w, "Phone,First,Last,Order ID,City")
		for i := range rows {
			switch {
			case i%50 == 49:
				fmt.Fprintf(w, "12345,Bad,Row,%d,Nowhere\n", i)
			case i%10 == 9:
				j := i - 9
				fmt.Fprintf(w, "+55 %02d %04d-%04d,Again,Person,%d,São Paulo\n", 11+j/10_000_000, (j/10000)%1000+8000, j%10000, i)
			default:
				fmt.Fprintf(w, "(%02d) 9%04d-%04d,Name%d,Surname,%d,São Paulo\n", 11+i/10_000_000, (i/10000)%1000+8000, i%10000, i, i)
			}
		}
		pw.CloseWithError(w.Flush())
	}()
	return pr
}

// vmHWM is the process's peak resident memory so far (Linux), 0 elsewhere.
func vmHWM() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// A 1,000,000-row CSV through the dashboard's real upload, mapping and confirmation (the
// gateway runs in this process): every accepted person becomes a tagged contact. It prints
// the time and the peak memory (the Go runtime's total, sampled, and the VmHWM rise; the
// figure's goal is under 60 s and 200 MB) and fails only when the runtime's peak passes
// 200 MB. Then it drains the name index's backlog as the gateway's name indexer does and
// prints how long the name search took to catch up. It takes minutes, so it runs only when IMPORT_ROWS gives the number of rows
// (`make bench-import` gives 1,000,000); the suite leaves it out.
func TestImportMillionRowsThroughTheDashboard(t *testing.T) {
	rows, err := strconv.Atoi(os.Getenv("IMPORT_ROWS"))
	if err != nil || rows <= 0 {
		t.Skip("a timed import: set IMPORT_ROWS (make bench-import)")
	}
	env := newEnv(t, true)
	u := signUp(t, env, "Acme", "owner@acme.example")
	acct := accountOf(t, env.Store, "owner@acme.example")

	runtime.GC()
	hwm0 := vmHWM()
	sample := []metrics.Sample{{Name: "/memory/classes/total:bytes"}}
	metrics.Read(sample)
	base := sample[0].Value.Uint64()
	var peak atomic.Uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}}
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(s)
			if v := s[0].Value.Uint64(); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	})

	cpu := newCPUMeter(t, env.Store.DB())
	start := time.Now()
	p := u.upload("million.csv", millionCSV(rows))
	uploaded := time.Since(start)
	m := reUploadToken.FindStringSubmatch(p.Body)
	if p.Status != http.StatusOK || m == nil {
		t.Fatalf("upload: %d\n%.2000s", p.Status, p.Body)
	}
	p = u.post("/dashboard/contacts/import/map", url.Values{"token": {m[1]}, "number": {"Phone"}, "first_name": {"First"},
		"last_name": {"Last"}, "country": {"BR"}, "tag": {"million"}, "var_3": {"order_id"}})
	staged := time.Since(start)
	t.Logf("%d rows uploaded in %.1fs, staged at %.1fs (%s)", rows, uploaded.Seconds(), staged.Seconds(), cpu.step())
	loc := p.Header.Get("Location")
	if p.Status != http.StatusSeeOther {
		t.Fatalf("map: %d\n%.2000s", p.Status, p.Body)
	}
	if p = u.get(loc); p.Status != http.StatusOK {
		t.Fatalf("preview: %d", p.Status)
	}
	previewed := time.Since(start)
	t.Logf("preview at %.1fs (%s); confirming", previewed.Seconds(), cpu.step())
	if p = u.post(loc+"/confirm", nil); p.Status != http.StatusSeeOther {
		t.Fatalf("confirm: %d\n%.2000s", p.Status, p.Body)
	}
	total := time.Since(start)
	t.Logf("confirmed at %.1fs (%s)", total.Seconds(), cpu.step())
	close(stop)
	wg.Wait()

	rejected := rows / 50
	dups := 0
	for i := 9; i < rows; i += 10 {
		if i%50 != 49 && (i-9)%50 != 49 {
			dups++
		}
	}
	var contacts, tagged int
	if err := env.Store.DB().QueryRow(`SELECT (SELECT count(*) FROM contacts WHERE account_id = $1),
		(SELECT count(*) FROM contact_tags WHERE account_id = $1 AND tag = 'million')`, acct).Scan(&contacts, &tagged); err != nil {
		t.Fatal(err)
	}
	if want := rows - rejected - dups; contacts != want || tagged != want {
		t.Errorf("contacts %d, tagged %d, want %d each", contacts, tagged, want)
	}
	peakMB := float64(peak.Load()) / (1 << 20)
	t.Logf("%d rows: upload %.1fs, staged %.1fs, preview %.1fs, confirmed %.1fs total; Go runtime memory peak %.0f MB (%.0f MB before), VmHWM rise %.0f MB",
		rows, uploaded.Seconds(), staged.Seconds(), previewed.Seconds(), total.Seconds(), peakMB, float64(base)/(1<<20), float64(vmHWM()-hwm0)/(1<<20))

	// The name search catches up after the confirmation (the name indexer every gateway runs).
	indexStart := time.Now()
	indexed, err := worker.NewNameIndexer(env.Store, worker.NameIndexerConfig{}).Drain(context.Background(), acct)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("name search: %d contacts indexed %.1fs after the confirmation (%s)", indexed, time.Since(indexStart).Seconds(), cpu.step())
	probe := rows / 2 / 50 * 50 // an accepted row: neither a repeat (i%10 == 9) nor invalid (i%50 == 49)
	if p := u.get(fmt.Sprintf("/dashboard/contacts?search=Name%d+Surname", probe)); !strings.Contains(p.Body, fmt.Sprintf("Name%d Surname", probe)) {
		t.Errorf("the name search does not find row %d's contact after the indexer", probe)
	}
	if peakMB > 200 {
		t.Errorf("the Go runtime's memory peaked at %.0f MB, over 200 MB", peakMB)
	}
}

// cpuMeter reads the CPU time this process (the gateway, with the test's client) and the
// PostgreSQL backends connected to its database have used, so that each step's figures say
// where its time went even on a busy machine: a step's database CPU is what it would take
// alone, since one statement runs on one core.
type cpuMeter struct {
	t        *testing.T
	db       *sqlx.DB
	self     time.Duration
	backends map[int]time.Duration
}

func newCPUMeter(t *testing.T, db *sqlx.DB) *cpuMeter {
	m := &cpuMeter{t: t, db: db}
	m.self, m.backends = m.read()
	return m
}

// step returns the CPU used since the previous step, in words, and starts the next.
func (m *cpuMeter) step() string {
	self, backends := m.read()
	var pg time.Duration
	for pid, used := range backends {
		pg += used - m.backends[pid] // a backend started since counts whole
	}
	out := fmt.Sprintf("CPU: gateway %.1fs, PostgreSQL %.1fs", (self - m.self).Seconds(), pg.Seconds())
	m.self, m.backends = self, backends
	return out
}

func (m *cpuMeter) read() (time.Duration, map[int]time.Duration) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		m.t.Fatal(err)
	}
	var pids []int
	if err := m.db.Select(&pids, `SELECT pid FROM pg_stat_activity WHERE datname = current_database()`); err != nil {
		m.t.Fatal(err)
	}
	backends := make(map[int]time.Duration, len(pids))
	for _, pid := range pids {
		backends[pid] = procCPU(pid)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), backends
}

// procCPU is the user and system CPU time of process pid so far (Linux /proc), 0 when it cannot
// be read.
func procCPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The fields after the command's closing parenthesis: utime and stime are the 12th and 13th.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * time.Second / 100 // clock ticks (USER_HZ is 100 on Linux)
}
