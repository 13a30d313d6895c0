package domain

import (
	"cmp"
	"context"
	"log/slog"
	"strconv"
	"time"

	"gateway/store"
)

// Applying the platform's status reports to the messages the account sent. The API reads
// them from the platform's inbound webhook (server/platformhook.go: signature, parse, the
// account of the number) and hands each one here; where a report moves a message is the SQL of
// store/statuses.go (monotonic by rank, parked while the send is not recorded).
//
// Decisions:
//   - played (a voice message was played) is taken as read: it implies it, ranks like it, and
//     the API's statuses are sent, delivered, read and failed only.
//   - The first error of a failed status is kept on the message (code, title, details).
//   - A report without a timestamp the platform's format allows takes the clock's time.

// PlatformStatus is one delivery status report as the platform's webhook gave it.
type PlatformStatus struct {
	ID     string // the platform's message id (wamid)
	Status string // sent, delivered, read, failed or played
	// At is when the platform says it happened; zero when the report had no readable time.
	At time.Time
	// CallbackData is the report's biz_opaque_callback_data: our message id for our sends.
	CallbackData string
	// Error is the first error of a failed status, nil when none was given.
	Error *StatusError
	// Pricing is how the platform says it billed the message, nil when the report has none.
	Pricing *store.Pricing
}

// StatusError is an error the platform reported on a status.
type StatusError struct {
	Code    int
	Title   string
	Message string
	Details string
}

// Statuses applies status reports. Every field but Write is required for Apply; ApplyOne
// needs Write too.
type Statuses struct {
	Store *store.Store
	// Write applies single-status writes, concurrent ones sharing a statement (the API's group
	// commit over store.ApplyStatusWrites).
	Write func(store.StatusWrite) (store.StatusApplied, error)
	Log   *slog.Logger
	// Observe counts each report by what became of it: applied, ignored or parked.
	Observe func(outcome string)
	Now     func() time.Time
}

// ApplyOne applies a delivery that is exactly this one report: the raw body and the status
// change are written by one statement (Write), which concurrent deliveries share. It reports
// false, having written nothing, when the report cannot be applied (no id, an unknown status):
// the caller then keeps the body and applies the delivery item by item.
func (s *Statuses) ApplyOne(ctx context.Context, accountID int64, st PlatformStatus, body []byte) (bool, error) {
	r, ok := s.report(ctx, accountID, st)
	if !ok {
		return false, nil
	}
	w := store.StatusWrite{AccountID: accountID, Report: r, Body: body}
	a, err := s.Write(w)
	if err != nil {
		return false, err
	}
	res, err := s.Store.SettleStatus(ctx, w, a)
	if err != nil {
		return false, err
	}
	s.observe(ctx, accountID, r, res)
	return true, nil
}

// Apply applies one report of a delivery (store.ApplyStatus: monotonic, parked when the send
// is not recorded yet). A report without an id or with an unknown status is logged and
// ignored.
func (s *Statuses) Apply(ctx context.Context, accountID int64, st PlatformStatus) error {
	r, ok := s.report(ctx, accountID, st)
	if !ok {
		return nil
	}
	res, err := s.Store.ApplyStatus(ctx, accountID, r)
	if err != nil {
		return err
	}
	s.observe(ctx, accountID, r, res)
	return nil
}

// observe counts and logs what applying r did.
func (s *Statuses) observe(ctx context.Context, accountID int64, r store.StatusReport, res store.StatusResult) {
	if res.Adopted {
		s.Log.InfoContext(ctx, "platform webhook: send of unknown outcome confirmed by its callback data", "account_id", accountID,
			"message_id", r.CallbackMessageID, "wamid", r.PlatformMessageID, "status", r.Status)
	}
	switch {
	case res.Parked && !res.Found:
		s.Observe("parked")
	case res.Changed:
		s.Observe("applied")
	default:
		s.Observe("ignored")
	}
	if res.Parked && !res.Found {
		s.Log.InfoContext(ctx, "platform webhook: status parked until the send is recorded", "account_id", accountID,
			"wamid", r.PlatformMessageID, "status", r.Status)
	}
}

// report turns a platform status into the report the store applies; ok is false (and the
// status is logged and counted as ignored) for one without an id or with an unknown status.
func (s *Statuses) report(ctx context.Context, accountID int64, st PlatformStatus) (store.StatusReport, bool) {
	status := st.Status
	if status == "played" {
		status = "read"
	}
	if st.ID == "" || store.StatusRank(status) < 1 {
		s.Log.WarnContext(ctx, "platform webhook: status ignored", "account_id", accountID, "status", st.Status, "wamid", st.ID)
		s.Observe("ignored")
		return store.StatusReport{}, false
	}
	at := st.At
	if at.IsZero() {
		at = s.Now()
	}
	r := store.StatusReport{PlatformMessageID: st.ID, Status: status, OccurredAt: at, Pricing: st.Pricing}
	// Our sends carry our message id as biz_opaque_callback_data: it lets a report for an
	// unknown wamid adopt it (store.ApplyStatus).
	if id, err := strconv.ParseInt(st.CallbackData, 10, 64); err == nil && id > 0 {
		r.CallbackMessageID = id
	}
	if status == "failed" && st.Error != nil {
		e := st.Error
		code := e.Code
		r.ErrorCode = &code
		r.ErrorTitle = cmp.Or(e.Title, e.Message)
		r.ErrorDetails = e.Details
		if r.ErrorDetails == "" && e.Message != r.ErrorTitle {
			r.ErrorDetails = e.Message
		}
	}
	return r, true
}
