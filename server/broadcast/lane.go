package broadcast

import (
	"math"
	"sync"
	"time"

	"gateway/store"
)

// item is one claimed recipient waiting in its number's lane.
type item struct {
	b       store.Broadcast
	r       store.ClaimedRecipient
	claimed time.Time // when the claim was made (monotonic)
}

// lane is one phone number's share of the engine: the claimed recipients waiting for a token
// of the number's bucket, the bucket, the per-person spacing and the workers calling the
// platform.
type lane struct {
	number  string
	queue   chan item
	bucket  *bucket // admission: claimed recipients are marked and sent at the broadcasts' share
	gate    *bucket // the platform call itself, at the number's pace (Message.BeforeCall)
	pairs   *pairs
	workers sync.WaitGroup

	mu   sync.Mutex
	thr  int
	left []item // taken from the queue but not called (a graceful stop)
}

// laneSeconds is how many seconds of the number's rate a lane holds claimed ahead.
const laneSeconds = 2

func newLane(number string, throughput int, cfg Config) *lane {
	l := &lane{number: number, queue: make(chan item, max(cfg.Batch, laneSeconds*ThroughputHigh)), pairs: newPairs(cfg.PairInterval)}
	rate, burst := pace(throughput, cfg.Share)
	l.bucket = newBucket(rate, burst)
	// The gate has the admission's pace: at a steady rate nothing waits at it, and sends that
	// the writes before the call bunched (a shared statement releases several at once) pass
	// while they fit the burst and are spread again past it, so no clock second at the
	// platform sees more than rate+burst.
	l.gate = newBucket(rate, burst)
	l.thr = throughput
	return l
}

// ThroughputHigh is the largest throughput a number has (after the platform's upgrade).
const ThroughputHigh = 1000

// pace returns the bucket's rate and burst for a number's throughput and the broadcasts'
// share of it: rate+burst stays under the throughput by a margin (2%, at least one message),
// so no clock second at the platform sees more even when network delays bunch the sends that
// left in two neighbouring seconds.
func pace(throughput int, share float64) (rate, burst float64) {
	t := float64(throughput)
	limit := t - max(1, math.Ceil(t*0.02))
	if limit < 1 {
		return 0.5, 1
	}
	rate = min(t*share, limit-1)
	if rate <= 0 {
		rate = 0.5
	}
	return rate, max(1, limit-rate)
}

// setThroughput changes the lane's pace when the number's throughput changed.
func (l *lane) setThroughput(throughput int, share float64) {
	l.mu.Lock()
	changed := throughput != l.thr
	l.thr = throughput
	l.mu.Unlock()
	if changed {
		l.bucket.setRate(pace(throughput, share))
		l.gate.setRate(pace(throughput, share))
	}
}

// room is how many more recipients the lane takes: the number's rate for laneSeconds (or
// half the lease, when shorter, so claims do not lapse while queued), less what it holds.
func (l *lane) room(lease time.Duration) int {
	l.mu.Lock()
	ahead := min(laneSeconds*time.Second, lease/2)
	want := min(cap(l.queue), max(1, int(float64(l.thr)*ahead.Seconds())))
	l.mu.Unlock()
	return want - len(l.queue)
}

// push queues a claimed recipient (room said there is space; when there is none, it waits).
func (l *lane) push(it item) { l.queue <- it }

// giveBack keeps an item a worker took but will not call.
func (l *lane) giveBack(it item) {
	l.mu.Lock()
	l.left = append(l.left, it)
	l.mu.Unlock()
}

// leftovers returns the releases of every claimed recipient the lane holds, due at now.
func (l *lane) leftovers(now time.Time) []store.RecipientRelease {
	l.mu.Lock()
	items := l.left
	l.left = nil
	l.mu.Unlock()
	for {
		select {
		case it := <-l.queue:
			items = append(items, it)
			continue
		default:
		}
		break
	}
	out := make([]store.RecipientRelease, len(items))
	for i, it := range items {
		out[i] = store.RecipientRelease{AccountID: it.r.AccountID, ID: it.r.ID, Claim: it.r.Claim, At: now}
	}
	return out
}
