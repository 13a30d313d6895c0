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
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/nyaruka/phonenumbers"
	"golang.org/x/text/encoding/unicode"
	"golang.org/x/text/transform"
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

// CheckSize refuses a file of size bytes (e.g. an upload's Content-Length) before it is read.
func CheckSize(size, maxBytes int64) error {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBytes
	}
	if size > maxBytes {
		return &FileError{Err: ErrTooLarge, Detail: fmt.Sprintf("%d bytes, the limit is %d", size, maxBytes)}
	}
	return nil
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

// input is an opened stream: the guard on the decoded bytes and the CSV reader on top.
type input struct {
	g   *guard
	csv *csv.Reader
}

// open decodes the byte-order mark, checks the start of the file, detects the delimiter and
// sets up the CSV reader.
func open(r io.Reader, opts *Options) (*input, error) {
	if opts.MaxLineBytes <= 0 {
		opts.MaxLineBytes = DefaultMaxLineBytes
	}
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = DefaultMaxBytes
	}
	if opts.MaxRows <= 0 {
		opts.MaxRows = DefaultMaxRows
	}
	raw := bufio.NewReaderSize(r, 4096)
	head, _ := raw.Peek(4)
	var src io.Reader = raw
	switch {
	case bytes.HasPrefix(head, []byte{0xEF, 0xBB, 0xBF}):
		_, _ = raw.Discard(3)
	case bytes.HasPrefix(head, []byte{0xFF, 0xFE}):
		_, _ = raw.Discard(2)
		src = transform.NewReader(raw, unicode.UTF16(unicode.LittleEndian, unicode.IgnoreBOM).NewDecoder())
	case bytes.HasPrefix(head, []byte{0xFE, 0xFF}):
		_, _ = raw.Discard(2)
		src = transform.NewReader(raw, unicode.UTF16(unicode.BigEndian, unicode.IgnoreBOM).NewDecoder())
	case bytes.HasPrefix(head, []byte("PK\x03\x04")), bytes.HasPrefix(head, []byte{0xD0, 0xCF, 0x11, 0xE0}):
		return nil, &FileError{Err: ErrEncoding, Detail: "this is a spreadsheet file (xlsx or xls); save it as CSV UTF-8"}
	}
	peek := bufio.NewReaderSize(src, readBuffer)
	if opts.Comma == 0 {
		opts.Comma = detectComma(peek)
	}
	if opts.Comma >= utf8.RuneSelf || opts.Comma == '"' || opts.Comma == '\n' || opts.Comma == '\r' {
		return nil, &FileError{Err: ErrOptions, Detail: fmt.Sprintf("the delimiter %q is not supported", opts.Comma)}
	}
	g := newGuard(peek, byte(opts.Comma), opts.MaxBytes, opts.MaxLineBytes)
	c := csv.NewReader(bufio.NewReaderSize(g, readBuffer)) // csv reads that *bufio.Reader directly
	c.Comma = opts.Comma
	c.FieldsPerRecord = -1
	c.ReuseRecord = true
	return &input{g: g, csv: c}, nil
}

// fail turns a read error into the file's error: the guard's refusal when it stopped the
// stream, ErrEmpty at the start, else the error itself.
func (in *input) fail(err error, line int) error {
	if in.g.err != nil {
		return in.g.err
	}
	if errors.Is(err, io.EOF) {
		return &FileError{Err: ErrEmpty}
	}
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return &FileError{Line: pe.StartLine, Err: ErrMalformedHeader, Detail: pe.Err.Error()}
	}
	return &FileError{Line: line, Err: err}
}

// detectComma picks the delimiter of the first line: the most frequent of ',', ';' and tab
// outside quotes (',' on a tie or when none is there).
func detectComma(br *bufio.Reader) rune {
	head, _ := br.Peek(readBuffer)
	if i := bytes.IndexByte(head, '\n'); i >= 0 {
		head = head[:i]
	}
	counts := map[rune]int{}
	quoted := false
	for _, b := range head {
		switch {
		case b == '"':
			quoted = !quoted
		case !quoted && (b == ',' || b == ';' || b == '\t'):
			counts[rune(b)]++
		}
	}
	best := ','
	for _, c := range []rune{';', '\t'} {
		if counts[c] > counts[best] {
			best = c
		}
	}
	return best
}

