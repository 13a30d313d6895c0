package audience_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"
	"unicode/utf16"

	"gateway/server/audience"
	"gateway/store"
)

// result is everything the handlers received.
type result struct {
	rows []audience.Row
	rejs []audience.Rejection
	dups []audience.Duplicate
	sum  audience.Summary
	err  error
}

func parse(t *testing.T, r io.Reader, opts audience.Options) result {
	t.Helper()
	var res result
	res.sum, res.err = audience.Parse(r, opts, audience.Handlers{
		Row:       func(row audience.Row) error { res.rows = append(res.rows, row); return nil },
		Reject:    func(rj audience.Rejection) error { res.rejs = append(res.rejs, rj); return nil },
		Duplicate: func(d audience.Duplicate) error { res.dups = append(res.dups, d); return nil },
	})
	return res
}

func brOptions() audience.Options {
	return audience.Options{DefaultCountry: "BR", Mapping: audience.Mapping{Number: "Phone", FirstName: "First", LastName: "Last",
		Variables: map[string]string{"order": "Order ID"}}}
}

// fileError asserts err is a *FileError wrapping want, on line (0 = any), and returns it.
func fileError(t *testing.T, err, want error, line int) *audience.FileError {
	t.Helper()
	var fe *audience.FileError
	if !errors.As(err, &fe) || !errors.Is(err, want) {
		t.Fatalf("error %v, want a FileError with %v", err, want)
	}
	if line > 0 && fe.Line != line {
		t.Fatalf("error on line %d, want %d: %v", fe.Line, line, err)
	}
	return fe
}

func TestParseNormalisesMapsAndMergesAliases(t *testing.T) {
	csv := "First,Last,Phone,Order ID,Ignored\n" +
		"Ana,Silva,(11) 98765-4321,A-1,x\n" + // local Brazilian mobile
		"Bia,Souza,+55 21 99876-5432,A-2,\n" +
		"Ana again,,+55 11 98765-4321,A-3,\n" + // the same number in international form
		"Ana old,,+55 11 8765-4321,A-4,\n" + // the same person without the mobile 9 (read with it)
		"Carlos,Pérez,+52 1 55 1234 5678,A-5,\n" + // Mexico with the 1
		"Carlos,,+52 55 1234 5678,A-6,\n" + // and without it
		"Dee,,0044 7911 123456,A-7,\n" + // 00 international prefix
		"Eve,,5511912345678,A-8,\n" // bare digits with the country code
	res := parse(t, strings.NewReader(csv), brOptions())
	if res.err != nil {
		t.Fatal(res.err)
	}
	var got []string
	for _, r := range res.rows {
		got = append(got, fmt.Sprintf("%d %s %s %s %s", r.Line, r.Number, r.FirstName, r.LastName, r.Variables["order"]))
	}
	want := []string{
		"2 5511987654321 Ana Silva A-1",
		"3 5521998765432 Bia Souza A-2",
		"6 525512345678 Carlos Pérez A-5", // the numbering plan dropped the 1; the form keeps it,
		"8 447911123456 Dee  A-7",
		"9 5511912345678 Eve  A-8",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("rows\n got %q\nwant %q", got, want)
	}
	if !reflect.DeepEqual(res.rows[0].Forms, []string{"551187654321"}) || !reflect.DeepEqual(res.rows[2].Forms, []string{"5215512345678"}) {
		t.Fatalf("forms %v %v", res.rows[0].Forms, res.rows[2].Forms)
	}
	wantDups := []audience.Duplicate{{Line: 4, FirstLine: 2, Number: "5511987654321"}, {Line: 5, FirstLine: 2, Number: "5511987654321"}, {Line: 7, FirstLine: 6}}
	if len(res.dups) != 3 {
		t.Fatalf("duplicates %+v", res.dups)
	}
	for i, d := range res.dups {
		if d.Line != wantDups[i].Line || d.FirstLine != wantDups[i].FirstLine || (wantDups[i].Number != "" && d.Number != wantDups[i].Number) {
			t.Fatalf("duplicate %d = %+v, want %+v", i, d, wantDups[i])
		}
	}
	if s := res.sum; s.Rows != 8 || s.Valid != 5 || s.DuplicatesMerged != 3 || s.Rejected != 0 {
		t.Fatalf("summary %+v", s)
	}
}

