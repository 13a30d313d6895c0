// Package onboarding connects a workspace's WhatsApp number as a Tech Provider does
// (reference §9): after Embedded Signup in the browser, the server exchanges the code for the
// business token, reads the number, subscribes our app to the WABA's webhooks, registers the
// number with a two-step pin, stores the connection (token sealed) and syncs the templates.
// A system-user token can be connected instead, validated against the platform first.
//
// Every step is safe to repeat: the code's token is remembered for a while (the code itself is
// single use), subscribing again is harmless, and a number is always registered with the pin
// stored for it. A failure is a *StepError naming the step and carrying the platform's reason.
package onboarding

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"gateway/platform/whatsapp"
	"gateway/store"
)

// Platform is what onboarding needs of the messaging platform; *whatsapp.Client implements it.
type Platform interface {
	ExchangeCode(ctx context.Context, appID, appSecret, code string) (string, error)
	PhoneNumber(ctx context.Context, token, phoneNumberID string) (whatsapp.PhoneNumber, error)
	PhoneNumbers(ctx context.Context, token, wabaID string) ([]whatsapp.PhoneNumber, error)
	SubscribeApp(ctx context.Context, token, wabaID string) error
	RegisterNumber(ctx context.Context, token, phoneNumberID, pin string) error
}

var _ Platform = (*whatsapp.Client)(nil)

// The steps, as StepError.Step names them.
const (
	StepExchangeCode  = "exchanging the sign-up code"
	StepReadNumber    = "reading the number"
	StepListNumbers   = "listing the WhatsApp Business Account's numbers"
	StepSubscribeApp  = "subscribing to the WhatsApp Business Account's webhooks"
	StepRegister      = "registering the number"
	StepSave          = "saving the connection"
	StepSyncTemplates = "syncing templates"
)

// ErrNumberNotInWABA: the phone number id is not one of the WABA's numbers.
var ErrNumberNotInWABA = errors.New("the phone number does not belong to that WhatsApp Business Account")

// ErrNumberTaken: another workspace has the number connected.
var ErrNumberTaken = errors.New("the number is connected to another workspace")

// StepError is a failed step. Its text is "<step>: <reason>", e.g. "registering the number:
// (#133005) Two step verification PIN Mismatch: ...", fit to show the business.
type StepError struct {
	Step string
	Err  error // a *whatsapp.Error, an error wrapping whatsapp.ErrUnavailable, a store error, ...
}

func (e *StepError) Error() string { return e.Step + ": " + Reason(e.Err) }

// Unwrap returns the underlying error.
func (e *StepError) Unwrap() error { return e.Err }

// Reason describes err for a person: the platform's own message and details for a platform
// error, a plain sentence for an unreachable platform, err's text otherwise.
func Reason(err error) string {
	var pe *whatsapp.Error
	switch {
	case errors.As(err, &pe):
		msg := pe.Message
		if pe.Details != "" && pe.Details != msg {
			msg += ": " + pe.Details
		}
		return msg
	case whatsapp.IsTimeout(err):
		return "the platform did not answer in time; try again"
	case errors.Is(err, whatsapp.ErrUnavailable):
		return "the platform could not be reached; try again"
	case errors.Is(err, store.ErrConflict):
		return ErrNumberTaken.Error()
	}
	return err.Error()
}

// codeTokenTTL is how long the token of an exchanged code is remembered, so that retrying a
// connect with the same (single-use) code resumes after the exchange.
const codeTokenTTL = 15 * time.Minute

// Service connects numbers. Set Store, Platform, AppID and AppSecret; the rest is optional.
// The zero value of the unexported state is ready; a Service must not be copied after use.
type Service struct {
	Store     *store.Store
	Platform  Platform
	AppID     string // the platform app's id (PLATFORM_APP_ID)
	AppSecret string // the platform app's secret (PLATFORM_APP_SECRET)
	// ConfigID is the Embedded Signup configuration id FB.login needs (PLATFORM_ES_CONFIG_ID),
	// and SDKURL where the page loads the platform's JavaScript SDK from (PLATFORM_SDK_URL);
	// the connect page renders both, the service itself does not use them.
	ConfigID string
	SDKURL   string
	// SyncTemplates pulls the account's templates after a connect (nil = skipped).
	SyncTemplates func(ctx context.Context, accountID int64) error
	// NewPIN returns a fresh 6-digit two-step verification pin (nil = crypto/rand).
	NewPIN func() (string, error)
	// Clock gives the time (nil = time.Now).
	Clock func() time.Time
	// Changed is called after a number is connected or disconnected, with the phone number
	// ids whose routing changed (server wires it to drop its phone number id → tenant cache).
	Changed func(phoneNumberIDs ...string)

	mu    sync.Mutex
	codes map[[32]byte]exchanged // by SHA-256 of the account id and the code
}

