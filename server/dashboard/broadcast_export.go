package dashboard

import (
	"context"
	"fmt"
	"net/http"
	"strconv"

	"gateway/store"
)

// broadcastCSV writes the broadcast's recipients with their results as CSV through csvExport
// (the campaign export's safety: every cell neutralised against formulas, chunks read with no
// connection held while written, the trailer row at the end).
func (d *Dashboard) broadcastCSV(w http.ResponseWriter, r *http.Request, s *store.Session) {
	b, ok := d.broadcastOf(w, r, s)
	if !ok {
		return
	}
	header := []string{"recipient_id", "mobile", "user_id", "status", "attempts", "message_id", "error_code", "error_title",
		"reason", "finished_at"}
	after := int64(0)
	name := fmt.Sprintf("broadcast-%d.csv", b.ID)
	d.csvExport(w, r, s, name, fmt.Sprintf("/dashboard/broadcasts/%d", b.ID), header, func(ctx context.Context) ([][]string, error) {
		rs, err := d.cfg.Store.BroadcastRecipients(ctx, s.AccountID, b.ID, after, exportChunk)
		if err != nil || len(rs) == 0 {
			return nil, err
		}
		after = rs[len(rs)-1].ID
		rows := make([][]string, 0, len(rs))
		for _, rc := range rs {
			v := recipientOf(rc)
			rows = append(rows, []string{strconv.FormatInt(rc.ID, 10), rc.Mobile, rc.UserID, rc.State, strconv.Itoa(rc.Attempts),
				rc.MessageID, csvCode(rc.ErrorCode), rc.ErrorTitle, v.What, csvTime(rc.FinishedAt)})
		}
		return rows, nil
	})
}
