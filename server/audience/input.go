package audience

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"

	"golang.org/x/text/encoding/unicode"
	"golang.org/x/text/transform"
)

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
