package main

import (
	"fmt"

	"gateway/server/dashboard"
)

// loadDashboardOptions reads the dashboard's settings: GATEWAY_ENV (development: the session
// cookie works over plain http, and sign-up defaults to open), GATEWAY_SIGNUP (open|closed) and
// GATEWAY_PUBLIC_URL (the base URL in the first-request snippet; default: the request's host).
// Embedded Signup's PLATFORM_APP_ID, PLATFORM_ES_CONFIG_ID and PLATFORM_SDK_URL reach the
// dashboard through the onboarding service (config.PlatformAppID, ...).
func loadDashboardOptions(getenv func(string) string, allowPrivate bool) (dashboard.Options, error) {
	o := dashboard.Options{
		Development:         getenv("GATEWAY_ENV") == "development",
		BaseURL:             getenv("GATEWAY_PUBLIC_URL"),
		WebhookAllowPrivate: allowPrivate,
	}
	switch v := getenv("GATEWAY_SIGNUP"); v {
	case "":
		o.SignupOpen = o.Development
	case "open":
		o.SignupOpen = true
	case "closed":
	default:
		return o, fmt.Errorf("GATEWAY_SIGNUP: want open or closed, got %q", v)
	}
	return o, nil
}
