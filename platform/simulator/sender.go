package simulator

import (
	"bytes"
	"container/heap"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"
)

// ErrNoWebhookURL is returned when a webhook must be sent but no webhook URL
// is configured.
var ErrNoWebhookURL = errors.New("simulator: no webhook URL configured")

// WebhookStats counts the simulator's webhook deliveries since New (Reset
// does not clear them).
type WebhookStats struct {
	Pending   int `json:"pending"`   // queued or in flight (a status sequence counts once)
	Delivered int `json:"delivered"` // POSTs answered 200
	Failed    int `json:"failed"`    // deliveries given up after the last attempt
	Attempts  int `json:"attempts"`  // POSTs made, retries included
}

// RetryDelay returns the wait before attempt number attempt+1 after attempt
// failed: base, 2×base, 4×base, ... (compressed from Meta's hours-long
// schedule). attempt starts at 1; values below 1 are treated as 1.
func RetryDelay(attempt int, base time.Duration) time.Duration {
	if attempt < 1 {
		attempt = 1
	}
	if attempt > 30 {
		attempt = 30
	}
	return base << (attempt - 1)
}

// step is one POST of a job: a pre-built body due at a time.
type step struct {
	body []byte
	at   time.Time
}

// job is an ordered sequence of deliveries (one message's statuses, or a
// single webhook). Steps go out one after the other: the next step is
// scheduled only when the previous one was delivered or given up.
type job struct {
	steps   []step
	attempt int // failed attempts of steps[0]
	due     time.Time
	index   int // in the heap
}

type jobHeap []*job

func (h jobHeap) Len() int           { return len(h) }
func (h jobHeap) Less(i, j int) bool { return h[i].due.Before(h[j].due) }
func (h jobHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index = i
	h[j].index = j
}
func (h *jobHeap) Push(x any) {
	j := x.(*job)
	j.index = len(*h)
	*h = append(*h, j)
}
func (h *jobHeap) Pop() any {
	old := *h
	n := len(old)
	j := old[n-1]
	old[n-1] = nil
	*h = old[:n-1]
	return j
}

// sender is the background webhook sender: one scheduler goroutine that
// keeps jobs in a heap by due time, and a fixed pool of workers that POST.
type sender struct {
	client   *http.Client
	secret   string
	url      func() string
	attempts int
	base     time.Duration

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	work   chan *job
	wake   chan struct{}

	mu    sync.Mutex
	queue jobHeap
	stats WebhookStats
	idle  chan struct{} // closed while Pending == 0
}

// newSender starts the scheduler and workers; stop ends them.
func newSender(secret string, url func() string, workers, attempts int, base, timeout time.Duration) *sender {
	ctx, cancel := context.WithCancel(context.Background())
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = workers * 2
	s := &sender{
		client:   &http.Client{Transport: tr, Timeout: timeout, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }},
		secret:   secret,
		url:      url,
		attempts: attempts,
		base:     base,
		ctx:      ctx,
		cancel:   cancel,
		work:     make(chan *job),
		wake:     make(chan struct{}, 1),
		idle:     make(chan struct{}),
	}
	close(s.idle)
	s.wg.Add(1 + workers)
	go s.schedule()
	for range workers {
		go s.worker()
	}
	return s
}

// stop cancels in-flight POSTs, drops queued jobs and waits for the
// goroutines. It is idempotent.
func (s *sender) stop() {
	s.cancel()
	s.wg.Wait()
	s.client.Transport.(*http.Transport).CloseIdleConnections()
}

// enqueue adds a sequence of deliveries. Steps whose time has passed go out
// at once, in order.
func (s *sender) enqueue(steps []step) {
	if len(steps) == 0 || s.ctx.Err() != nil {
		return
	}
	j := &job{steps: steps, due: steps[0].at}
	s.mu.Lock()
	s.begin()
	heap.Push(&s.queue, j)
	s.mu.Unlock()
	s.poke()
}

// begin counts one more pending job. Caller holds mu.
func (s *sender) begin() {
	if s.stats.Pending == 0 {
		s.idle = make(chan struct{})
	}
	s.stats.Pending++
}

