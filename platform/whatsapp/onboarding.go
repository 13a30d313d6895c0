package whatsapp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// The Graph calls a Tech Provider makes to onboard a business after Embedded Signup
// (reference §9): exchange the code for the business token, read the number,
// subscribe the app to the WABA's webhooks, register the number for Cloud API use.
// ListPhoneNumbers validates a pasted system-user token.

// phoneNumberFields are the fields PhoneNumber and PhoneNumbers ask for.
const phoneNumberFields = "display_phone_number,verified_name,quality_rating,code_verification_status,name_status,platform_type,throughput,messaging_limit_tier"

// maxPhoneNumberPages bounds PhoneNumbers against a platform that never stops paging.
const maxPhoneNumberPages = 100

// PhoneNumber is a business phone number as the platform describes it.
type PhoneNumber struct {
	ID                     string // phone number id
	DisplayPhoneNumber     string // as the platform formats it, e.g. "+1 555-078-3881"
	Digits                 string // DisplayPhoneNumber with everything but digits removed
	VerifiedName           string // the approved display name
	QualityRating          string // GREEN, YELLOW, RED, UNKNOWN, or "" when not reported
	CodeVerificationStatus string // e.g. VERIFIED, NOT_VERIFIED, EXPIRED
	NameStatus             string // e.g. APPROVED, PENDING_REVIEW, DECLINED
	PlatformType           string // CLOUD_API, ON_PREMISE, NOT_APPLICABLE
	MessagingLimitTier     string // e.g. TIER_1K, TIER_UNLIMITED, or "" when not reported
	ThroughputLevel        string // throughput.level, e.g. STANDARD, HIGH
}

type phoneNumberBody struct {
	ID                     flexString `json:"id"`
	DisplayPhoneNumber     string     `json:"display_phone_number"`
	VerifiedName           string     `json:"verified_name"`
	QualityRating          string     `json:"quality_rating"`
	CodeVerificationStatus string     `json:"code_verification_status"`
	NameStatus             string     `json:"name_status"`
	PlatformType           string     `json:"platform_type"`
	MessagingLimitTier     string     `json:"messaging_limit_tier"`
	Throughput             struct {
		Level string `json:"level"`
	} `json:"throughput"`
}

func (b phoneNumberBody) number() PhoneNumber {
	return PhoneNumber{
		ID:                     string(b.ID),
		DisplayPhoneNumber:     b.DisplayPhoneNumber,
		Digits:                 Digits(b.DisplayPhoneNumber),
		VerifiedName:           b.VerifiedName,
		QualityRating:          b.QualityRating,
		CodeVerificationStatus: b.CodeVerificationStatus,
		NameStatus:             b.NameStatus,
		PlatformType:           b.PlatformType,
		MessagingLimitTier:     b.MessagingLimitTier,
		ThroughputLevel:        b.Throughput.Level,
	}
}

// Digits returns s with every character but the ASCII digits removed
// ("+1 555-078-3881" → "15550783881").
func Digits(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] >= '0' && s[i] <= '9' {
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

// ExchangeCode trades the short-lived code Embedded Signup gave the browser (about 30 s,
// single use) for the business's access token: GET /oauth/access_token with client_id,
// client_secret and code, no bearer token. Errors are as for SendTemplate; an expired or
// used code is a *Error with Code 100 (OAuthException). Transport errors never carry the
// request URL, which holds the app secret.
func (c *Client) ExchangeCode(ctx context.Context, appID, appSecret, code string) (string, error) {
	for _, a := range []struct{ what, v string }{{"app id", appID}, {"app secret", appSecret}, {"code", code}} {
		if err := checkID(a.what, a.v); err != nil {
			return "", err
		}
	}
	u, err := c.endpoint("oauth", "access_token")
	if err != nil {
		return "", err
	}
	q := url.Values{"client_id": {appID}, "client_secret": {appSecret}, "code": {code}}
	data, err := c.do(ctx, http.MethodGet, u+"?"+q.Encode(), "", nil)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) && errors.Is(err, ErrUnavailable) {
			// Rebuilt without the query, which holds the secret and the code.
			return "", fmt.Errorf("%w: %s %q: %w", ErrUnavailable, ue.Op, u, ue.Err)
		}
		return "", err
	}
	var resp struct {
		AccessToken string `json:"access_token"`
		TokenType   string `json:"token_type"`
	}
	if err := lenientUnmarshal(data, &resp); err != nil {
		return "", fmt.Errorf("%w: %v", ErrMalformedResponse, err)
	}
	if resp.AccessToken == "" {
		return "", fmt.Errorf("%w: no access_token in answer", ErrMalformedResponse)
	}
	return resp.AccessToken, nil
}

