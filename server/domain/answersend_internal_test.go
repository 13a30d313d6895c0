package domain

import (
	"errors"
	"testing"
	"time"
)

// The platform's 131047 is an answer's window_closed, counted where it is met (Deliver), so the
// answer's front does not count it again; our own record of a closed window is counted by the
// front like any other refusal.
func TestWindowClosedCountedOnce(t *testing.T) {
	byPlatform := errWindowClosed(nil, &PlatformError{Outcome: PlatformRejected, Code: PlatformCodeOutsideWindow})
	if !outsideWindow(byPlatform) {
		t.Fatal("the platform's 131047 is not recognised through the SendError")
	}
	if counted(byPlatform) {
		t.Error("the platform's window_closed would be counted twice")
	}
	at := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	ours := errWindowClosed(&at, nil)
	if !counted(ours) {
		t.Error("our window_closed would not be counted")
	}
	if ours.Kind != KindConflict || ours.Code != CodeWindowClosed || ours.WindowClosedAt != &at {
		t.Errorf("window_closed refusal = %+v", ours)
	}
	if outsideWindow(&PlatformError{Outcome: PlatformRejected, Code: 131026}) || outsideWindow(errors.New("x")) {
		t.Error("another failure taken for a closed window")
	}
}

// An answer's payload names its kind as the message's type (message.sent's type).
func TestAnswerPayloadType(t *testing.T) {
	if got := (AnswerPayload{Answer: Answer{Type: AnswerImage}}).MessageType(); got != "image" {
		t.Errorf("MessageType = %q", got)
	}
}
