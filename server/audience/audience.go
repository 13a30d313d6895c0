// Package audience reads a contact list from a CSV stream: it checks the file (encoding, size,
// line length, header), maps its columns to a number, a first and last name and template
// variables, normalises each number from a default country to WhatsApp's digits, merges the
// same person met twice (under any of WhatsApp's forms of one number), flags cells that a
// spreadsheet would run as formulas, and lists every rejected row with its line and reason.
//
// It is pure: no HTTP, no SQL. Parse streams rows to handlers, so memory stays bounded
// whatever the file size (the duplicate index keeps about 40 bytes per distinct person). A
// caller stores what the handlers receive in a staging area and commits it only when Parse
// returns nil: on an error the whole file is refused.
package audience

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/nyaruka/phonenumbers"
)

// Bounds used for zero Options fields.
const (
	// DefaultMaxLineBytes bounds one line (and one record whose quoted cells span lines).
	DefaultMaxLineBytes = 64 << 10
	// DefaultMaxBytes bounds the file (after decoding).
	DefaultMaxBytes = 512 << 20
	// DefaultMaxRows bounds the data rows (it bounds the duplicate index's memory).
	DefaultMaxRows = 2_000_000
	// readBuffer is the read-ahead under the CSV reader.
	readBuffer = 64 << 10
)

// Errors that refuse the whole file. Parse returns them inside a *FileError (with the line
// when one applies); test with errors.Is.
var (
	ErrTooLarge        = errors.New("the file is larger than the limit")
	ErrTooManyRows     = errors.New("the file has more rows than the limit")
	ErrLineTooLong     = errors.New("a line is longer than the limit")
	ErrEncoding        = errors.New("the file is not UTF-8 text")
	ErrEmpty           = errors.New("the file is empty")
	ErrMalformedHeader = errors.New("the header line is not valid CSV")
	ErrNoNumberColumn  = errors.New("no column holds the phone number")
	ErrUnknownColumn   = errors.New("a mapped column is not in the header")
	ErrDuplicateName   = errors.New("two header columns have the same name")
	ErrOptions         = errors.New("invalid import options")
)

// FileError is a refusal of the whole file.
type FileError struct {
	Line   int    // 1-based line it was found on (0 when it is not about a line)
	Err    error  // one of the Err... values
	Detail string // what was found, for the person importing
}

func (e *FileError) Error() string {
	msg := e.Err.Error()
	if e.Line > 0 {
		msg = fmt.Sprintf("line %d: %s", e.Line, msg)
	}
	if e.Detail != "" {
		msg += ": " + e.Detail
	}
	return msg
}

func (e *FileError) Unwrap() error { return e.Err }

// Reason is why a row was rejected.
type Reason string

// Rejection reasons.
const (
	// ReasonMissingNumber: the number cell is empty (or the row is too short to have one).
	ReasonMissingNumber Reason = "missing_number"
	// ReasonInvalidNumber: the number is not a valid phone number from the default country
	// or in international form.
	ReasonInvalidNumber Reason = "invalid_number"
	// ReasonMalformedRow: the row is not valid CSV (a stray or unclosed quote).
	ReasonMalformedRow Reason = "malformed_row"
	// ReasonColumnCount: the row has non-empty cells beyond the header's columns (often an
	// unquoted comma inside a cell, which would shift every later cell).
	ReasonColumnCount Reason = "column_count"
)

// Mapping names the header columns (compared case-insensitively, spaces trimmed) that hold
// each field. Only Number is required.
type Mapping struct {
	Number    string `json:"number"`
	FirstName string `json:"first_name,omitempty"`
	LastName  string `json:"last_name,omitempty"`
	// Variables maps a template variable's name to the column holding its value.
	Variables map[string]string `json:"variables,omitempty"`
}

// Options configure Parse. DefaultCountry and Mapping.Number are required.
type Options struct {
	// DefaultCountry is the ISO 3166 region (e.g. "BR") numbers without a country code are
	// read in: "(11) 98765-4321" with BR is 5511987654321.
	DefaultCountry string
	Mapping        Mapping
	// Comma is the delimiter; 0 detects it from the header (',', ';' or tab).
	Comma rune
	// MaxLineBytes, MaxBytes and MaxRows bound the input (0 = the Default... values).
	MaxLineBytes int
	MaxBytes     int64
	MaxRows      int
}

