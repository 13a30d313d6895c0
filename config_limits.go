package main

import (
	"fmt"
	"strconv"

	"gateway/store"
)

// loadLimits reads the per-account quotas: GATEWAY_MAX_WEBHOOK_ENDPOINTS (default 10) and
// GATEWAY_MAX_API_KEYS (active keys, default 50); unset keeps store.DefaultLimits.
func loadLimits(getenv func(string) string) (store.Limits, error) {
	l := store.DefaultLimits
	for _, v := range []struct {
		name string
		dst  *int
	}{{"GATEWAY_MAX_WEBHOOK_ENDPOINTS", &l.WebhookEndpoints}, {"GATEWAY_MAX_API_KEYS", &l.ActiveAPIKeys}} {
		s := getenv(v.name)
		if s == "" {
			continue
		}
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return l, fmt.Errorf("%s: want a positive integer", v.name)
		}
		*v.dst = n
	}
	return l, nil
}
