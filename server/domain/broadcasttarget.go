package domain

import (
	"context"
	"errors"

	"gateway/store"
)

// BroadcastTemplate is what a live key's broadcast sends: the account's number and its approved
// template of that name and language, picked as a template send picks it.
func (s *Sends) BroadcastTemplate(ctx context.Context, accountID int64, name, language string) (store.Connection, store.Template, error) {
	conn, candidates, err := s.cfg.Store.SendTarget(ctx, accountID, 0, name, language)
	if errors.Is(err, store.ErrNotFound) {
		return conn, store.Template{}, errNotConnected()
	}
	if err != nil {
		return conn, store.Template{}, err
	}
	tpl, fail := pickByName(candidates, name, language)
	if fail != nil {
		return conn, store.Template{}, fail
	}
	return conn, tpl, nil
}

// FixtureTemplate is what a test or demo key's broadcast sends: test mode's fixture template of
// that name and language.
func (s *Sends) FixtureTemplate(name, language string) (store.Template, error) {
	tpl, fail := s.resolveFixture(TemplateSend{TemplateName: &name, Language: language})
	if fail != nil {
		return tpl, fail
	}
	return tpl, nil
}

// TestPlatformID is a made-up platform message id, as a simulated send answers with.
func TestPlatformID() string { return testWamid() }
