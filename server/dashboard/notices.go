package dashboard

import (
	"net/http"
	"net/url"
	"strings"
)

// redirect answers a form post with 303 to path (which may carry a query of its own), with an
// optional notice code.
func redirect(w http.ResponseWriter, r *http.Request, path, notice string) {
	if notice != "" {
		sep := "?"
		if strings.Contains(path, "?") {
			sep = "&"
		}
		path += sep + "notice=" + url.QueryEscape(notice)
	}
	http.Redirect(w, r, path, http.StatusSeeOther)
}

// notices are the fixed messages a redirect may carry (never free text from the URL).
var notices = map[string]string{
	"revoked":                  "The key was revoked. Requests with it are refused from now on.",
	"enabled":                  "The endpoint was enabled.",
	"disabled":                 "The endpoint was disabled.",
	"deleted":                  "The endpoint was deleted.",
	"events":                   "The endpoint's events were changed. Events from now on are sent by the new choice.",
	"redelivered":              "The delivery was queued again. The new attempt appears in the request log shortly.",
	"disconnected":             "The number was disconnected.",
	"password":                 "Your password was changed. Other sessions were signed out.",
	"connected":                "Your WhatsApp number is connected.",
	"contact-saved":            "The contact was saved.",
	"answered":                 "The answer was sent. It is listed under Messages with the status the platform reports.",
	"synced":                   "The templates were synced from the platform.",
	"sync-failed":              "The platform could not be reached or refused the sync; try again shortly.",
	"sync-unavailable":         "Syncing is not configured on this server.",
	"sent":                     "The message was sent. Its status follows here as the platform reports it.",
	"sent-before":              "This form had already been sent: nothing was sent again. Here is the message it sent.",
	"contact-blocked":          "The contact is blocked: sends to it are refused until it is unblocked.",
	"contact-unblocked":        "The contact is unblocked and can be sent to again.",
	"switched":                 "You opened this workspace. Its number, keys and data are shown from now on.",
	"joined":                   "You accepted the invitation and joined this workspace. Your other workspaces are on the Workspaces page.",
	"already-member":           "You are already a member of this workspace, so the invitation changed nothing: your role stays as it was.",
	"role-changed":             "The member's role was changed. It applies from their next page.",
	"member-removed":           "The member was removed from this workspace. Their sessions in it ended; their other workspaces are not affected.",
	"invitation-revoked":       "The invitation was revoked. Its link no longer works.",
	"imported":                 "The import was confirmed: its contacts were added or updated and tagged.",
	"imported-indexing":        "The import was confirmed: its contacts were added or updated and tagged. They are listed now; name search finds the new ones within a few minutes.",
	"import-discarded":         "The import was discarded. No contact changed.",
	"import-confirmed-before":  "This import was confirmed already: nothing changed again.",
	"tagged":                   "The tag was given to the contacts.",
	"untagged":                 "The tag was taken from the contacts.",
	"audience-saved":           "The audience was saved. Broadcasts can send to it.",
	"audience-deleted":         "The audience was deleted. Its contacts and their tags are unchanged.",
	"answered-inbox":           "The answer was sent. Its status follows in the thread as the platform reports it.",
	"assigned":                 "The conversation was assigned.",
	"unassigned":               "The conversation is assigned to nobody now.",
	"resolved":                 "The conversation was resolved. A new message from the customer reopens it.",
	"reopened":                 "The conversation was reopened.",
	"note-added":               "The note was added. Only your team sees it.",
	"broadcast-started":        "The broadcast was started. Its progress follows here.",
	"broadcast-started-before": "This form had already started a broadcast: nothing was started again. Here is the broadcast it started.",
	"broadcast-paused":         "The broadcast is paused: no more messages are sent until it is resumed.",
	"broadcast-resumed":        "The broadcast was resumed.",
	"broadcast-cancelled":      "The broadcast was cancelled: the recipients not sent yet will not be sent.",
	"broadcast-state":          "The broadcast's state changed in the meantime, so nothing was done: see its state below.",
}

func flash(r *http.Request) string { return notices[r.URL.Query().Get("notice")] }
