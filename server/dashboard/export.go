package dashboard

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"gateway/store"
)

// Exports: every CSV download of the dashboard goes through csvExport.
const (
	// DefaultExportsPerWorkspace is how many downloads a workspace may run at once when
	// Options.ExportsPerWorkspace is 0.
	DefaultExportsPerWorkspace = 3
	// DefaultExportStallTimeout is how long a client may take to accept one chunk when
	// Options.ExportStallTimeout is 0.
	DefaultExportStallTimeout = 30 * time.Second
	// exportChunk is how many rows an export reads in one statement.
	exportChunk = 2000
	// ExportTrailer is the first cell of the last row of every complete export; the row's
	// second cell is the number of data rows above it (the header not counted). A file
	// without it was cut short.
	ExportTrailer = "# end of export"
	// exportFailed is the first cell of the last row of an export the database stopped.
	exportFailed = "# export failed"
)

// exportSlots counts each workspace's running downloads in this process.
type exportSlots struct {
	mu      sync.Mutex
	running map[int64]int
	max     int
}

// acquire takes one of the account's slots; false when all are taken.
func (e *exportSlots) acquire(accountID int64) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.running[accountID] >= e.max {
		return false
	}
	e.running[accountID]++
	return true
}

func (e *exportSlots) release(accountID int64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.running[accountID]--; e.running[accountID] <= 0 {
		delete(e.running, accountID)
	}
}

// csvExport answers a download of a CSV file named filename: the header, then the chunks
// next returns (each read in its own statements, which release their connection before the
// chunk is written, so a client that stops reading holds no database connection), until an
// empty chunk, then the trailer row (ExportTrailer and the number of rows). Every cell goes
// through csvSafe. A workspace runs at most ExportsPerWorkspace downloads at once; beyond
// that the answer is 429 with a page that says so (back links to the page the download
// started from). Each chunk must reach the client within ExportStallTimeout (which replaces
// the server's write timeout for the download, so a slow reader still gets the whole file);
// otherwise the download is cut, without the trailer. A database failure ends the file with
// an exportFailed row, without the trailer.
func (d *Dashboard) csvExport(w http.ResponseWriter, r *http.Request, s *store.Session, filename, back string, header []string,
	next func(context.Context) ([][]string, error)) {
	if !d.exports.acquire(s.AccountID) {
		w.Header().Set("Retry-After", "30")
		d.render(w, r, http.StatusTooManyRequests, "refused", page{Title: "Download refused", Session: s, Data: back,
			Error: fmt.Sprintf("This workspace already has %d downloads running, the most it may run at once. "+
				"Try again when one of them has finished.", d.exports.max)})
		return
	}
	defer d.exports.release(s.AccountID)
	rc := http.NewResponseController(w)
	// With no server write timeout a deadline would outlive the download on a kept-alive
	// connection; with one, the next request sets its own.
	defer rc.SetWriteDeadline(time.Time{})
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="%s"`, filename))
	cw := csv.NewWriter(w)
	write := func(rows [][]string) error {
		if err := rc.SetWriteDeadline(time.Now().Add(d.exportStall)); err != nil && !errors.Is(err, http.ErrNotSupported) {
			return err
		}
		for _, row := range rows {
			cw.Write(row)
		}
		cw.Flush()
		if err := cw.Error(); err != nil {
			return err
		}
		if err := rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
			return err
		}
		return nil
	}
	last := func(first, second string) [][]string {
		row := make([]string, len(header))
		row[0], row[1] = first, second
		return [][]string{row}
	}
	if err := write([][]string{header}); err != nil {
		d.log.InfoContext(r.Context(), "export cut", "file", filename, "rows", 0, "error", err.Error())
		return
	}
	n := 0
	for {
		rows, err := next(r.Context())
		if err != nil && r.Context().Err() != nil {
			d.log.InfoContext(r.Context(), "export cut", "file", filename, "rows", n, "error", err.Error())
			return
		}
		if err != nil {
			d.log.ErrorContext(r.Context(), "export", "file", filename, "rows", n, "error", err.Error())
			write(last(exportFailed, "the download stopped early: download the file again"))
			return
		}
		if len(rows) == 0 {
			break
		}
		for _, row := range rows {
			for i := range row {
				row[i] = csvSafe(row[i])
			}
		}
		if err := write(rows); err != nil {
			d.log.InfoContext(r.Context(), "export cut", "file", filename, "rows", n, "error", err.Error())
			return
		}
		n += len(rows)
	}
	if err := write(last(ExportTrailer, strconv.Itoa(n))); err != nil {
		d.log.InfoContext(r.Context(), "export cut", "file", filename, "rows", n, "error", err.Error())
	}
}

// csvSafe keeps a cell from being read as a formula by spreadsheet programs (OWASP's CSV
// injection advice): a cell that starts with = + - @, their full-width forms (which some
// spreadsheets read as the ASCII signs), a tab or a carriage return (which spreadsheets skip
// before reading a formula) gets a leading quote.
func csvSafe(v string) string {
	r, _ := utf8.DecodeRuneInString(v)
	switch r {
	case '=', '+', '-', '@', '\t', '\r', '＝', '＋', '－', '＠':
		return "'" + v
	}
	return v
}
