package domain

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"

	"gateway/server/refusal"
	"gateway/store"
)

// MediaFile is a file received for an upload, kept in an unlinked temporary file while it is
// checked and sent, so that its size and SHA-256 are known before the platform is called and
// memory stays the same whatever its size. Close it.
type MediaFile struct {
	Filename string // as the client named it
	PartType string // the Content-Type of the file's part ("" when none)
	Size     int64
	SHA256   string // hex
	f        *os.File
}

// ReceiveMediaFile reads a file from r into a temporary file, at most maxBytes. A longer file
// fails with a *MediaError (MediaTooLarge) once maxBytes+1 bytes were read; a read failure is
// returned as it came (the request body's limit, a broken connection).
func ReceiveMediaFile(r io.Reader, filename, partType string, maxBytes int64) (*MediaFile, error) {
	f, err := os.CreateTemp("", "gateway-upload-*")
	if err != nil {
		return nil, err
	}
	// Unlinked at once: the file goes away with its descriptor, whatever happens next.
	if err := os.Remove(f.Name()); err != nil {
		f.Close()
		return nil, err
	}
	h := sha256.New()
	buf := make([]byte, mediaCopyBuffer)
	n, err := io.CopyBuffer(io.MultiWriter(f, h), io.LimitReader(r, maxBytes+1), buf)
	if err != nil {
		f.Close()
		return nil, err
	}
	if n > maxBytes {
		f.Close()
		return nil, &MediaError{Failure: MediaTooLarge, Message: fmt.Sprintf("The file is over %d bytes (%d MiB), the platform's largest media file", maxBytes, maxBytes>>20)}
	}
	return &MediaFile{Filename: filename, PartType: partType, Size: n, SHA256: hex.EncodeToString(h.Sum(nil)), f: f}, nil
}

// Close removes the file.
func (m *MediaFile) Close() error { return m.f.Close() }

// reader reads the file from its start.
func (m *MediaFile) reader() (io.Reader, error) {
	if _, err := m.f.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	return io.LimitReader(m.f, m.Size), nil
}

// UploadedMedia is a file the platform accepted.
type UploadedMedia struct {
	MediaID  string
	Kind     string // image, video, audio, document or sticker
	MimeType string
	Size     int64
	SHA256   string // hex
	// Simulated: a test key's upload, checked but not sent to the platform.
	Simulated bool
}

// CheckMediaUpload checks a file of size bytes and type mimeType against the platform's limits
// (limits, as Media.Limits) and returns the kind of message it can be sent as. It fails with a
// *MediaError: MediaInvalid naming `type` (none given, or one the platform does not take) or
// `file` (empty), MediaTooLarge over the kind's limit.
func CheckMediaUpload(limits func(string) (string, int64, bool), mimeType string, size int64) (string, error) {
	if mimeType == "" {
		return "", &MediaError{Failure: MediaInvalid, Message: "Invalid request: type",
			Fields: refusal.One("type", "required: the file's MIME type, such as image/jpeg (or send it as the file part's Content-Type)")}
	}
	kind, maxBytes, ok := limits(mimeType)
	if !ok {
		return "", &MediaError{Failure: MediaInvalid, Message: "Invalid request: type",
			Fields: refusal.One("type", fmt.Sprintf("the platform does not take %q: images are image/jpeg or image/png, video video/mp4 or video/3gpp, audio audio/aac, audio/amr, audio/mpeg, audio/mp4 or audio/ogg, stickers image/webp, documents application/pdf, text/plain or office formats", mimeType))}
	}
	if size == 0 {
		return "", &MediaError{Failure: MediaInvalid, Message: "Invalid request: file", Fields: refusal.One("file", "is empty")}
	}
	if size > maxBytes {
		return "", &MediaError{Failure: MediaTooLarge, Message: fmt.Sprintf("The %s is %d bytes; the platform takes %s files up to %d bytes (%s)", kind, size, mimeType, maxBytes, sizeWords(maxBytes))}
	}
	return kind, nil
}

// sizeWords says a limit in MiB or KiB.
func sizeWords(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d KiB", n>>10)
}

// Upload checks a received file (CheckMediaUpload) and, when it passes, uploads it with the
// account's number and records its id for the account (store.RecordMediaUpload), so GET
// /media/{id} and answers can tell it is the account's. Nothing reaches the platform before the
// checks pass. It fails with a *MediaError (the checks', MediaNotConnected, and the platform's
// as for Open) and with the database's error.
func (m Media) Upload(ctx context.Context, accountID int64, file *MediaFile, mimeType string) (UploadedMedia, error) {
	kind, err := CheckMediaUpload(m.Limits, mimeType, file.Size)
	if err != nil {
		return UploadedMedia{}, err
	}
	conn, err := m.connection(ctx, accountID)
	if err != nil {
		return UploadedMedia{}, err
	}
	r, err := file.reader()
	if err != nil {
		return UploadedMedia{}, err
	}
	id, err := m.Platform.UploadMedia(ctx, conn.AccessToken, conn.PhoneNumberID, file.Filename, mimeType, r)
	if err != nil {
		return UploadedMedia{}, mediaPlatformFailure(err, "take the upload")
	}
	up := UploadedMedia{MediaID: id, Kind: kind, MimeType: mimeType, Size: file.Size, SHA256: file.SHA256}
	if err := m.Store.RecordMediaUpload(ctx, accountID, store.MediaUploadRecord{MediaID: id, Kind: kind, MimeType: mimeType,
		Size: file.Size, SHA256: file.SHA256, Filename: file.Filename}); err != nil {
		return UploadedMedia{}, fmt.Errorf("record upload %s: %w", id, err)
	}
	return up, nil
}