// Row is one accepted person.
type Row struct {
	Line   int    `json:"line"`   // the line the row starts on (the header is line 1)
	Number string `json:"number"` // digits with the country code, as WhatsApp addresses it
	// Forms are the other forms WhatsApp may use for the same person (MobileForms).
	Forms     []string          `json:"forms,omitempty"`
	FirstName string            `json:"first_name,omitempty"`
	LastName  string            `json:"last_name,omitempty"`
	Variables map[string]string `json:"variables,omitempty"`
	// Formulas names the mapped fields ("first_name", "last_name", "number" or a variable
	// name) whose cell begins like a spreadsheet formula (= + - @ tab or CR). The value is
	// kept as text; whoever exports it must neutralise it.
	Formulas []string `json:"formulas,omitempty"`
}

// Rejection is a row that was not imported.
type Rejection struct {
	Line   int    `json:"line"`
	Reason Reason `json:"reason"`
	Detail string `json:"detail"`
}

// Duplicate is a row whose person an earlier row already has; it is merged into that row
// (the earlier row's values win).
type Duplicate struct {
	Line      int    `json:"line"`
	FirstLine int    `json:"first_line"`
	Number    string `json:"number"` // as this row normalised it (maybe another form)
}

// Summary counts an import.
type Summary struct {
	Rows             int            `json:"rows"` // data rows read (blank rows excluded)
	Valid            int            `json:"valid"`
	DuplicatesMerged int            `json:"duplicates_merged"`
	Rejected         int            `json:"rejected"`
	RejectedByReason map[Reason]int `json:"rejected_by_reason"`
	FormulaCells     int            `json:"formula_cells"`
	Blank            int            `json:"blank"` // rows whose cells are all empty, skipped
}

// Handlers receive the import as it is read; nil handlers are skipped. An error a handler
// returns stops Parse, which returns it.
type Handlers struct {
	Row       func(Row) error
	Reject    func(Rejection) error
	Duplicate func(Duplicate) error
}

// Header reads the header line only (with the same encoding and length checks as Parse) and
// returns the column names, for a person to map them. comma is the detected delimiter.
func Header(r io.Reader, opts Options) (names []string, comma rune, err error) {
	in, err := open(r, &opts)
	if err != nil {
		return nil, 0, err
	}
	rec, err := in.csv.Read()
	if err != nil {
		return nil, 0, in.fail(err, 1)
	}
	if err := checkHeader(rec); err != nil {
		return nil, 0, err
	}
	return trimAll(slicesClone(rec)), opts.Comma, nil
}

// columns are the header positions of the mapped fields (-1 = not mapped).
type columns struct {
	number, first, last int
	vars                []varColumn
	width               int
}

type varColumn struct {
	name string
	col  int
}

// resolve finds the mapped columns in the header.
func resolve(header []string, m Mapping) (columns, error) {
	index := map[string]int{}
	for i, h := range header {
		key := strings.ToLower(strings.TrimSpace(h))
		if key == "" {
			continue
		}
		if _, dup := index[key]; dup {
			index[key] = -2 // ambiguous: an error only if it is mapped
			continue
		}
		index[key] = i
	}
	find := func(name, field string) (int, error) {
		if strings.TrimSpace(name) == "" {
			return -1, nil
		}
		i, ok := index[strings.ToLower(strings.TrimSpace(name))]
		switch {
		case !ok:
			return 0, &FileError{Line: 1, Err: ErrUnknownColumn, Detail: fmt.Sprintf("%s is mapped to %q, which the header does not have", field, name)}
		case i == -2:
			return 0, &FileError{Line: 1, Err: ErrDuplicateName, Detail: fmt.Sprintf("%q (mapped to %s)", name, field)}
		}
		return i, nil
	}
	c := columns{width: len(header)}
	if strings.TrimSpace(m.Number) == "" {
		return c, &FileError{Line: 1, Err: ErrNoNumberColumn, Detail: "map a column to the number"}
	}
	var err error
	if c.number, err = find(m.Number, "the number"); err != nil {
		if errors.Is(err, ErrUnknownColumn) {
			return c, &FileError{Line: 1, Err: ErrNoNumberColumn, Detail: fmt.Sprintf("the header has no column %q", m.Number)}
		}
		return c, err
	}
	if c.first, err = find(m.FirstName, "the first name"); err != nil {
		return c, err
	}
	if c.last, err = find(m.LastName, "the last name"); err != nil {
		return c, err
	}
	for name, col := range m.Variables {
		i, err := find(col, "variable "+strconv.Quote(name))
		if err != nil {
			return c, err
		}
		if i >= 0 {
			c.vars = append(c.vars, varColumn{name, i})
		}
	}
	return c, nil
}

