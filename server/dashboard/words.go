package dashboard

import (
	"regexp"
	"strconv"
	"strings"

	"gateway/server/domain"
	"gateway/store"
)

// The platform's codes in words. Pages show the words, with the raw code kept in a details line
// for a developer. Each table is written once here and used by every page.

// settingNote is a parenthesis of an error text that names a server setting (an environment
// variable such as GATEWAY_WEBHOOK_ALLOW_PRIVATE), which means nothing to a business.
var settingNote = regexp.MustCompile(`\s*\([^()]*\b(?:GATEWAY|PLATFORM|DATABASE)_[A-Z_]+[^()]*\)`)

// plainSetting removes the setting notes from an error text meant for a business's page.
func plainSetting(msg string) string { return settingNote.ReplaceAllString(msg, "") }

// label is a code in words with the badge tone it is shown in.
type label struct {
	Code, Text string
	// Tone is the badge's class: ok (green), good (dark green), info (blue), warn (amber),
	// fail (red) or neutral (grey).
	Tone string
}

var qualityWords = map[string]label{
	"GREEN":   {Text: "High quality", Tone: "ok"},
	"YELLOW":  {Text: "Medium quality", Tone: "warn"},
	"RED":     {Text: "Low quality", Tone: "fail"},
	"UNKNOWN": {Text: "Not rated yet", Tone: "neutral"},
}

var limitWords = map[string]string{
	"TIER_50":        "50 customers a day",
	"TIER_250":       "250 customers a day",
	"TIER_1K":        "1,000 customers a day",
	"TIER_2K":        "2,000 customers a day",
	"TIER_10K":       "10,000 customers a day",
	"TIER_100K":      "100,000 customers a day",
	"TIER_UNLIMITED": "Unlimited customers a day",
}

var templateStatusWords = map[string]label{
	"APPROVED":       {Text: "Approved", Tone: "ok"},
	"PENDING":        {Text: "In review", Tone: "warn"},
	"IN_APPEAL":      {Text: "In appeal", Tone: "warn"},
	"PAUSED":         {Text: "Paused", Tone: "warn"},
	"REJECTED":       {Text: "Rejected", Tone: "fail"},
	"DISABLED":       {Text: "Disabled", Tone: "fail"},
	"LIMIT_EXCEEDED": {Text: "Limit exceeded", Tone: "fail"},
}

var rejectionWords = map[string]string{
	"ABUSIVE_CONTENT":      "Abusive content",
	"INCORRECT_CATEGORY":   "Wrong category",
	"INVALID_FORMAT":       "Invalid format",
	"PROMOTIONAL":          "Promotional content",
	"SCAM":                 "Looks like a scam",
	"TAG_CONTENT_MISMATCH": "Content does not match the category",
}

var categoryWords = map[string]string{
	"MARKETING":      "Marketing",
	"UTILITY":        "Utility",
	"AUTHENTICATION": "Authentication",
}

var messageStatusWords = map[string]label{
	"pending":   {Text: "Waiting", Tone: "neutral"},
	"accepted":  {Text: "Waiting", Tone: "neutral"},
	"sent":      {Text: "Sent", Tone: "info"},
	"delivered": {Text: "Delivered", Tone: "ok"},
	"read":      {Text: "Read", Tone: "good"},
	"failed":    {Text: "Failed", Tone: "fail"},
	"received":  {Text: "Received", Tone: "neutral"},
}

// platformErrors are the common error codes of a failed message (the platform's reference):
// what happened and what to do next, in words.
var platformErrors = map[int]struct{ What, Next string }{
	131026: {"The message could not be delivered: the number may not be on WhatsApp, may use an old version, or may have blocked you.",
		"Check the number with the customer; do not resend until it is confirmed."},
	131047: {"More than 24 hours passed since the customer last wrote, so only a template can start the conversation.",
		"Send an approved template instead."},
	131049: {"WhatsApp held the message back to keep the customer from receiving too many marketing messages.",
		"Do not resend now; try again after at least a day."},
	131050: {"The customer stopped marketing messages from your business.",
		"Do not send marketing to this customer; utility messages still reach them."},
	131056: {"Too many messages to this customer in a short time.",
		"Wait a few seconds before the next message to this customer."},
	131048: {"Sending was limited because of your number's quality.",
		"Pause the campaign and review the messages customers reported."},
	131030: {"The number is not in your test number's allowed list.",
		"Add the number to the allowed list in WhatsApp Manager, or send from your live number."},
	131021: {"You sent a message to your own business number.", "Use the customer's number."},
	131051: {"This kind of message is not supported.", "Send a text or a template instead."},
	131052: {"The media could not be downloaded.", "Check that the media link is public and works, then send again."},
	131053: {"The media could not be uploaded.", "Check the file's type and size, then send again."},
	131000: {"Something went wrong on WhatsApp's side.", "Send again in a few minutes."},
	131016: {"WhatsApp was unavailable.", "Send again in a few minutes."},
	131057: {"Your number is in maintenance.", "Send again in a few minutes."},
	131042: {"There is a payment problem with your WhatsApp Business Account.", "Check the payment method in Meta Business Suite."},
	131031: {"Your WhatsApp Business Account is locked.", "Check Meta Business Suite's account quality page."},
	132000: {"The number of variables does not match the template.", "Fill every variable the template has."},
	132001: {"The template does not exist in this language or is not approved.", "Sync the templates and choose an approved one."},
	132005: {"The text with its variables filled is too long.", "Use shorter variable values."},
	132007: {"The text breaks WhatsApp's formatting rules.", "Remove the characters the template does not allow."},
	132012: {"A variable has the wrong format.", "Check each variable's value against the template."},
	132015: {"The template is paused because of low quality.", "Use another template or wait until it is active again."},
	132016: {"The template is disabled.", "Use another template."},
	133010: {"Your number is not registered with WhatsApp.", "Reconnect your number from the overview."},
	130472: {"The customer's number is part of a WhatsApp experiment and cannot receive this message.", "Try another channel for this customer."},
}