type exchanged struct {
	token string
	at    time.Time
}

func (s *Service) now() time.Time {
	if s.Clock != nil {
		return s.Clock()
	}
	return time.Now()
}

// ConnectWithCode finishes Embedded Signup for the account: it exchanges code for the
// business token, reads the number (and checks it is one of wabaID's numbers), subscribes the
// app to wabaID, registers the number (with
// the pin stored for it, created on first use), saves the connection and syncs templates. On
// failure it returns a *StepError; when only the template sync failed the connection is saved
// and returned with the error. Retrying with the same code within 15 minutes resumes.
func (s *Service) ConnectWithCode(ctx context.Context, accountID int64, code, wabaID, phoneNumberID string) (store.Connection, error) {
	code, wabaID, phoneNumberID = strings.TrimSpace(code), strings.TrimSpace(wabaID), strings.TrimSpace(phoneNumberID)
	if code == "" || wabaID == "" || phoneNumberID == "" {
		return store.Connection{}, &StepError{StepExchangeCode, errors.New("the sign-up code, WABA id and phone number id are required")}
	}
	token, err := s.exchange(ctx, accountID, code)
	if err != nil {
		return store.Connection{}, &StepError{StepExchangeCode, err}
	}
	num, err := s.readNumber(ctx, token, wabaID, phoneNumberID)
	if err != nil {
		return store.Connection{}, err
	}
	if err := s.Platform.SubscribeApp(ctx, token, wabaID); err != nil {
		return store.Connection{}, &StepError{StepSubscribeApp, err}
	}
	if err := s.register(ctx, token, phoneNumberID); err != nil {
		return store.Connection{}, err
	}
	return s.save(ctx, accountID, wabaID, token, num)
}

// ConnectWithToken connects a number with a system-user token: it reads the number, checks
// that phoneNumberID is one of wabaID's numbers, subscribes the app to wabaID, saves the
// connection and syncs templates. It does not register the number (a number used with a
// system-user token is registered already). Failures are as for ConnectWithCode.
func (s *Service) ConnectWithToken(ctx context.Context, accountID int64, wabaID, phoneNumberID, token string) (store.Connection, error) {
	wabaID, phoneNumberID, token = strings.TrimSpace(wabaID), strings.TrimSpace(phoneNumberID), strings.TrimSpace(token)
	if wabaID == "" || phoneNumberID == "" || token == "" {
		return store.Connection{}, &StepError{StepReadNumber, errors.New("the WABA id, phone number id and token are required")}
	}
	num, err := s.readNumber(ctx, token, wabaID, phoneNumberID)
	if err != nil {
		return store.Connection{}, err
	}
	if err := s.Platform.SubscribeApp(ctx, token, wabaID); err != nil {
		return store.Connection{}, &StepError{StepSubscribeApp, err}
	}
	return s.save(ctx, accountID, wabaID, token, num)
}

// readNumber reads the number and checks that it is one of the WABA's numbers.
func (s *Service) readNumber(ctx context.Context, token, wabaID, phoneNumberID string) (whatsapp.PhoneNumber, error) {
	num, err := s.Platform.PhoneNumber(ctx, token, phoneNumberID)
	if err != nil {
		return whatsapp.PhoneNumber{}, &StepError{StepReadNumber, err}
	}
	list, err := s.Platform.PhoneNumbers(ctx, token, wabaID)
	if err != nil {
		return whatsapp.PhoneNumber{}, &StepError{StepListNumbers, err}
	}
	if !slices.ContainsFunc(list, func(n whatsapp.PhoneNumber) bool { return n.ID == phoneNumberID }) {
		return whatsapp.PhoneNumber{}, &StepError{StepListNumbers, ErrNumberNotInWABA}
	}
	return num, nil
}

// Disconnect removes the account's number (store.ErrNotFound when none is connected) and
// reports the change through Changed.
func (s *Service) Disconnect(ctx context.Context, accountID int64) error {
	old, err := s.Store.ConnectionByAccount(ctx, accountID)
	if err != nil {
		return err
	}
	if err := s.Store.DisconnectNumber(ctx, accountID); err != nil {
		return err
	}
	s.changed(old.PhoneNumberID)
	return nil
}

