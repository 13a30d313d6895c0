package bench

import (
	"strconv"
	"time"
)

// The CPU of each process of a lifecycle run, per lifecycle.

// lcCPU is one reading of the CPU ticks of every process of the run.
type lcCPU struct {
	procs     map[string]uint64
	pg, aux   map[int]uint64
	busy, tot uint64
	ok        bool
}

func (lc *lifecycle) sampleCPU(pgPIDs, auxPIDs []int) lcCPU {
	c := lcCPU{procs: map[string]uint64{}, pg: map[int]uint64{}, aux: map[int]uint64{}, ok: true}
	for name, pid := range map[string]string{
		"gateway":   strconv.Itoa(lc.gateway.pid()),
		"simulator": strconv.Itoa(lc.sim.pid()),
		"receiver":  strconv.Itoa(lc.receiver.pid()),
		"generator": "self",
	} {
		t, ok := procTicks(pid)
		c.procs[name] = t
		c.ok = c.ok && ok
	}
	if lc.opts.PoolerPID > 0 {
		t, ok := procTicks(strconv.Itoa(lc.opts.PoolerPID))
		c.procs["pgbouncer"] = t
		c.ok = c.ok && ok
	}
	for _, pid := range pgPIDs {
		if t, ok := procTicks(strconv.Itoa(pid)); ok {
			c.pg[pid] = t
		}
	}
	for _, pid := range auxPIDs {
		if t, ok := procTicks(strconv.Itoa(pid)); ok {
			c.aux[pid] = t
		}
	}
	var ok bool
	c.busy, _, c.tot, ok = machineTicks()
	c.ok = c.ok && ok
	return c
}

// cpuPer divides the CPU of each process between a and b by n lifecycles. PostgreSQL is the
// sum over this database's backends present at both readings; pg-aux that of the WAL writer,
// checkpointer and background writer, which every database on the server shares.
func cpuPer(a, b lcCPU, n int) (map[string]time.Duration, time.Duration, float64) {
	out := map[string]time.Duration{}
	if !a.ok || !b.ok || n <= 0 {
		return out, 0, -1
	}
	for name, t := range b.procs {
		out[name] = time.Duration(t-a.procs[name]) * clockTick / time.Duration(n)
	}
	sum := func(a, b map[int]uint64) time.Duration {
		var ticks uint64
		for pid, t := range b {
			if t0, ok := a[pid]; ok && t >= t0 {
				ticks += t - t0
			}
		}
		return time.Duration(ticks) * clockTick / time.Duration(n)
	}
	out["postgres"] = sum(a.pg, b.pg)
	out["pg-aux"] = sum(a.aux, b.aux)
	busy := -1.0
	if b.tot > a.tot {
		busy = float64(b.busy-a.busy) / float64(b.tot-a.tot)
	}
	return out, time.Duration(b.busy-a.busy) * clockTick / time.Duration(n), busy
}
