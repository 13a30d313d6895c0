package main

import (
	"fmt"
	"strconv"
	"time"

	"gateway/server/dashboard"
)

// loadDashboardOptions reads the dashboard's settings: GATEWAY_ENV (development: the session
// cookie works over plain http, and sign-up defaults to open), GATEWAY_SIGNUP (open|closed) and
// GATEWAY_PUBLIC_URL (the base URL in the first-request snippet; default: the request's host).
// Embedded Signup's PLATFORM_APP_ID, PLATFORM_ES_CONFIG_ID and PLATFORM_SDK_URL reach the
// dashboard through the onboarding service (config.PlatformAppID, ...).
// GATEWAY_EXPORTS_PER_WORKSPACE and GATEWAY_EXPORT_STALL_TIMEOUT bound the CSV downloads.
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
	if v := getenv("GATEWAY_EXPORTS_PER_WORKSPACE"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return o, fmt.Errorf("GATEWAY_EXPORTS_PER_WORKSPACE: want a positive integer")
		}
		o.ExportsPerWorkspace = n
	}
	if v := getenv("GATEWAY_EXPORT_STALL_TIMEOUT"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < time.Second {
			return o, fmt.Errorf("GATEWAY_EXPORT_STALL_TIMEOUT: want a duration of at least 1s")
		}
		o.ExportStallTimeout = d
	}
	return o, nil
}
