package audience

import (
	"encoding/csv"
	"errors"
	"io"
	"runtime"
	"slices"
	"strings"
	"sync"
)

// Parse reads the file a batch of records at a time and normalises the batch's numbers on
// every core before it handles the records in file order: normalising a number
// (phonenumbers) is most of a row's cost, and it depends on nothing but the cell and the
// default country.

// aheadRecords is how many records one batch holds.
const aheadRecords = 512

// record is one read of the CSV: a record and the line it starts on, or a row the reader could
// not parse (pe); with its number cell normalised ahead when it has one.
type record struct {
	rec    []string
	line   int
	pe     *csv.ParseError
	digits string // Normalize's result for the number cell (when normalized)
	detail string
	// normalized: digits and detail hold the number cell's Normalize.
	normalized bool
}

// readAhead reads up to n records into buf[:0] and returns them with the error that stopped
// the batch: the guard's refusal, io.EOF, or another read error (nil when it read n). A row
// the reader could not parse is a record with pe, not a stop.
func (in *input) readAhead(buf []record, n int) ([]record, error) {
	buf = buf[:0]
	for len(buf) < n {
		rec, err := in.csv.Read()
		if in.g.err != nil {
			return buf, in.g.err
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.Is(err, io.EOF) || !errors.As(err, &pe) {
				return buf, err
			}
			buf = append(buf, record{pe: pe})
			continue
		}
		line, _ := in.csv.FieldPos(0)
		buf = append(buf, record{rec: slices.Clone(rec), line: line}) // the reader reuses rec
	}
	return buf, nil
}

// normalizeAhead normalises the number cell (column col) of each parsed record that has one, in
// region, spread over the available cores.
func normalizeAhead(recs []record, col int, region string) {
	one := func(r *record) {
		if r.pe != nil || col >= len(r.rec) {
			return
		}
		if raw := strings.TrimSpace(r.rec[col]); raw != "" {
			r.digits, r.detail = Normalize(raw, region)
			r.normalized = true
		}
	}
	workers := min(runtime.GOMAXPROCS(0), 8)
	if workers < 2 || len(recs) < 2*workers {
		for i := range recs {
			one(&recs[i])
		}
		return
	}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < len(recs); i += workers {
				one(&recs[i])
			}
		})
	}
	wg.Wait()
}