// PhoneNumber reads a business phone number (display number, verified name, quality
// rating, messaging limit, ...). Errors are as for SendTemplate; an unknown id or one the
// token may not read is a *Error with Code 100 and Subcode 33.
func (c *Client) PhoneNumber(ctx context.Context, token, phoneNumberID string) (PhoneNumber, error) {
	if err := checkToken(token); err != nil {
		return PhoneNumber{}, err
	}
	if err := checkID("phone number id", phoneNumberID); err != nil {
		return PhoneNumber{}, err
	}
	u, err := c.endpoint(phoneNumberID)
	if err != nil {
		return PhoneNumber{}, err
	}
	data, err := c.do(ctx, http.MethodGet, u+"?"+url.Values{"fields": {phoneNumberFields}}.Encode(), token, nil)
	if err != nil {
		return PhoneNumber{}, err
	}
	var b phoneNumberBody
	if err := lenientUnmarshal(data, &b); err != nil {
		return PhoneNumber{}, fmt.Errorf("%w: %v", ErrMalformedResponse, err)
	}
	n := b.number()
	if n.ID == "" {
		n.ID = phoneNumberID
	}
	if n.Digits == "" {
		return PhoneNumber{}, fmt.Errorf("%w: no display_phone_number in answer", ErrMalformedResponse)
	}
	return n, nil
}

// PhoneNumbers lists the phone numbers of WhatsApp Business Account wabaID, following
// paging.next like ListTemplates. Errors are as for ListTemplates.
func (c *Client) PhoneNumbers(ctx context.Context, token, wabaID string) ([]PhoneNumber, error) {
	if err := checkToken(token); err != nil {
		return nil, err
	}
	if err := checkID("WABA id", wabaID); err != nil {
		return nil, err
	}
	endpoint, err := c.endpoint(wabaID, "phone_numbers")
	if err != nil {
		return nil, err
	}
	next := endpoint + "?" + url.Values{"fields": {"id," + phoneNumberFields}, "limit": {"100"}}.Encode()
	out := []PhoneNumber{}
	seen := map[string]bool{}
	for page := 0; next != ""; page++ {
		if page >= maxPhoneNumberPages || seen[next] {
			return nil, fmt.Errorf("%w: phone number paging does not end", ErrMalformedResponse)
		}
		seen[next] = true
		data, err := c.do(ctx, http.MethodGet, next, token, nil)
		if err != nil {
			return nil, err
		}
		var p struct {
			Data   []phoneNumberBody `json:"data"`
			Paging struct {
				Next string `json:"next"`
			} `json:"paging"`
		}
		if err := lenientUnmarshal(data, &p); err != nil {
			return nil, fmt.Errorf("%w: phone number page %d: %v", ErrMalformedResponse, page+1, err)
		}
		for _, b := range p.Data {
			out = append(out, b.number())
		}
		if next, err = c.nextPage(next, endpoint, p.Paging.Next); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// SubscribeApp subscribes the calling app to the webhooks of WhatsApp Business Account
// wabaID (POST /{waba-id}/subscribed_apps); without it no webhook for that WABA arrives.
// Subscribing again is harmless. Errors are as for SendTemplate.
func (c *Client) SubscribeApp(ctx context.Context, token, wabaID string) error {
	if err := checkToken(token); err != nil {
		return err
	}
	if err := checkID("WABA id", wabaID); err != nil {
		return err
	}
	u, err := c.endpoint(wabaID, "subscribed_apps")
	if err != nil {
		return err
	}
	data, err := c.do(ctx, http.MethodPost, u, token, nil)
	if err != nil {
		return err
	}
	return checkSuccess(data)
}

// RegisterNumber registers phoneNumberID for Cloud API use with the 6-digit two-step
// verification pin (POST /{phone-number-id}/register): the pin sets two-step verification,
// or must match the one set. Registering a registered number again with the same pin is
// harmless, but the platform allows about 10 registrations a week. Errors are as for
// SendTemplate; a wrong pin is a *Error with Code 133005. A pin that is not 6 digits is
// refused with ErrInvalidArgument before any request.
func (c *Client) RegisterNumber(ctx context.Context, token, phoneNumberID, pin string) error {
	if err := checkToken(token); err != nil {
		return err
	}
	if err := checkID("phone number id", phoneNumberID); err != nil {
		return err
	}
	if len(pin) != 6 || Digits(pin) != pin {
		return fmt.Errorf("%w: the two-step verification pin must be 6 digits", ErrInvalidArgument)
	}
	u, err := c.endpoint(phoneNumberID, "register")
	if err != nil {
		return err
	}
	body, err := marshalRequest(struct {
		MessagingProduct string `json:"messaging_product"`
		Pin              string `json:"pin"`
	}{"whatsapp", pin})
	if err != nil {
		return fmt.Errorf("%w: encode request: %v", ErrInvalidArgument, err)
	}
	data, err := c.do(ctx, http.MethodPost, u, token, body)
	if err != nil {
		return err
	}
	return checkSuccess(data)
}

// checkSuccess reads a {"success": true} answer.
func checkSuccess(data []byte) error {
	var resp struct {
		Success bool `json:"success"`
	}
	if err := lenientUnmarshal(data, &resp); err != nil {
		return fmt.Errorf("%w: %v", ErrMalformedResponse, err)
	}
	if !resp.Success {
		return fmt.Errorf("%w: answer does not say success", ErrMalformedResponse)
	}
	return nil
}