func (s *Service) changed(ids ...string) {
	if s.Changed != nil {
		s.Changed(ids...)
	}
}

// exchange returns the token for code, from the platform or, for a code the same account
// exchanged recently, from memory.
func (s *Service) exchange(ctx context.Context, accountID int64, code string) (string, error) {
	key := sha256.Sum256([]byte(strconv.FormatInt(accountID, 10) + "\x00" + code))
	now := s.now()
	s.mu.Lock()
	for k, e := range s.codes {
		if now.Sub(e.at) > codeTokenTTL {
			delete(s.codes, k)
		}
	}
	e, ok := s.codes[key]
	s.mu.Unlock()
	if ok {
		return e.token, nil
	}
	token, err := s.Platform.ExchangeCode(ctx, s.AppID, s.AppSecret, code)
	if err != nil {
		return "", err
	}
	s.mu.Lock()
	if s.codes == nil {
		s.codes = map[[32]byte]exchanged{}
	}
	s.codes[key] = exchanged{token: token, at: now}
	s.mu.Unlock()
	return token, nil
}

// register registers the number with its stored pin (created on first use).
func (s *Service) register(ctx context.Context, token, phoneNumberID string) error {
	newPIN := s.NewPIN
	if newPIN == nil {
		newPIN = randomPIN
	}
	fresh, err := newPIN()
	if err != nil {
		return &StepError{StepRegister, fmt.Errorf("generate a pin: %w", err)}
	}
	pin, err := s.Store.NumberPIN(ctx, phoneNumberID, fresh)
	if err != nil {
		return &StepError{StepRegister, err}
	}
	if err := s.Platform.RegisterNumber(ctx, token, phoneNumberID, pin); err != nil {
		return &StepError{StepRegister, err}
	}
	return nil
}

// save stores the connection with the number's details and syncs templates.
func (s *Service) save(ctx context.Context, accountID int64, wabaID, token string, num whatsapp.PhoneNumber) (store.Connection, error) {
	var previous string
	if old, err := s.Store.ConnectionByAccount(ctx, accountID); err == nil {
		previous = old.PhoneNumberID
	}
	d, err := s.Store.ConnectNumberDetails(ctx, store.ConnectionDetails{
		Connection: store.Connection{
			AccountID:     accountID,
			WabaID:        wabaID,
			PhoneNumberID: num.ID,
			PhoneNumber:   num.Digits,
			DisplayName:   num.VerifiedName,
			AccessToken:   token,
		},
		QualityRating:  num.QualityRating,
		MessagingLimit: num.MessagingLimitTier,
	})
	if err != nil {
		if errors.Is(err, store.ErrConflict) {
			err = fmt.Errorf("%w: %w", ErrNumberTaken, err)
		}
		return store.Connection{}, &StepError{StepSave, err}
	}
	s.changed(slices.Compact([]string{num.ID, previous})...)
	if s.SyncTemplates != nil {
		if err := s.SyncTemplates(ctx, accountID); err != nil {
			return d.Connection, &StepError{StepSyncTemplates, err}
		}
	}
	return d.Connection, nil
}

// randomPIN returns 6 random digits.
func randomPIN() (string, error) {
	n, err := rand.Int(rand.Reader, big.NewInt(1_000_000))
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%06d", n.Int64()), nil
}

// Refresh reads the account's connected number from the platform again and stores its quality
// rating and messaging limit (after a phone_number_quality_update webhook). It returns
// store.ErrNotFound when no number is connected (or it changed meanwhile), a *StepError
// (StepReadNumber) when the platform fails, or the store's error.
func (s *Service) Refresh(ctx context.Context, accountID int64) (store.ConnectionDetails, error) {
	c, err := s.Store.ConnectionByAccount(ctx, accountID)
	if err != nil {
		return store.ConnectionDetails{}, err
	}
	num, err := s.Platform.PhoneNumber(ctx, c.AccessToken, c.PhoneNumberID)
	if err != nil {
		return store.ConnectionDetails{}, &StepError{StepReadNumber, err}
	}
	if err := s.Store.UpdateConnectionDetails(ctx, accountID, c.PhoneNumberID, num.QualityRating, num.MessagingLimitTier); err != nil {
		return store.ConnectionDetails{}, err
	}
	return store.ConnectionDetails{Connection: c, QualityRating: num.QualityRating, MessagingLimit: num.MessagingLimitTier}, nil
}
