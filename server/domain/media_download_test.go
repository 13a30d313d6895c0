package domain

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

// dribble returns data in reads of at most n bytes, the last one with io.EOF or separately.
type dribble struct {
	r *bytes.Reader
	n int
}

func (d *dribble) Read(p []byte) (int, error) { return d.r.Read(p[:min(len(p), d.n)]) }
func (d *dribble) Close() error               { return nil }

func download(body io.Reader, length int64, want []byte) *MediaDownload {
	rc, ok := body.(io.ReadCloser)
	if !ok {
		rc = io.NopCloser(body)
	}
	return newMediaDownload(rc, "application/pdf", length, want, 0, func() {})
}

// A whole, matching file is written complete; every failure leaves the receiver at least one
// byte short of Length, whatever the reads' sizes.
func TestMediaDownloadWriteTo(t *testing.T) {
	t.Parallel()
	data := bytes.Repeat([]byte("0123456789abcdef"), 5000) // 80,000 bytes: several buffers
	sum := sha256.Sum256(data)
	wrong := sha256.Sum256([]byte("another file"))
	for _, chunk := range []int{1, 7, 4096, mediaCopyBuffer, 1 << 20} {
		cases := []struct {
			name    string
			body    io.Reader
			length  int64
			want    []byte
			wantErr error
		}{
			{"whole", &dribble{bytes.NewReader(data), chunk}, int64(len(data)), sum[:], nil},
			{"whole, EOF with the data", iotest.DataErrReader(&dribble{bytes.NewReader(data), chunk}), int64(len(data)), sum[:], nil},
			{"unchecked", &dribble{bytes.NewReader(data), chunk}, int64(len(data)), nil, nil},
			{"mismatch", &dribble{bytes.NewReader(data), chunk}, int64(len(data)), wrong[:], ErrMediaChecksum},
			{"mismatch, EOF with the data", iotest.DataErrReader(&dribble{bytes.NewReader(data), chunk}), int64(len(data)), wrong[:], ErrMediaChecksum},
			{"shorter than announced", &dribble{bytes.NewReader(data), chunk}, int64(len(data)) + 10, sum[:], ErrMediaIncomplete},
			{"longer than announced", &dribble{bytes.NewReader(data), chunk}, int64(len(data)) - 1, nil, ErrMediaIncomplete},
			{"broken", io.MultiReader(&dribble{bytes.NewReader(data[:5000]), chunk}, iotest.ErrReader(errors.New("connection reset"))), int64(len(data)), sum[:], ErrMediaIncomplete},
		}
		for _, c := range cases {
			var out bytes.Buffer
			n, err := download(c.body, c.length, c.want).WriteTo(&out)
			if !errors.Is(err, c.wantErr) || (c.wantErr == nil && err != nil) {
				t.Fatalf("chunk %d, %s: error %v, want %v", chunk, c.name, err, c.wantErr)
			}
			if n != int64(out.Len()) {
				t.Fatalf("chunk %d, %s: reported %d bytes, wrote %d", chunk, c.name, n, out.Len())
			}
			if c.wantErr == nil && !bytes.Equal(out.Bytes(), data) {
				t.Fatalf("chunk %d, %s: wrote %d bytes, not the file", chunk, c.name, out.Len())
			}
			if c.wantErr != nil && int64(out.Len()) >= c.length {
				t.Fatalf("chunk %d, %s: wrote %d of the %d announced bytes on a failure", chunk, c.name, out.Len(), c.length)
			}
		}
	}
}

// blockingBody answers nothing until the download's context ends.
type blockingBody struct{ ctx context.Context }

func (b blockingBody) Read([]byte) (int, error) { <-b.ctx.Done(); return 0, b.ctx.Err() }
func (b blockingBody) Close() error             { return nil }

// A download that receives nothing for its stall time is cut; a slow receiver is not a stall.
func TestMediaDownloadStall(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	d := newMediaDownload(blockingBody{ctx}, "image/png", 10, nil, 50*time.Millisecond, cancel)
	defer d.Close()
	_, err := io.Copy(io.Discard, d)
	if !errors.Is(err, ErrMediaIncomplete) || !strings.Contains(err.Error(), "no byte from the platform") {
		t.Fatalf("stalled download: %v", err)
	}

	data := []byte("a small file")
	sum := sha256.Sum256(data)
	d = newMediaDownload(&dribble{bytes.NewReader(data), 1}, "text/plain", int64(len(data)), sum[:], 20*time.Millisecond, func() {})
	defer d.Close()
	var out bytes.Buffer
	slow := writerFunc(func(p []byte) (int, error) { time.Sleep(30 * time.Millisecond); return out.Write(p) })
	if _, err := d.WriteTo(slow); err != nil || !bytes.Equal(out.Bytes(), data) {
		t.Fatalf("a slow receiver: %v, %q", err, out.Bytes())
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// The webhook's sum comes in base64 and the platform's in hex; both are read.
func TestDecodeSHA256(t *testing.T) {
	t.Parallel()
	sum := sha256.Sum256([]byte("x"))
	for _, s := range []string{"2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881", "LXEWQrcmsEQBYnyp+6wy9chTD7GQPMTbAiWHF5IaSIE=", "LXEWQrcmsEQBYnyp-6wy9chTD7GQPMTbAiWHF5IaSIE"} {
		got, err := decodeSHA256(s)
		if err != nil || !bytes.Equal(got, sum[:]) {
			t.Fatalf("%q: %x %v", s, got, err)
		}
	}
	if _, err := decodeSHA256("not a sum"); err == nil {
		t.Fatal("a non-sum was read")
	}
}