// end counts one job finished. Caller holds mu.
func (s *sender) end() {
	s.stats.Pending--
	if s.stats.Pending == 0 {
		close(s.idle)
	}
}

func (s *sender) poke() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

func (s *sender) schedule() {
	defer s.wg.Done()
	t := time.NewTimer(time.Hour)
	t.Stop()
	for {
		s.mu.Lock()
		var ready *job
		wait := time.Duration(-1)
		if len(s.queue) > 0 {
			if d := time.Until(s.queue[0].due); d <= 0 {
				ready = heap.Pop(&s.queue).(*job)
			} else {
				wait = d
			}
		}
		s.mu.Unlock()
		if ready != nil {
			select {
			case s.work <- ready:
			case <-s.ctx.Done():
				return
			}
			continue
		}
		if wait >= 0 {
			t.Reset(wait)
		} else {
			t.Stop()
		}
		select {
		case <-s.ctx.Done():
			t.Stop()
			return
		case <-s.wake:
		case <-t.C:
		}
	}
}

func (s *sender) worker() {
	defer s.wg.Done()
	for {
		select {
		case <-s.ctx.Done():
			return
		case j := <-s.work:
			s.run(j)
		}
	}
}

// run makes one attempt of the job's first step and reschedules the job.
func (s *sender) run(j *job) {
	err := s.post(s.ctx, j.steps[0].body)
	if s.ctx.Err() != nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil && !errors.Is(err, ErrNoWebhookURL) && j.attempt+1 < s.attempts {
		j.attempt++
		j.due = time.Now().Add(RetryDelay(j.attempt, s.base))
		heap.Push(&s.queue, j)
		s.poke()
		return
	}
	if err != nil {
		s.stats.Failed++
	}
	j.steps = j.steps[1:]
	j.attempt = 0
	if len(j.steps) == 0 {
		s.end()
		return
	}
	j.due = j.steps[0].at
	heap.Push(&s.queue, j)
	s.poke()
}

// deliverNow POSTs body at once, retrying on the same schedule as queued
// deliveries, and returns when it was answered 200 or the last attempt
// failed. It returns the last attempt's error, ErrNoWebhookURL, or the
// context's error when ctx or the sender is stopped.
func (s *sender) deliverNow(ctx context.Context, body []byte) error {
	s.mu.Lock()
	s.begin()
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.end()
		s.mu.Unlock()
	}()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(s.ctx, cancel)
	defer stop()
	for attempt := 1; ; attempt++ {
		err := s.post(ctx, body)
		if err == nil || errors.Is(err, ErrNoWebhookURL) {
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if attempt >= s.attempts {
			s.mu.Lock()
			s.stats.Failed++
			s.mu.Unlock()
			return err
		}
		t := time.NewTimer(RetryDelay(attempt, s.base))
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

// post makes one signed POST. It fails on a transport error or any status
// other than 200.
func (s *sender) post(ctx context.Context, body []byte) error {
	url := s.url()
	if url == "" {
		return ErrNoWebhookURL
	}
	s.mu.Lock()
	s.stats.Attempts++
	s.mu.Unlock()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("simulator: webhook request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(SignatureHeader, Sign(s.secret, body))
	req.Header.Set("User-Agent", "facebookexternalua")
	resp, err := s.client.Do(req)
	if err != nil {
		return fmt.Errorf("simulator: webhook POST: %w", err)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("simulator: webhook POST answered %d", resp.StatusCode)
	}
	s.mu.Lock()
	s.stats.Delivered++
	s.mu.Unlock()
	return nil
}

// snapshot returns the counters.
func (s *sender) snapshot() WebhookStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stats
}

// waitIdle blocks until no job is pending. It returns ctx's error if ctx
// ends first, and ErrClosed once the sender is stopped.
func (s *sender) waitIdle(ctx context.Context) error {
	for {
		if s.ctx.Err() != nil {
			return ErrClosed
		}
		s.mu.Lock()
		idle := s.idle
		pending := s.stats.Pending
		s.mu.Unlock()
		if pending == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-s.ctx.Done():
			return ErrClosed
		case <-idle:
		}
	}
}
