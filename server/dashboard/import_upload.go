package dashboard

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"time"
)

// The spreadsheet upload: the file is streamed from the multipart body to a file of its own
// (never held in memory), where the mapping step reads it once the person has chosen the
// columns. The file is deleted when the import is staged or refused; files left by an
// abandoned mapping are deleted a day later, at the next upload.

// ImportMaxBytes bounds an uploaded spreadsheet: two million rows of a few columns fit.
const ImportMaxBytes = 256 << 20

// importFormSlack is room for the multipart framing and the form's other fields.
const importFormSlack = 64 << 10

// importUploadTTL is how long an uploaded file waits for its mapping.
const importUploadTTL = 24 * time.Hour

// errUploadTooLarge and errUploadNoFile refuse an upload.
var (
	errUploadTooLarge = fmt.Errorf("the file is larger than %d MB, the most one import takes: split it into smaller files", ImportMaxBytes>>20)
	errUploadNoFile   = errors.New("choose a CSV file to upload")
)

// uploadToken names an uploaded file (with the account's id, so that a token is only ever
// opened in its own workspace).
var uploadToken = regexp.MustCompile(`^[0-9a-f]{32}$`)

func importDir() string { return filepath.Join(os.TempDir(), "gateway-imports") }

func uploadPath(accountID int64, token string) string {
	return filepath.Join(importDir(), fmt.Sprintf("%d-%s.csv", accountID, token))
}

// receiveUpload streams the request's "file" part to a new upload file and returns its token.
// A Content-Length over the bound is refused before a byte is read; a body without one is cut
// at the bound.
func receiveUpload(w http.ResponseWriter, r *http.Request, accountID int64) (string, error) {
	if r.ContentLength > ImportMaxBytes+importFormSlack {
		return "", errUploadTooLarge
	}
	r.Body = http.MaxBytesReader(w, r.Body, ImportMaxBytes+importFormSlack)
	mr, err := r.MultipartReader()
	if err != nil {
		return "", errUploadNoFile
	}
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			return "", errUploadNoFile
		}
		if err != nil {
			return "", uploadReadError(err)
		}
		if part.FormName() != "file" {
			part.Close()
			continue
		}
		if part.FileName() == "" {
			return "", errUploadNoFile
		}
		return saveUpload(part, accountID)
	}
}

func uploadReadError(err error) error {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return errUploadTooLarge
	}
	return fmt.Errorf("the upload did not arrive whole (%v): try again", err)
}

// saveUpload writes src to a new upload file, at most ImportMaxBytes.
func saveUpload(src io.Reader, accountID int64) (string, error) {
	if err := os.MkdirAll(importDir(), 0o700); err != nil {
		return "", err
	}
	removeStaleUploads(time.Now())
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	token := hex.EncodeToString(b[:])
	path := uploadPath(accountID, token)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return "", err
	}
	n, err := io.Copy(f, io.LimitReader(src, ImportMaxBytes+1))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	switch {
	case err != nil:
		os.Remove(path)
		return "", uploadReadError(err)
	case n > ImportMaxBytes:
		os.Remove(path)
		return "", errUploadTooLarge
	case n == 0:
		os.Remove(path)
		return "", errors.New("the file is empty")
	}
	return token, nil
}

// openUpload opens the account's upload file of the token; false when there is none (a
// malformed token, another workspace's, or one already used or expired).
func openUpload(accountID int64, token string) (*os.File, bool) {
	if !uploadToken.MatchString(token) {
		return nil, false
	}
	f, err := os.Open(uploadPath(accountID, token))
	return f, err == nil
}

func removeUpload(accountID int64, token string) {
	if uploadToken.MatchString(token) {
		os.Remove(uploadPath(accountID, token))
	}
}

// removeStaleUploads deletes upload files older than importUploadTTL.
func removeStaleUploads(now time.Time) {
	entries, err := os.ReadDir(importDir())
	if err != nil {
		return
	}
	for _, e := range entries {
		if info, err := e.Info(); err == nil && now.Sub(info.ModTime()) > importUploadTTL {
			os.Remove(filepath.Join(importDir(), e.Name()))
		}
	}
}