func TestRejectedRowsListedWithLineAndReason(t *testing.T) {
	csv := "Phone,First,Last,Order ID\n" +
		",NoNumber,,1\n" + // 2
		"12345,Short,,2\n" + // 3
		"5.51199E+12,Sci,,3\n" + // 4
		"\n" + // 5: blank lines are skipped
		",,,\n" + // 6: so are rows of empty cells
		"11 98765-4321,Ok,,4\n" + // 7
		"11 91234-5678,Shifted,Name,5,extra\n" + // 8: one cell too many
		"11 92222-3333,Bad \"quote,,6\n" + // 9: a bare quote
		"11 93333-4444,Fine,,7\n" // 10
	res := parse(t, strings.NewReader(csv), brOptions())
	if res.err != nil {
		t.Fatal(res.err)
	}
	want := []struct {
		line   int
		reason audience.Reason
		detail string
	}{
		{2, audience.ReasonMissingNumber, "empty"},
		{3, audience.ReasonInvalidNumber, `"12345"`},
		{4, audience.ReasonInvalidNumber, "scientific notation"},
		{8, audience.ReasonColumnCount, "5 cells"},
		{9, audience.ReasonMalformedRow, "quote"},
	}
	if len(res.rejs) != len(want) {
		t.Fatalf("rejections %+v", res.rejs)
	}
	for i, w := range want {
		if r := res.rejs[i]; r.Line != w.line || r.Reason != w.reason || !strings.Contains(r.Detail, w.detail) {
			t.Fatalf("rejection %d = %+v, want line %d %s with %q", i, r, w.line, w.reason, w.detail)
		}
	}
	if len(res.rows) != 2 || res.rows[0].Line != 7 || res.rows[1].Line != 10 {
		t.Fatalf("rows %+v", res.rows)
	}
	s := res.sum
	if s.Rows != 7 || s.Valid != 2 || s.Rejected != 5 || s.Blank != 1 ||
		s.RejectedByReason[audience.ReasonInvalidNumber] != 2 || s.RejectedByReason[audience.ReasonMissingNumber] != 1 ||
		s.RejectedByReason[audience.ReasonColumnCount] != 1 || s.RejectedByReason[audience.ReasonMalformedRow] != 1 {
		t.Fatalf("summary %+v", s)
	}
}

func TestFormulaCellsKeptAsTextAndFlagged(t *testing.T) {
	csv := "Phone,First,Last,Order ID\n" +
		"+55 11 98765-4321,\"=HYPERLINK(\"\"http://x\"\")\",@SUM(A1),-1\n" +
		"+55 11 91234-5678,Ana,\"\tTab\",+7\n" +
		"+55 11 91234-0000,Bia,Plain,7\n" +
		"=1+5511912340001,Eve,,8\n"
	res := parse(t, strings.NewReader(csv), brOptions())
	if res.err != nil {
		t.Fatal(res.err)
	}
	if len(res.rows) != 3 {
		t.Fatalf("rows %+v", res.rows)
	}
	r := res.rows[0]
	if r.FirstName != `=HYPERLINK("http://x")` || r.LastName != "@SUM(A1)" || r.Variables["order"] != "-1" ||
		!reflect.DeepEqual(r.Formulas, []string{"first_name", "last_name", "order"}) {
		t.Fatalf("row 2 %+v", r)
	}
	if !reflect.DeepEqual(res.rows[1].Formulas, []string{"last_name", "order"}) || res.rows[2].Formulas != nil {
		t.Fatalf("flags %v %v", res.rows[1].Formulas, res.rows[2].Formulas)
	}
	// A formula in the number column is never a number.
	if len(res.rejs) != 1 || res.rejs[0].Line != 5 || res.rejs[0].Reason != audience.ReasonInvalidNumber {
		t.Fatalf("rejections %+v", res.rejs)
	}
	if res.sum.FormulaCells != 5 {
		t.Fatalf("summary %+v", res.sum)
	}
}

func TestWrongEncodingRefused(t *testing.T) {
	latin1 := "Phone,First,Last,Order ID\n+55 11 98765-4321,Ana,,1\n+55 11 91234-5678,Jos\xe9,,2\n"
	res := parse(t, strings.NewReader(latin1), brOptions())
	fe := fileError(t, res.err, audience.ErrEncoding, 3)
	if !strings.Contains(fe.Error(), "UTF-8") {
		t.Fatalf("message %q", fe.Error())
	}
	for name, in := range map[string]string{
		"xlsx":     "PK\x03\x04rest of a zip",
		"xls":      "\xD0\xCF\x11\xE0rest",
		"NUL":      "Phone,First\n+55 11 98765-4321\x00,Ana\n",
		"UTF-16LE": string(utf16LE("Phone\n+5511987654321\n", false)), // no byte-order mark
	} {
		if res := parse(t, strings.NewReader(in), brOptions()); !errors.Is(res.err, audience.ErrEncoding) {
			t.Fatalf("%s: error %v, want ErrEncoding", name, res.err)
		}
	}
}

