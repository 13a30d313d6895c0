package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"

	"gateway/platform/whatsapp"
	"gateway/server/domain"
)

// A live key's media reach the platform, a test or demo key's the fixture and the simulated
// upload.
func TestModeForSelectsMedia(t *testing.T) {
	s := &Server{}
	for mode, live := range map[string]bool{domain.ModeLive: true, domain.ModeTest: false, domain.ModeDemo: false} {
		km := s.modeFor(mode)
		_, isLive := km.media.(liveMedia)
		_, isTest := km.media.(testMedia)
		if isLive != live || isTest == live {
			t.Errorf("%s: media %T", mode, km.media)
		}
	}
}

// The platform client's errors become the domain's: a timeout (the client's deadline, however
// wrapped), a lookup of media the platform does not have (code 100 or a 404), any other refusal
// with its code; an upload's code 100 is a refusal, not a missing media id.
func TestMediaPlatformError(t *testing.T) {
	timeout := fmt.Errorf("%w: no answer within the client timeout: %w", whatsapp.ErrUnavailable, context.DeadlineExceeded)
	unknown := &whatsapp.Error{HTTPStatus: http.StatusBadRequest, Code: 100, Message: "Unsupported get request"}
	expired := &whatsapp.Error{HTTPStatus: http.StatusNotFound, Code: 0, Message: "Media URL expired"}
	token := &whatsapp.Error{HTTPStatus: http.StatusUnauthorized, Code: 190, Message: "Error validating access token"}
	down := fmt.Errorf("%w: connection refused", whatsapp.ErrUnavailable)
	var pr *domain.PlatformRefusal
	for _, c := range []struct {
		err    error
		lookup bool
		check  func(error) bool
	}{
		{timeout, true, func(e error) bool { return errors.Is(e, domain.ErrPlatformTimeout) }},
		{timeout, false, func(e error) bool { return errors.Is(e, domain.ErrPlatformTimeout) }},
		{unknown, true, func(e error) bool { return errors.Is(e, domain.ErrPlatformNoMedia) }},
		{expired, true, func(e error) bool { return errors.Is(e, domain.ErrPlatformNoMedia) }},
		{unknown, false, func(e error) bool { return errors.As(e, &pr) && pr.Code == 100 }},
		{token, true, func(e error) bool { return errors.As(e, &pr) && pr.Code == 190 && pr.Message == token.Message }},
		{down, true, func(e error) bool {
			return !errors.Is(e, domain.ErrPlatformTimeout) && !errors.Is(e, domain.ErrPlatformNoMedia) && !errors.As(e, &pr)
		}},
	} {
		if got := mediaPlatformError(c.err, c.lookup); !c.check(got) {
			t.Errorf("%v (lookup %t) became %v", c.err, c.lookup, got)
		}
	}
}
