package domain

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"strings"
	"sync/atomic"
	"time"
)

// Failures of a download once it streams (the answer's status is sent by then): the bytes did
// not match the expected SHA-256, or the file did not arrive whole (the platform sent fewer or
// more bytes than announced, stalled, or the connection broke).
var (
	ErrMediaChecksum   = errors.New("media sha256 mismatch")
	ErrMediaIncomplete = errors.New("media not received whole")
)

// mediaCopyBuffer is the one buffer a download streams through: memory stays the same whatever
// the file's size. It is filled before it is written, so that a large file costs few writes
// (each a system call) and few reads of the platform's connection.
const mediaCopyBuffer = 256 << 10

// MediaDownload is a media file being streamed from the platform: exactly Length bytes, checked
// against the expected SHA-256 as they pass. Copy it with WriteTo (io.Copy does), which keeps the
// file's last byte back until the whole file has arrived and matched, so a failure always leaves
// the receiver at least one byte short of Length: no client takes a short or wrong file as
// complete. Close it when done.
type MediaDownload struct {
	ContentType string
	Length      int64
	// SHA256 is the expected sum (nil when neither the webhook nor the platform gave one: the
	// file is then passed unchecked).
	SHA256 []byte

	body    io.ReadCloser
	h       hash.Hash
	n       int64
	verdict error // the end's outcome once reached: io.EOF when whole and matching
	stall   time.Duration
	timer   *time.Timer
	stalled atomic.Bool
	cancel  context.CancelFunc
}

// newMediaDownload wraps body; cancel ends the transfer (it is called when the download stalls
// for stall, and by Close).
func newMediaDownload(body io.ReadCloser, contentType string, length int64, want []byte, stall time.Duration, cancel context.CancelFunc) *MediaDownload {
	d := &MediaDownload{ContentType: contentType, Length: length, SHA256: want, body: body, h: sha256.New(), stall: stall, cancel: cancel}
	if stall > 0 {
		d.timer = time.AfterFunc(stall, func() { d.stalled.Store(true); cancel() })
		d.timer.Stop()
	}
	return d
}

// NewStaticMediaDownload serves data as a download (test mode's fixture media).
func NewStaticMediaDownload(data []byte, contentType string) *MediaDownload {
	sum := sha256.Sum256(data)
	return newMediaDownload(io.NopCloser(bytes.NewReader(data)), contentType, int64(len(data)), sum[:], 0, func() {})
}

// Read reads the file. Past its end it returns io.EOF when the file was whole and matched the
// expected sum, and otherwise an error wrapping ErrMediaChecksum or ErrMediaIncomplete.
func (d *MediaDownload) Read(p []byte) (int, error) {
	if d.verdict != nil {
		return 0, d.verdict
	}
	if left := d.Length - d.n; int64(len(p)) > left+1 {
		// One byte past the announced length is read, to notice a longer file.
		p = p[:left+1]
	}
	// Only the wait for the platform counts towards a stall, not the time the receiver takes.
	if d.timer != nil {
		d.timer.Reset(d.stall)
	}
	k, err := d.body.Read(p)
	if d.timer != nil {
		d.timer.Stop()
	}
	d.h.Write(p[:k])
	d.n += int64(k)
	switch {
	case d.n > d.Length:
		d.verdict = fmt.Errorf("%w: the platform sent more than the %d bytes it announced", ErrMediaIncomplete, d.Length)
		return k, d.verdict
	case err == io.EOF && d.n < d.Length:
		d.verdict = fmt.Errorf("%w: the platform sent %d of the %d bytes it announced", ErrMediaIncomplete, d.n, d.Length)
	case err == io.EOF:
		d.verdict = io.EOF
		if got := d.h.Sum(nil); d.SHA256 != nil && !bytes.Equal(got, d.SHA256) {
			d.verdict = fmt.Errorf("%w: got %x after %d bytes, want %x", ErrMediaChecksum, got, d.n, d.SHA256)
		}
	case err != nil && d.stalled.Load():
		d.verdict = fmt.Errorf("%w: no byte from the platform for %s after %d of %d bytes", ErrMediaIncomplete, d.stall, d.n, d.Length)
	case err != nil:
		d.verdict = fmt.Errorf("%w: after %d of %d bytes: %w", ErrMediaIncomplete, d.n, d.Length, err)
	}
	if d.verdict != nil {
		return k, d.verdict
	}
	return k, nil
}

// WriteTo copies the file to w through one bounded buffer, keeping its last byte back until Read
// has reported the file whole and matching; then it writes that byte and returns nil. On a
// failure it returns Read's error (or w's) with the last byte, at least, unwritten.
func (d *MediaDownload) WriteTo(w io.Writer) (int64, error) {
	// buf[0] holds the byte kept back; each read lands after it.
	buf := make([]byte, 1+mediaCopyBuffer)
	var written int64
	held := 0
	for {
		k, err := d.fill(buf[1:])
		if err != nil && err != io.EOF {
			return written, err // what this read brought is not written either
		}
		if k > 0 {
			chunk := buf[1-held : 1+k]
			n, werr := w.Write(chunk[:len(chunk)-1])
			written += int64(n)
			if werr != nil {
				return written, werr
			}
			buf[0], held = buf[k], 1
		}
		if err != nil { // io.EOF: the file is whole and matched
			if held == 1 {
				n, werr := w.Write(buf[:1])
				written += int64(n)
				if werr != nil {
					return written, werr
				}
			}
			return written, nil
		}
	}
}

// fill reads into p until it is full or Read reports the end or a failure.
func (d *MediaDownload) fill(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		k, err := d.Read(p[n:])
		n += k
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// Close ends the transfer.
func (d *MediaDownload) Close() error {
	if d.timer != nil {
		d.timer.Stop()
	}
	err := d.body.Close()
	d.cancel()
	return err
}

// SHA256Base64 is the expected sum in base64 ("" when there is none), as Repr-Digest carries it.
func (d *MediaDownload) SHA256Base64() string {
	if d.SHA256 == nil {
		return ""
	}
	return base64.StdEncoding.EncodeToString(d.SHA256)
}

// decodeSHA256 reads a SHA-256 in hex (as the platform's lookup and our uploads give it) or
// base64 (as webhooks give it).
func decodeSHA256(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	if len(s) == 2*sha256.Size {
		if b, err := hex.DecodeString(s); err == nil {
			return b, nil
		}
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil && len(b) == sha256.Size {
			return b, nil
		}
	}
	return nil, fmt.Errorf("%q is not a SHA-256 in hex or base64", s)
}
