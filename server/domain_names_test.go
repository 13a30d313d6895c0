package server

import (
	"strconv"
	"testing"

	"gateway/gen"
	"gateway/platform/whatsapp"
	"gateway/server/domain"
)

// The domain names the API's error codes and the platform's button types without importing
// gen or platform/whatsapp (TestLayering); they must stay equal to theirs.
func TestDomainNamesAgree(t *testing.T) {
	t.Parallel()
	for _, c := range [][2]string{
		{domain.CodeValidationFailed, string(gen.ErrorCodeValidationFailed)},
		{domain.CodeTemplateNotFound, string(gen.ErrorCodeTemplateNotFound)},
		{domain.CodeNumberNotConnected, string(gen.ErrorCodeNumberNotConnected)},
		{domain.CodeContactBlocked, string(gen.ErrorCodeContactBlocked)},
		{domain.CodePlatformRejected, string(gen.ErrorCodePlatformRejected)},
		{domain.CodePlatformUnavailable, string(gen.ErrorCodePlatformUnavailable)},
		{domain.CodeIdempotencyConflict, string(gen.ErrorCodeIdempotencyConflict)},
		{domain.CodeWindowClosed, string(gen.ErrorCodeWindowClosed)},
		{strconv.Itoa(domain.PlatformCodeOutsideWindow), strconv.Itoa(whatsapp.CodeReengagement)},
		{domain.ButtonURL, whatsapp.ButtonURL},
		{domain.ButtonQuickReply, whatsapp.ButtonQuickReply},
		{domain.ButtonCopyCode, whatsapp.ButtonCopyCode},
		{domain.ButtonOTP, whatsapp.ButtonOTP},
	} {
		if c[0] != c[1] {
			t.Errorf("the domain says %q, its source %q", c[0], c[1])
		}
	}
	if domain.MaxCouponCode != whatsapp.MaxCouponCode {
		t.Errorf("MaxCouponCode %d, the platform's %d", domain.MaxCouponCode, whatsapp.MaxCouponCode)
	}
}