// utf16LE encodes s as UTF-16 little-endian, with a byte-order mark when bom.
func utf16LE(s string, bom bool) []byte {
	var b []byte
	if bom {
		b = append(b, 0xFF, 0xFE)
	}
	for _, u := range utf16.Encode([]rune(s)) {
		b = append(b, byte(u), byte(u>>8))
	}
	return b
}

func TestByteOrderMarksAccepted(t *testing.T) {
	plain := "Phone,First,Last,Order ID\n+55 11 98765-4321,Zoë,,1\n"
	for name, in := range map[string][]byte{
		"UTF-8 BOM": append([]byte{0xEF, 0xBB, 0xBF}, plain...),
		"UTF-16 LE": utf16LE(plain, true),
		"UTF-16 BE": func() []byte {
			le := utf16LE(plain, true)
			for i := 0; i+1 < len(le); i += 2 {
				le[i], le[i+1] = le[i+1], le[i]
			}
			return le
		}(),
	} {
		res := parse(t, bytes.NewReader(in), brOptions())
		if res.err != nil || len(res.rows) != 1 || res.rows[0].FirstName != "Zoë" || res.rows[0].Number != "5511987654321" {
			t.Fatalf("%s: %v %+v", name, res.err, res.rows)
		}
	}
}

func TestMissingNumberColumnRefused(t *testing.T) {
	csv := "Name,Email\nAna,ana@example.com\n"
	res := parse(t, strings.NewReader(csv), brOptions())
	fileError(t, res.err, audience.ErrNoNumberColumn, 1)
	opts := brOptions()
	opts.Mapping.Number = ""
	res = parse(t, strings.NewReader(csv), opts)
	fileError(t, res.err, audience.ErrNoNumberColumn, 1)
	// A mapped variable column the header lacks.
	opts = brOptions()
	opts.Mapping.Variables = map[string]string{"code": "Coupon"}
	res = parse(t, strings.NewReader("Phone,First,Last\n"), opts)
	fileError(t, res.err, audience.ErrUnknownColumn, 1)
	// Two columns with the mapped name.
	res = parse(t, strings.NewReader("Phone,phone,First,Last,Order ID\n"), brOptions())
	fileError(t, res.err, audience.ErrDuplicateName, 1)
	res = parse(t, strings.NewReader(""), brOptions())
	fileError(t, res.err, audience.ErrEmpty, 0)
	res = parse(t, strings.NewReader("Phone,First,Last,Order ID\r+5511987654321,Ana,,1\r"), brOptions())
	fileError(t, res.err, audience.ErrMalformedHeader, 1)
	opts = brOptions()
	opts.DefaultCountry = "XX"
	res = parse(t, strings.NewReader(csv), opts)
	fileError(t, res.err, audience.ErrOptions, 0)
}

// countingReader counts the bytes read from r.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func TestTenMegabyteLineRefusedWithoutBufferingIt(t *testing.T) {
	head := "Phone,First,Last,Order ID\n+55 11 98765-4321,Ana,,1\n+55 11 91234-5678,Bia,,2\n"
	long := strings.Repeat("x", 10<<20)
	src := &countingReader{r: io.MultiReader(strings.NewReader(head), strings.NewReader("+55 11 93333-4444,"+long+"\n"))}
	res := parse(t, src, brOptions())
	fe := fileError(t, res.err, audience.ErrLineTooLong, 4)
	if !strings.Contains(fe.Error(), "line 4") {
		t.Fatalf("message %q", fe.Error())
	}
	if src.n > 1<<20 {
		t.Fatalf("read %d bytes of the 10 MB line before refusing it", src.n)
	}
	// A quote never closed makes one record of every later line: bounded the same way.
	lines := strings.Repeat("+55 11 93333-4444,Ana,,1\n", 400_000)
	src = &countingReader{r: strings.NewReader(head + "+55 11 93333-4444,\"open quote,,1\n" + lines)}
	res = parse(t, src, brOptions())
	fileError(t, res.err, audience.ErrLineTooLong, 0)
	if src.n > 1<<20 {
		t.Fatalf("read %d bytes after an open quote", src.n)
	}
}

// endless is an endless CSV body of valid rows.
type endless struct {
	i   int
	buf []byte
}

func (e *endless) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if len(e.buf) == 0 {
			e.buf = fmt.Appendf(nil, "+55 11 9%04d-%04d,Name %d,,%d\n", (e.i/10000)%10000, e.i%10000, e.i, e.i)
			e.i++
		}
		c := copy(p[n:], e.buf)
		e.buf = e.buf[c:]
		n += c
	}
	return n, nil
}