// numberHeaders are header names SuggestMapping reads as the number column.
var numberHeaders = []string{"phone", "phone number", "mobile", "number", "whatsapp", "wa_id", "msisdn", "cell",
	"telefone", "celular", "telefono", "teléfono", "móvil", "movil", "tel", "telephone", "mobile number"}

// SuggestMapping proposes a mapping from header names (number, first and last name in
// English, Portuguese and Spanish); a person confirms or changes it.
func SuggestMapping(header []string) Mapping {
	var m Mapping
	for _, h := range header {
		key := strings.ToLower(strings.TrimSpace(h))
		switch {
		case m.Number == "" && containsString(numberHeaders, key):
			m.Number = h
		case m.FirstName == "" && containsString([]string{"first name", "first_name", "firstname", "name", "nome", "nombre", "given name"}, key):
			m.FirstName = h
		case m.LastName == "" && containsString([]string{"last name", "last_name", "lastname", "surname", "sobrenome", "apellido", "family name"}, key):
			m.LastName = h
		}
	}
	return m
}

func containsString(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// Parse reads a CSV stream with a header line and sends each accepted row, rejection and
// merged duplicate to the handlers, in file order. It returns the summary, or a *FileError
// refusing the whole file (the handlers may have been called before it: discard what they
// received), or a handler's error.
func Parse(r io.Reader, opts Options, h Handlers) (Summary, error) {
	sum := Summary{RejectedByReason: map[Reason]int{}}
	region := strings.ToUpper(strings.TrimSpace(opts.DefaultCountry))
	if !phonenumbers.GetSupportedRegions()[region] {
		return sum, &FileError{Err: ErrOptions, Detail: fmt.Sprintf("unknown default country %q (an ISO 3166 code such as BR)", opts.DefaultCountry)}
	}
	in, err := open(r, &opts)
	if err != nil {
		return sum, err
	}
	rec, err := in.csv.Read()
	if err != nil {
		return sum, in.fail(err, 1)
	}
	if err := checkHeader(rec); err != nil {
		return sum, err
	}
	cols, err := resolve(slicesClone(rec), opts.Mapping)
	if err != nil {
		return sum, err
	}
	seen := map[uint64]int32{} // the person's key → the line of the row that has them
	batch := make([]record, 0, aheadRecords)
	for {
		var stop error
		batch, stop = in.readAhead(batch, aheadRecords)
		normalizeAhead(batch, cols.number, region)
		for i := range batch {
			if err := parseRecord(&batch[i], cols, region, opts, &sum, seen, h); err != nil {
				return sum, err
			}
		}
		switch {
		case stop == nil:
		case in.g.err != nil:
			return sum, in.g.err
		case errors.Is(stop, io.EOF):
			return sum, nil
		default:
			return sum, &FileError{Err: stop}
		}
	}
}

// parseRecord handles one record in file order: a malformed or refused row, a blank one, a
// duplicate of an earlier person, or an accepted row. A refusal of the whole file (the text
// is not UTF-8, too many rows) or a handler's error is returned.
func parseRecord(r *record, cols columns, region string, opts Options, sum *Summary, seen map[uint64]int32, h Handlers) error {
	if r.pe != nil {
		sum.Rows++
		if sum.Rows > opts.MaxRows {
			return &FileError{Line: r.pe.StartLine, Err: ErrTooManyRows, Detail: fmt.Sprintf("more than %d rows", opts.MaxRows)}
		}
		return reject(sum, h, Rejection{Line: r.pe.StartLine, Reason: ReasonMalformedRow, Detail: r.pe.Err.Error()})
	}
	rec, line := r.rec, r.line
	if err := checkText(rec, line); err != nil {
		return err
	}
	if blank(rec) {
		sum.Blank++
		return nil
	}
	sum.Rows++
	if sum.Rows > opts.MaxRows {
		return &FileError{Line: line, Err: ErrTooManyRows, Detail: fmt.Sprintf("more than %d rows", opts.MaxRows)}
	}
	if extra := beyond(rec, cols.width); extra > 0 {
		return reject(sum, h, Rejection{Line: line, Reason: ReasonColumnCount,
			Detail: fmt.Sprintf("%d cells, the header has %d columns (is a comma inside a cell not quoted?)", extra, cols.width)})
	}
	cell := func(i int) string {
		if i < 0 || i >= len(rec) {
			return ""
		}
		return strings.TrimSpace(rec[i])
	}
	raw := cell(cols.number)
	if raw == "" {
		return reject(sum, h, Rejection{Line: line, Reason: ReasonMissingNumber, Detail: "the number cell is empty"})
	}
	digits, detail := r.digits, r.detail
	if !r.normalized {
		digits, detail = Normalize(raw, region)
	}
	if digits == "" {
		return reject(sum, h, Rejection{Line: line, Reason: ReasonInvalidNumber, Detail: detail})
	}
	forms := MobileForms(digits)
	key := personKey(digits, forms)
	if first, dup := seen[key]; dup {
		sum.DuplicatesMerged++
		if h.Duplicate != nil {
			return h.Duplicate(Duplicate{Line: line, FirstLine: int(first), Number: digits})
		}
		return nil
	}
	seen[key] = int32(line)
	row := Row{Line: line, Number: digits, Forms: forms, FirstName: cell(cols.first), LastName: cell(cols.last)}
	// The number cell is checked raw: "+55 ..." is a number, "=HYPERLINK(...)" never parses.
	for _, f := range []struct{ name, v string }{{"first_name", rawCell(rec, cols.first)}, {"last_name", rawCell(rec, cols.last)}} {
		if IsFormula(f.v) {
			row.Formulas = append(row.Formulas, f.name)
		}
	}
	if len(cols.vars) > 0 {
		row.Variables = make(map[string]string, len(cols.vars))
		for _, v := range cols.vars {
			row.Variables[v.name] = cell(v.col)
			if IsFormula(rawCell(rec, v.col)) {
				row.Formulas = append(row.Formulas, v.name)
			}
		}
	}
	sum.FormulaCells += len(row.Formulas)
	sum.Valid++
	if h.Row != nil {
		return h.Row(row)
	}
	return nil
}

// reject counts a rejection and hands it on.
func reject(sum *Summary, h Handlers, rj Rejection) error {
	sum.Rejected++
	sum.RejectedByReason[rj.Reason]++
	if h.Reject != nil {
		return h.Reject(rj)
	}
	return nil
}

// checkHeader refuses a header with invalid UTF-8 or with carriage returns inside it: a file
// whose lines end with CR alone (an old Mac format) reads as one long header line.
func checkHeader(rec []string) error {
	if err := checkText(rec, 1); err != nil {
		return err
	}
	for _, f := range rec {
		if strings.ContainsRune(f, '\r') {
			return &FileError{Line: 1, Err: ErrMalformedHeader, Detail: "its lines end with a carriage return alone (an old Mac format); save it as CSV UTF-8"}
		}
	}
	return nil
}

// checkText refuses a record with invalid UTF-8 (a file saved in Latin-1 or Windows-1252).
func checkText(rec []string, line int) error {
	for _, f := range rec {
		if !utf8.ValidString(f) {
			return &FileError{Line: line, Err: ErrEncoding, Detail: "invalid UTF-8 (the file was saved in another encoding, e.g. Latin-1); save it as CSV UTF-8"}
		}
	}
	return nil
}

func blank(rec []string) bool {
	for _, f := range rec {
		if strings.TrimSpace(f) != "" {
			return false
		}
	}
	return true
}

// beyond is the count of cells when non-empty ones lie past width, else 0.
func beyond(rec []string, width int) int {
	for i := width; i < len(rec); i++ {
		if strings.TrimSpace(rec[i]) != "" {
			return len(rec)
		}
	}
	return 0
}

func rawCell(rec []string, i int) string {
	if i < 0 || i >= len(rec) {
		return ""
	}
	return rec[i]
}
