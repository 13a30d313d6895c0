package whatsapp

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"strings"
)

// A checksum-verifying reader for the tests that download media (here and from the
// simulator). The product checks a download's sum in the domain's media download
// (domain.ErrMediaChecksum), so this client-side reader lives with the tests.

// ErrChecksumMismatch is returned by ChecksumReader at the end of a file whose SHA-256 is not
// the expected one.
var ErrChecksumMismatch = errors.New("whatsapp: media sha256 mismatch")

// ChecksumReader passes a file through and checks its SHA-256 at the end: the Read that reaches
// the end returns ErrChecksumMismatch (wrapped, with both sums) instead of io.EOF when the file
// is not the expected one. Use it around a MediaStream to verify while streaming.
type ChecksumReader struct {
	r    io.Reader
	h    hash.Hash
	want []byte
	n    int64
	err  error // the final verdict, once reached
}

// NewChecksumReader wraps r to check that its content has the SHA-256 want, given in hex (as
// the media lookup gives it) or base64 (as webhooks give it). A want that is neither fails
// with ErrInvalidArgument.
func NewChecksumReader(r io.Reader, want string) (*ChecksumReader, error) {
	sum, err := decodeSHA256(want)
	if err != nil {
		return nil, err
	}
	return &ChecksumReader{r: r, h: sha256.New(), want: sum}, nil
}

func decodeSHA256(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	if len(s) == 64 {
		if b, err := hex.DecodeString(s); err == nil {
			return b, nil
		}
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil && len(b) == sha256.Size {
			return b, nil
		}
	}
	return nil, fmt.Errorf("%w: %q is not a SHA-256 in hex or base64", ErrInvalidArgument, s)
}

// Read reads from the wrapped reader, hashing what passes.
func (c *ChecksumReader) Read(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.r.Read(p)
	c.h.Write(p[:n])
	c.n += int64(n)
	if err == io.EOF {
		if got := c.h.Sum(nil); !bytes.Equal(got, c.want) {
			err = fmt.Errorf("%w: got %x after %d bytes, want %x", ErrChecksumMismatch, got, c.n, c.want)
		}
		c.err = err
	}
	return n, err
}

// BytesRead is how many bytes have passed so far.
func (c *ChecksumReader) BytesRead() int64 { return c.n }

// Close closes the wrapped reader when it is an io.Closer.
func (c *ChecksumReader) Close() error {
	if cl, ok := c.r.(io.Closer); ok {
		return cl.Close()
	}
	return nil
}
