package store

import (
	"context"
	"errors"
	"sync"
)

// A message's campaign name, read beside the message without a join. A campaign's name never
// changes and a campaign is never deleted (no statement updates or deletes campaigns), so the
// name of (account, campaign id) is read once per process and kept: a poll of a message (the
// API's most frequent read) then costs no index scan of campaigns.

// campaignNameCap bounds the names kept; past it the cache starts again empty.
const campaignNameCap = 100_000

// campaignNames maps (account, campaign id) to the campaign's name.
type campaignNames struct {
	mu    sync.RWMutex
	names map[[2]int64]string
}

// withCampaignName sets m.CampaignName from its campaign_id: "" when the message has no
// campaign or the campaign is not there.
func (s *Store) withCampaignName(ctx context.Context, m *Message) error {
	if m.CampaignID == nil {
		return nil
	}
	key := [2]int64{m.AccountID, *m.CampaignID}
	c := &s.campaigns
	c.mu.RLock()
	name, ok := c.names[key]
	c.mu.RUnlock()
	if ok {
		m.CampaignName = name
		return nil
	}
	err := s.getPrepared(ctx, &name, `SELECT name FROM campaigns WHERE account_id = $1 AND id = $2`, key[0], key[1])
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	c.mu.Lock()
	if c.names == nil || len(c.names) >= campaignNameCap {
		c.names = make(map[[2]int64]string)
	}
	c.names[key] = name
	c.mu.Unlock()
	m.CampaignName = name
	return nil
}
