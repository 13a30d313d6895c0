package store

import "testing"

// An answer read while a change was announced is not kept: its put carries the generation
// that get handed out before the read, and the forget bumped it.
func TestTargetCacheDropsAnswersReadAcrossAForget(t *testing.T) {
	var c targetCache
	c.on = true
	k := targetKey{account: 1, name: "reminder"}
	_, gen, ok := c.get(k)
	if ok {
		t.Fatal("an empty cache answered")
	}
	c.forget(2) // any account's change, announced while the read ran
	c.put(k, gen, targetEntry{templates: []Template{{ID: 1}}})
	if _, _, ok := c.get(k); ok {
		t.Fatal("an answer read across a forget was kept")
	}
	_, gen, _ = c.get(k)
	c.put(k, gen, targetEntry{templates: []Template{{ID: 1}}})
	if e, _, ok := c.get(k); !ok || e.templates[0].ID != 1 {
		t.Fatal("a fresh answer was not kept")
	}
}
