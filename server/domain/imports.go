package domain

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"gateway/server/audience"
	"gateway/store"
)

// Imports: a contact list read from a spreadsheet (CSV) into a staged import, which changes no
// contact until the person confirms it (store.ConfirmImport) and leaves nothing when discarded.

// Imports stages, reports, confirms and discards the account's contact imports.
type Imports struct {
	Store *store.Store
}

// importBatch is how many parsed rows (or rejections) are written to the staging area at once.
const importBatch = 5000

// ErrImportFile wraps the parser's refusal of a whole file (an *audience.FileError, which
// errors.As finds): the staging is discarded and nothing is kept.
var ErrImportFile = errors.New("the file was refused")

// ImportRequest is what to read and how.
type ImportRequest struct {
	File    io.Reader
	Options audience.Options // the default country, the mapping and the bounds
	Tag     string           // "" for none; checked with CheckTag
}

// Stage reads the file into a new staged import and returns its id. The parser runs while the
// previous batch is written, so reading and writing overlap and at most two batches are held.
// A file the parser refuses (ErrImportFile) or a failed write leaves no import behind.
func (im Imports) Stage(ctx context.Context, accountID int64, req ImportRequest) (int64, error) {
	tag, err := CheckTag(req.Tag, true)
	if err != nil {
		return 0, err
	}
	id, err := im.Store.CreateImport(ctx, accountID, tag, nil)
	if err != nil {
		return 0, err
	}
	sum, err := im.stageRows(ctx, accountID, id, req)
	if err == nil {
		var data []byte
		if data, err = json.Marshal(sum); err == nil {
			err = im.Store.SetImportSummary(ctx, accountID, id, data)
		}
	}
	if err != nil {
		// A cancelled request still removes its staging.
		if derr := im.Store.DiscardImport(context.WithoutCancel(ctx), accountID, id); derr != nil && !errors.Is(derr, store.ErrNotFound) {
			return 0, errors.Join(err, derr)
		}
		var fe *audience.FileError
		if errors.As(err, &fe) {
			return 0, fmt.Errorf("%w: %w", ErrImportFile, fe)
		}
		return 0, err
	}
	return id, nil
}

// stagedBatch is one write of the staging: rows and rejections in file order.
type stagedBatch struct {
	rows    []store.ImportRow
	rejects []store.ImportRejection
}

// stageRows parses the file in this goroutine and writes its batches in another.
func (im Imports) stageRows(ctx context.Context, accountID, id int64, req ImportRequest) (audience.Summary, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	batches := make(chan stagedBatch, 1)
	written := make(chan error, 1)
	go func() {
		var err error
		for b := range batches {
			if err != nil {
				continue // drain: the parser stops at its next send
			}
			if err = im.Store.AddImportRows(ctx, accountID, id, b.rows); err == nil {
				err = im.Store.AddImportRejections(ctx, accountID, id, b.rejects)
			}
			if err != nil {
				cancel()
			}
		}
		written <- err
	}()
	var cur stagedBatch
	flush := func(force bool) error {
		if !force && len(cur.rows)+len(cur.rejects) < importBatch {
			return nil
		}
		if len(cur.rows)+len(cur.rejects) == 0 {
			return nil
		}
		select {
		case batches <- cur:
		case <-ctx.Done():
			return ctx.Err()
		}
		cur = stagedBatch{}
		return nil
	}
	sum, err := audience.Parse(req.File, req.Options, audience.Handlers{
		Row: func(r audience.Row) error {
			cur.rows = append(cur.rows, store.ImportRow{Line: r.Line, Mobile: r.Number, FirstName: r.FirstName, LastName: r.LastName, Variables: r.Variables})
			return flush(false)
		},
		Reject: func(r audience.Rejection) error {
			cur.rejects = append(cur.rejects, store.ImportRejection{Line: r.Line, Reason: string(r.Reason), Detail: r.Detail})
			return flush(false)
		},
	})
	if err == nil {
		err = flush(true)
	}
	close(batches)
	if werr := <-written; werr != nil {
		return sum, werr
	}
	return sum, err
}

// ImportReport is an import's preview: the store's counts and the parser's summary.
type ImportReport struct {
	store.ImportReport
	Parsed audience.Summary
}

// Report reads the account's import with the counts of its staged rows; store.ErrNotFound for
// another account's.
func (im Imports) Report(ctx context.Context, accountID, id int64) (ImportReport, error) {
	return withSummary(im.Store.ImportReportOf(ctx, accountID, id))
}

// Import reads the account's import and its parser's summary without counting its staged
// rows (Report counts them); store.ErrNotFound for another account's.
func (im Imports) Import(ctx context.Context, accountID, id int64) (ImportReport, error) {
	return withSummary(im.Store.ImportOf(ctx, accountID, id))
}

// withSummary adds the parser's summary kept with the import.
func withSummary(r store.ImportReport, err error) (ImportReport, error) {
	if err != nil {
		return ImportReport{}, err
	}
	out := ImportReport{ImportReport: r}
	if len(r.Summary) > 0 {
		if err := json.Unmarshal(r.Summary, &out.Parsed); err != nil {
			return ImportReport{}, err
		}
	}
	return out, nil
}

// Rejections is a page of the import's rejected rows after the line, in line order.
func (im Imports) Rejections(ctx context.Context, accountID, id int64, afterLine, limit int) ([]store.ImportRejection, error) {
	return im.Store.ImportRejections(ctx, accountID, id, afterLine, limit)
}

// Confirm commits the staged import (store.ConfirmImport): the contacts made or updated and
// tagged. store.ErrImportConfirmed when it was confirmed already.
func (im Imports) Confirm(ctx context.Context, accountID, id int64, now time.Time) (store.ImportResult, error) {
	return im.Store.ConfirmImport(ctx, accountID, id, now)
}

// Discard deletes the import, its staged rows and its rejections; no contact changes.
func (im Imports) Discard(ctx context.Context, accountID, id int64) error {
	return im.Store.DiscardImport(ctx, accountID, id)
}
