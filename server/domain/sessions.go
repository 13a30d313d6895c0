package domain

import "time"

// Session lifetimes of the dashboard: a session unused for SessionIdle, or older than
// SessionAbsolute, is over. The dashboard checks them on every request; retention deletes the
// sessions past them.
const (
	SessionIdle     = 12 * time.Hour
	SessionAbsolute = 30 * 24 * time.Hour
)