// guard passes the decoded stream through, refusing it past the byte cap, at a record (a
// line, or lines joined by a quoted cell) longer than the line limit, and at a NUL byte (a
// binary file), without buffering more than the reader above asks for. It follows the CSV
// quoting the way encoding/csv reads it (a quote opens a quoted cell only at a cell's start;
// a malformed line ends at its newline) to know where records end.
type guard struct {
	r        io.Reader
	comma    byte
	maxBytes int64
	maxLine  int

	n         int64 // bytes passed
	line      int   // the current line (1-based)
	recStart  int   // the line the current record began on
	recLen    int   // bytes of the current record
	atField   bool  // at the start of a cell
	inQuotes  bool  // inside a quoted cell
	quoteSeen bool  // a quote inside a quoted cell: the next byte says if it closed it
	skipping  bool  // a malformed line: ignore up to its newline
	err       *FileError
}

func newGuard(r io.Reader, comma byte, maxBytes int64, maxLine int) *guard {
	return &guard{r: r, comma: comma, maxBytes: maxBytes, maxLine: maxLine, line: 1, recStart: 1, atField: true}
}

func (g *guard) Read(p []byte) (int, error) {
	if g.err != nil {
		return 0, g.err
	}
	n, err := g.r.Read(p)
	for _, b := range p[:n] {
		if b == 0 {
			g.err = &FileError{Line: g.line, Err: ErrEncoding,
				Detail: "it holds NUL bytes (a binary file, or UTF-16 without a byte-order mark); save it as CSV UTF-8"}
			return 0, g.err
		}
		g.recLen++
		if g.quoteSeen {
			g.quoteSeen = false
			if b == '"' { // an escaped quote
				continue
			}
			g.inQuotes = false
			switch b {
			case g.comma:
				g.atField = true
				continue
			case '\n', '\r':
			default:
				g.skipping = true // text after a closing quote: csv refuses the line
			}
		}
		switch {
		case b == '\n':
			g.line++
			if !g.inQuotes {
				g.recStart, g.recLen, g.atField, g.skipping = g.line, 0, true, false
			}
		case g.skipping:
		case g.inQuotes:
			if b == '"' {
				g.quoteSeen = true
			}
		case b == '"' && g.atField:
			g.inQuotes, g.atField = true, false
		case b == '"':
			g.skipping = true // a bare quote: csv refuses the line
		case b == g.comma:
			g.atField = true
		default:
			g.atField = false
		}
		if g.recLen > g.maxLine {
			detail := fmt.Sprintf("more than %d bytes", g.maxLine)
			if g.line > g.recStart {
				detail = fmt.Sprintf("a quoted cell from this line runs over more than %d bytes (is a quote left open?)", g.maxLine)
			}
			g.err = &FileError{Line: g.recStart, Err: ErrLineTooLong, Detail: detail}
			return 0, g.err
		}
	}
	g.n += int64(n)
	if g.n > g.maxBytes {
		g.err = &FileError{Err: ErrTooLarge, Detail: fmt.Sprintf("more than %d bytes", g.maxBytes)}
		return 0, g.err
	}
	return n, err
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
	for {
		rec, err := in.csv.Read()
		if errors.Is(err, io.EOF) && in.g.err == nil {
			break
		}
		if in.g.err != nil {
			return sum, in.g.err
		}
		var line int
		if err != nil {
			var pe *csv.ParseError
			if !errors.As(err, &pe) {
				return sum, &FileError{Err: err}
			}
			sum.Rows++
			if sum.Rows > opts.MaxRows {
				return sum, &FileError{Line: pe.StartLine, Err: ErrTooManyRows, Detail: fmt.Sprintf("more than %d rows", opts.MaxRows)}
			}
			if err := reject(&sum, h, Rejection{Line: pe.StartLine, Reason: ReasonMalformedRow, Detail: pe.Err.Error()}); err != nil {
				return sum, err
			}
			continue
		}
		line, _ = in.csv.FieldPos(0)
		if err := checkText(rec, line); err != nil {
			return sum, err
		}
		if blank(rec) {
			sum.Blank++
			continue
		}
		sum.Rows++
		if sum.Rows > opts.MaxRows {
			return sum, &FileError{Line: line, Err: ErrTooManyRows, Detail: fmt.Sprintf("more than %d rows", opts.MaxRows)}
		}
		if extra := beyond(rec, cols.width); extra > 0 {
			if err := reject(&sum, h, Rejection{Line: line, Reason: ReasonColumnCount,
				Detail: fmt.Sprintf("%d cells, the header has %d columns (is a comma inside a cell not quoted?)", extra, cols.width)}); err != nil {
				return sum, err
			}
			continue
		}
		cell := func(i int) string {
			if i < 0 || i >= len(rec) {
				return ""
			}
			return strings.TrimSpace(rec[i])
		}
		raw := cell(cols.number)
		if raw == "" {
			if err := reject(&sum, h, Rejection{Line: line, Reason: ReasonMissingNumber, Detail: "the number cell is empty"}); err != nil {
				return sum, err
			}
			continue
		}
		digits, detail := Normalize(raw, region)
		if digits == "" {
			if err := reject(&sum, h, Rejection{Line: line, Reason: ReasonInvalidNumber, Detail: detail}); err != nil {
				return sum, err
			}
			continue
		}
		forms := MobileForms(digits)
		key := personKey(digits, forms)
		if first, dup := seen[key]; dup {
			sum.DuplicatesMerged++
			if h.Duplicate != nil {
				if err := h.Duplicate(Duplicate{Line: line, FirstLine: int(first), Number: digits}); err != nil {
					return sum, err
				}
			}
			continue
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
			if err := h.Row(row); err != nil {
				return sum, err
			}
		}
	}
	return sum, nil
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

// IsFormula reports whether a spreadsheet would read the cell as a formula: it begins with
// = + - @, a tab or a carriage return.
func IsFormula(v string) bool {
	return v != "" && strings.ContainsRune("=+-@\t\r", rune(v[0]))
}

// Normalize reads a phone number written in the region's local format or in international
// form (+ or 00, or bare digits with the country code when they are not a valid local
// number) and returns its digits with the country code. On failure digits is "" and detail
// says why.
func Normalize(raw, region string) (digits, detail string) {
	if strings.ContainsAny(raw, "eE") && strings.ContainsAny(raw, ".,") {
		return "", fmt.Sprintf("%q looks like a number in scientific notation: format the column as text in the spreadsheet", clip(raw))
	}
	if IsFormula(raw) && raw[0] != '+' {
		return "", fmt.Sprintf("%q is not a phone number", clip(raw))
	}
	if d, ok := parseNumber(raw, region); ok {
		return d, ""
	}
	// Not a number of the region: read it as international (after +, 00 or as bare digits),
	// also under its other WhatsApp forms (the Mexican 521 that numbering plans dropped).
	if d := intlDigits(raw); d != "" {
		for _, form := range append([]string{d}, MobileForms(d)...) {
			if v, ok := parseNumber("+"+form, region); ok {
				return v, ""
			}
		}
	}
	return "", fmt.Sprintf("%q is not a valid phone number in %s or in international form", clip(raw), region)
}

// intlDigits is the digits of raw when it is written in international form: after a + or 00,
// or bare digits of a plausible length; "" otherwise.
func intlDigits(raw string) string {
	var b strings.Builder
	for _, r := range raw {
		switch {
		case r >= '0' && r <= '9':
			b.WriteRune(r)
		case strings.ContainsRune("+ -().", r):
		default:
			return ""
		}
	}
	d := b.String()
	t := strings.TrimSpace(raw)
	if !strings.HasPrefix(t, "+") && strings.HasPrefix(t, "00") {
		d = d[2:]
	}
	if len(d) < 8 || len(d) > 15 {
		return ""
	}
	return d
}

func parseNumber(raw, region string) (string, bool) {
	num, err := phonenumbers.Parse(raw, region)
	if err != nil || !phonenumbers.IsValidNumber(num) {
		return "", false
	}
	e164 := phonenumbers.Format(num, phonenumbers.E164)
	d := strings.TrimPrefix(e164, "+")
	if len(d) < 8 || len(d) > 15 || !allDigits(d) {
		return "", false
	}
	return d, true
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// clip shortens a cell for a message.
func clip(s string) string {
	if len(s) <= 40 {
		return s
	}
	cut := 40
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// personKey is one key for all of a person's forms: the smallest of them as a number.
func personKey(digits string, forms []string) uint64 {
	k, _ := strconv.ParseUint(digits, 10, 64)
	for _, f := range forms {
		if v, err := strconv.ParseUint(f, 10, 64); err == nil && v < k {
			k = v
		}
	}
	return k
}

func trimAll(s []string) []string {
	for i := range s {
		s[i] = strings.TrimSpace(s[i])
	}
	return s
}

func slicesClone(s []string) []string { return append([]string(nil), s...) }
