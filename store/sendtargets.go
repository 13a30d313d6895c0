package store

import (
	"sync"
	"time"
)

// The send-target cache. Every live send reads the account's number and the templates it names
// (SendTarget); they change seldom (a template synced or paused, a number connected or
// disconnected), and reading them is a round trip and a statement per send. So while something
// tells the store of every change, SendTarget keeps its answers:
//
//   - the writes this store makes forget the account's answers once they commit
//     (targets.forget at each write of templates or connections);
//   - the writes other processes make reach it through the send_targets_changed notification
//     (migration 000029): the listener (server.TenantListener) calls ForgetSendTargets, and it
//     turns the cache on only once it listens and off when its connection fails
//     (CacheSendTargets), so a missed notification can never keep an answer;
//   - an answer read while a change was announced is not kept (the generation), and none is
//     kept longer than targetTTL in any case.
//
// So a change made through this store is seen by the next send at once, and one made elsewhere
// once its notification arrives (a few milliseconds). Answers that found no template are not
// kept: a template that appears is sendable at once.
const (
	targetTTL = time.Minute
	targetMax = 4096 // answers kept; the cache starts afresh when full
)

type targetKey struct {
	account, templateID int64
	name, language      string
}

type targetEntry struct {
	conn      Connection
	templates []Template
	at        time.Time
}

type targetCache struct {
	mu  sync.Mutex
	on  bool
	gen uint64 // bumped by every forget
	m   map[targetKey]targetEntry
}

// get returns the kept answer for k, or the generation to put a fresh one under.
func (c *targetCache) get(k targetKey) (targetEntry, uint64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[k]
	if ok && time.Since(e.at) >= targetTTL {
		delete(c.m, k)
		ok = false
	}
	return e, c.gen, ok && c.on
}

// put keeps e for k unless the cache is off or something was forgotten since gen.
func (c *targetCache) put(k targetKey, gen uint64, e targetEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.on || c.gen != gen {
		return
	}
	if c.m == nil || len(c.m) >= targetMax {
		c.m = map[targetKey]targetEntry{}
	}
	e.at = time.Now()
	c.m[k] = e
}

// forget drops the account's answers (every answer for 0).
func (c *targetCache) forget(accountID int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	if accountID == 0 {
		c.m = nil
		return
	}
	for k := range c.m {
		if k.account == accountID {
			delete(c.m, k)
		}
	}
}

// CacheSendTargets turns the send-target cache on or off; either way it starts empty. Turn it on
// only while every change of templates and connections made by other processes is heard and
// passed to ForgetSendTargets (server.TenantListener does both).
func (s *Store) CacheSendTargets(on bool) {
	s.targets.mu.Lock()
	s.targets.on = on
	s.targets.mu.Unlock()
	s.targets.forget(0)
}

// ForgetSendTargets drops the cached send targets of the account (of every account for 0).
func (s *Store) ForgetSendTargets(accountID int64) { s.targets.forget(accountID) }
