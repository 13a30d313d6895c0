package server

import "gateway/store"

// What each of the API's group commits (server/groupcommit; built in New) must not put in one
// statement.

// statusKey: the reports of one message never share a statement (store.ApplyStatusWrites).
func statusKey(w store.StatusWrite) []any {
	return []any{[2]any{w.AccountID, w.Report.PlatformMessageID}}
}

// sentKey: the recordings of one message never share a statement (store.RecordSentWrites).
func sentKey(w store.SentWrite) []any { return []any{[2]int64{w.AccountID, w.MessageID}} }

// anyKey: reads, any of which may share a statement (store.PrincipalsByKeyHashes).
func anyKey([]byte) []any { return nil }

// beginKey: two sends to one person never share a statement (store.SendKeys).
func beginKey(w store.SendBegin) []any { return store.SendKeys(w.AccountID, w.Mobile) }