// errorAdvice is a failed message's code in words with the next step; ok is false for a code the
// table lacks (the page then shows the platform's own title and details).
func errorAdvice(code *int) (what, next string, ok bool) {
	if code == nil {
		return "", "", false
	}
	e, ok := platformErrors[*code]
	return e.What, e.Next, ok
}

// codeOf reads an error code given as int (0: none) or *int.
func codeOf(v any) *int {
	switch c := v.(type) {
	case *int:
		return c
	case int:
		if c != 0 {
			return &c
		}
	}
	return nil
}

func lookupLabel(m map[string]label, code string) label {
	if l, ok := m[code]; ok {
		l.Code = code
		return l
	}
	return label{Code: code, Text: humanize(code), Tone: "neutral"}
}

// humanize turns an unknown code such as SOME_NEW_STATE into "Some new state".
func humanize(code string) string {
	s := strings.ToLower(strings.ReplaceAll(code, "_", " "))
	if s == "" {
		return ""
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func orHumanize(m map[string]string, code string) string {
	if v, ok := m[code]; ok {
		return v
	}
	return humanize(code)
}

var auditActionWords = map[string]string{
	store.AuditKeyCreated:          "API key created",
	store.AuditKeyRevoked:          "API key revoked",
	store.AuditWebhookAdded:        "Webhook endpoint added",
	store.AuditWebhookRotated:      "Webhook secret rotated",
	store.AuditWebhookDeleted:      "Webhook endpoint deleted",
	store.AuditWebhookEnabled:      "Webhook endpoint enabled",
	store.AuditWebhookDisabled:     "Webhook endpoint disabled",
	store.AuditWebhookEvents:       "Webhook events changed",
	store.AuditNumberConnected:     "Number connected",
	store.AuditNumberDisconnect:    "Number disconnected",
	store.AuditUserInvited:         "Teammate invited",
	store.AuditPasswordChanged:     "Password changed",
	store.AuditWorkspaceCreated:    "Workspace created",
	store.AuditInvitationAccepted:  "Invitation accepted",
	store.AuditContactUpdated:      "Contact edited",
	store.AuditContactBlocked:      "Contact blocked",
	store.AuditContactUnblocked:    "Contact unblocked",
	domain.AuditBroadcastStarted:   "Broadcast started",
	domain.AuditBroadcastPaused:    "Broadcast paused",
	domain.AuditBroadcastResumed:   "Broadcast resumed",
	domain.AuditBroadcastCancelled: "Broadcast cancelled",
}

// auditWho names who did an audited action: the member's email, the contact for its own STOP or
// START, else the operator (a command on the server).
func auditWho(e store.AuditEntry) string {
	switch {
	case e.UserEmail != "":
		return e.UserEmail
	case e.Detail == store.OptOutDetail || e.Detail == store.OptInDetail:
		return "The contact"
	}
	return "Operator"
}

// wordFuncs are the template functions that put codes in words.
var wordFuncs = map[string]any{
	"quality":        func(code string) label { return lookupLabel(qualityWords, code) },
	"limit":          func(code string) string { return orHumanize(limitWords, code) },
	"templateStatus": func(code string) label { return lookupLabel(templateStatusWords, code) },
	"rejection":      func(code string) string { return orHumanize(rejectionWords, code) },
	"category":       func(code string) string { return orHumanize(categoryWords, code) },
	"messageStatus":  func(code string) label { return lookupLabel(messageStatusWords, code) },
	"errorWhat": func(code any) string {
		w, _, _ := errorAdvice(codeOf(code))
		return w
	},
	"errorNext": func(code any) string {
		_, n, _ := errorAdvice(codeOf(code))
		return n
	},
	"itoa":        strconv.Itoa,
	"auditAction": func(code string) string { return orHumanize(auditActionWords, code) },
	"auditWho":    auditWho,
	"campaign":    campaignLabel,
	"health":      healthOf,
	"phone":       domain.FormatMobile,
	"thousands":   thousands,
	"messageType": func(kind string) string { return orHumanize(messageTypeWords, kind) },
}

// messageTypeWords name the kinds of message that carry no template (a customer's messages).
var messageTypeWords = map[string]string{
	"text":        "Text message",
	"image":       "Photo",
	"video":       "Video",
	"audio":       "Voice or audio message",
	"document":    "Document",
	"sticker":     "Sticker",
	"location":    "Location",
	"contacts":    "Contact card",
	"interactive": "Button or list reply",
	"button":      "Button reply",
	"reaction":    "Reaction",
	"template":    "Template",
}

// thousands writes n with a comma between each group of three digits (12,345).
func thousands(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