func TestFileOverTheByteCapRefused(t *testing.T) {
	// A stream of unknown length stops at the cap.
	src := &countingReader{r: io.MultiReader(strings.NewReader("Phone,First,Last,Order ID\n"), &endless{})}
	opts := brOptions()
	opts.MaxBytes = 1 << 20
	res := parse(t, src, opts)
	fileError(t, res.err, audience.ErrTooLarge, 0)
	if src.n > 2<<20 {
		t.Fatalf("read %d bytes with a 1 MB cap", src.n)
	}
	// And the row cap.
	opts = brOptions()
	opts.MaxRows = 100
	res = parse(t, io.MultiReader(strings.NewReader("Phone,First,Last,Order ID\n"), &endless{}), opts)
	fileError(t, res.err, audience.ErrTooManyRows, 102)
}

func TestDelimiterDetectedAndHeaderSuggested(t *testing.T) {
	csv := "Nome;Sobrenome;Celular;Pedido\nAna;Silva;(11) 98765-4321;\"1;2\"\n"
	names, comma, err := audience.Header(strings.NewReader(csv), audience.Options{})
	if err != nil || comma != ';' || !reflect.DeepEqual(names, []string{"Nome", "Sobrenome", "Celular", "Pedido"}) {
		t.Fatalf("Header = %q %q %v", names, comma, err)
	}
	m := audience.SuggestMapping(names)
	if m.Number != "Celular" || m.FirstName != "Nome" || m.LastName != "Sobrenome" {
		t.Fatalf("SuggestMapping = %+v", m)
	}
	m.Variables = map[string]string{"pedido": "pedido"}
	res := parse(t, strings.NewReader(csv), audience.Options{DefaultCountry: "br", Mapping: m})
	if res.err != nil || len(res.rows) != 1 || res.rows[0].Variables["pedido"] != "1;2" || res.rows[0].Number != "5511987654321" {
		t.Fatalf("%v %+v", res.err, res.rows)
	}
}

func TestHandlerErrorStopsParse(t *testing.T) {
	stop := errors.New("stop")
	calls := 0
	opts := audience.Options{DefaultCountry: "BR", Mapping: audience.Mapping{Number: "phone"}}
	_, err := audience.Parse(strings.NewReader("Phone\n+5511987654321\n+5511912345678\n"), opts, audience.Handlers{
		Row: func(audience.Row) error { calls++; return stop },
	})
	if !errors.Is(err, stop) || calls != 1 {
		t.Fatalf("err %v after %d calls", err, calls)
	}
}

// TestMobileFormsAgreeWithStore checks that the copy of the alias rules is the store's.
func TestMobileFormsAgreeWithStore(t *testing.T) {
	var inputs []string
	for _, prefix := range []string{"52", "521", "54", "549", "55", "5511", "55119", "1", "44", "5", "91"} {
		for n := 8; n <= 15; n++ {
			if n <= len(prefix) {
				continue
			}
			inputs = append(inputs, prefix+strings.Repeat("9", n-len(prefix)), prefix+strings.Repeat("3", n-len(prefix)))
		}
	}
	for _, in := range inputs {
		if got, want := audience.MobileForms(in), store.MobileForms(in); !reflect.DeepEqual(got, want) {
			t.Fatalf("MobileForms(%s) = %v, store says %v", in, got, want)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte("Phone,First,Last,Order ID\n(11) 98765-4321,Ana,Silva,1\n+55 11 8765-4321,=x,,2\n"))
	f.Add([]byte("Phone;First\n\"+55 11\n98765-4321\";Ana\n"))
	f.Add([]byte("\xEF\xBB\xBFPhone\n\"unclosed\n"))
	f.Add(utf16LE("Phone\n+5511987654321\n", true))
	f.Fuzz(func(t *testing.T, data []byte) {
		opts := brOptions()
		opts.MaxLineBytes = 256
		opts.Mapping.Variables = nil
		var rows, rejs, dups int
		lastLine := 1
		sum, err := audience.Parse(bytes.NewReader(data), opts, audience.Handlers{
			Row: func(r audience.Row) error {
				rows++
				if r.Line <= lastLine || len(r.Number) < 8 || len(r.Number) > 15 || strings.Trim(r.Number, "0123456789") != "" {
					t.Fatalf("row %+v after line %d", r, lastLine)
				}
				lastLine = r.Line
				return nil
			},
			Reject:    func(audience.Rejection) error { rejs++; return nil },
			Duplicate: func(audience.Duplicate) error { dups++; return nil },
		})
		if err != nil {
			var fe *audience.FileError
			if !errors.As(err, &fe) {
				t.Fatalf("error %v is not a FileError", err)
			}
			return
		}
		if sum.Valid != rows || sum.Rejected != rejs || sum.DuplicatesMerged != dups || sum.Rows != rows+rejs+dups {
			t.Fatalf("summary %+v, handlers saw %d rows %d rejections %d duplicates", sum, rows, rejs, dups)
		}
	})
}
