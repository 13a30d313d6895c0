package bench

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"time"
)

// ---- CPU accounting (Linux /proc; unknown elsewhere) ----

// cpuSample is a point-in-time reading of CPU counters, in clock ticks.
type cpuSample struct {
	target, self       uint64 // user+system ticks of the target process and of this process
	busy, steal, total uint64 // machine-wide ticks (busy includes steal)
	ok                 bool
}

// clockTick is USER_HZ, 100 on every Linux platform Go supports.
const clockTick = 10 * time.Millisecond

func sampleCPU(pid int) cpuSample {
	var s cpuSample
	var ok1, ok2, ok3 bool
	s.target, ok1 = procTicks(strconv.Itoa(pid))
	s.self, ok2 = procTicks("self")
	s.busy, s.steal, s.total, ok3 = machineTicks()
	s.ok = ok1 && ok2 && ok3
	return s
}

// sumTicks is the user+system ticks of the processes that are still there (a backend that
// ended during the window drops out of both readings only if it ended before the first).
func sumTicks(pids []int) uint64 {
	var n uint64
	for _, pid := range pids {
		if t, ok := procTicks(strconv.Itoa(pid)); ok {
			n += t
		}
	}
	return n
}

// procTicks reads utime+stime of /proc/<pid>/stat.
func procTicks(pid string) (uint64, bool) {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return 0, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, false
	}
	u, err1 := strconv.ParseUint(f[11], 10, 64)
	st, err2 := strconv.ParseUint(f[12], 10, 64)
	return u + st, err1 == nil && err2 == nil
}

// machineTicks reads the "cpu" line of /proc/stat: busy (everything but idle and iowait,
// steal included), steal, and total ticks.
func machineTicks() (busy, steal, total uint64, ok bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0, 0, false
	}
	line, _, _ := strings.Cut(string(b), "\n")
	return parseCPULine(line)
}

// parseCPULine parses "cpu user nice system idle iowait irq softirq steal [guest guest_nice]".
func parseCPULine(line string) (busy, steal, total uint64, ok bool) {
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return 0, 0, 0, false
	}
	var idle uint64
	for i, v := range f[1:9] { // guest time is already counted in user
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return 0, 0, 0, false
		}
		total += n
		switch i {
		case 3, 4: // idle, iowait
			idle += n
		case 7:
			steal = n
		}
	}
	return total - idle, steal, total, true
}

// cpuPerRequest turns two samples into per-request CPU of the target and of the load
// generator, and the machine's busy and steal shares; zeros and -1 when unknown.
func cpuPerRequest(a, b cpuSample, requests int) (server, client time.Duration, busy, steal float64) {
	busy, steal = -1, -1
	if !a.ok || !b.ok || requests <= 0 {
		return 0, 0, busy, steal
	}
	server = time.Duration(b.target-a.target) * clockTick / time.Duration(requests)
	client = time.Duration(b.self-a.self) * clockTick / time.Duration(requests)
	if b.total > a.total {
		busy = float64(b.busy-a.busy) / float64(b.total-a.total)
		steal = float64(b.steal-a.steal) / float64(b.total-a.total)
	}
	return server, client, busy, steal
}

// loadAverage returns /proc/loadavg's three averages, or "unknown".
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}
