package server

import "gateway/store"

// What each of the API's group commits (server/groupcommit; built in New) must not put in one
// statement (the send's are server/domain/send.go's beginKey and sentKey).

// statusKey: the reports of one message never share a statement (store.ApplyStatusWrites).
func statusKey(w store.StatusWrite) []any {
	return []any{[2]any{w.AccountID, w.Report.PlatformMessageID}}
}

// anyKey: reads, any of which may share a statement (store.PrincipalsByKeyHashes).
func anyKey([]byte) []any { return nil }
