package broadcast

import (
	"errors"
	"time"

	"gateway/platform/whatsapp"
	"gateway/store"
)

// What a verdict pauses besides the recipient.
const (
	PauseNone     = ""
	PauseTemplate = "template" // every broadcast of the account using the template
	PauseAccount  = "account"  // every broadcast of the account
)

// Verdict is what the engine does with a recipient whose platform call failed.
type Verdict struct {
	State      string        // store.RecipientPending (call again after RetryIn), Failed or Unknown
	RetryIn    time.Duration // for Pending
	NoRetryFor time.Duration // the person must not be tried again for this long (131049)
	HoldNumber time.Duration // no send from the number for this long
	Pause      string        // PauseNone, PauseTemplate or PauseAccount
	Code       *int          // the platform's error code, when it gave one
	Title      string        // why, for the recipient's failure
}

// errPaceMissed wraps the error of a Sender's call stopped at the engine's pace gate
// (Message.BeforeCall failed: the call's time ran out before the number's pace let it go).
// By BeforeCall's contract nothing was sent.
var errPaceMissed = errors.New("broadcast: the call's time ran out waiting for the number's pace")

// Classify turns a Sender's error for a recipient's attempt-th call into a verdict, as the
// platform reference's bulk-sending section says: back off and retry 130429, 131056 (4^n s),
// 131057 (about 60 s) and 131048; no retry within 24 h for 131049; pause every broadcast
// using a paused template (132015) and every broadcast of an account the platform stops for
// payment (131042), keeping the recipient for the resume; record other refusals as failures.
// A refusal for a passing reason becomes a failure after maxAttempts calls. A call the
// engine's pace gate stopped (nothing sent) is due again in a second, within the same bound.
func Classify(err error, attempt, maxAttempts int) Verdict {
	if errors.Is(err, errPaceMissed) {
		if attempt >= maxAttempts {
			return Verdict{State: store.RecipientFailed, Title: err.Error()}
		}
		return Verdict{State: store.RecipientPending, RetryIn: time.Second, Title: err.Error()}
	}
	var pe *whatsapp.Error
	switch {
	case errors.As(err, &pe):
	case errors.Is(err, ErrNotSent), errors.Is(err, whatsapp.ErrInvalidArgument):
		return Verdict{State: store.RecipientFailed, Title: err.Error()}
	default:
		return Verdict{State: store.RecipientUnknown, Title: "outcome unknown: " + err.Error()}
	}
	code := pe.Code
	v := Verdict{Code: &code, Title: pe.Reason()}
	retry := func(in time.Duration) Verdict {
		if attempt >= maxAttempts {
			v.State = store.RecipientFailed
			return v
		}
		v.State, v.RetryIn = store.RecipientPending, in
		return v
	}
	switch code {
	case 130429: // throughput: the number is over its rate
		v.HoldNumber = time.Second
		return retry(time.Second)
	case 131056: // pair rate: 1, 4, 16, 64 ... s
		return retry(pow4(attempt))
	case 131057: // throughput upgrade in progress
		v.HoldNumber = time.Minute
		return retry(time.Minute)
	case 131048: // spam rate limit: slow the whole number
		v.HoldNumber = 10 * time.Second
		return retry(time.Minute)
	case 131049: // per-user marketing limit
		v.State, v.NoRetryFor = store.RecipientFailed, 24*time.Hour
		return v
	case 132015: // template paused for quality
		v.State, v.Pause = store.RecipientPending, PauseTemplate
		return v
	case 131042: // payment: the account cannot send
		v.State, v.Pause = store.RecipientPending, PauseAccount
		return v
	}
	if pe.HTTPStatus >= 500 || pe.Transient {
		return retry(pow4(attempt))
	}
	v.State = store.RecipientFailed
	return v
}

// pow4 is 4^(n-1) seconds, at most 256 s.
func pow4(n int) time.Duration {
	d := time.Second
	for i := 1; i < n && d < 256*time.Second; i++ {
		d *= 4
	}
	return min(d, 256*time.Second)
}
