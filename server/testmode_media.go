package server

import (
	"context"
	_ "embed"
	"fmt"
	"strconv"

	"gateway/server/domain"
)

// Test mode's media (testMedia, which modeFor selects for test and demo keys): one fixture
// image served for a fixed media id, and uploads checked as live ones are but sent nowhere.

// TestMediaID is the media id a test or demo key can download: the fixture image.
const TestMediaID = "100000000000001"

// testMediaPNG is the fixture image, a 16×16 PNG.
//
//go:embed testmode_media.png
var testMediaPNG []byte

type testMedia struct{ s *Server }

// openMedia serves the fixture image for TestMediaID; any other id is not found.
func (testMedia) openMedia(_ context.Context, _ int64, mediaID string) (*domain.MediaDownload, error) {
	if mediaID != TestMediaID {
		return nil, &domain.MediaError{Failure: domain.MediaNotFound,
			Message: fmt.Sprintf("No media %s in test mode: a test key can download the fixture image %s", mediaID, TestMediaID)}
	}
	return domain.NewStaticMediaDownload(testMediaPNG, "image/png"), nil
}

// uploadMedia checks the file as a live upload is checked and answers with an id made from
// its SHA-256 (the same file, the same id); nothing is uploaded or stored.
func (t testMedia) uploadMedia(_ context.Context, _ int64, f *domain.MediaFile, mimeType string) (domain.UploadedMedia, error) {
	kind, err := domain.CheckMediaUpload(t.s.media.Limits, mimeType, f.Size)
	if err != nil {
		return domain.UploadedMedia{}, err
	}
	n, _ := strconv.ParseUint(f.SHA256[:15], 16, 64) // 60 bits of a hex sum
	id := fmt.Sprintf("9%015d", n%1_000_000_000_000_000)
	return domain.UploadedMedia{MediaID: id, Kind: kind, MimeType: mimeType, Size: f.Size, SHA256: f.SHA256, Simulated: true}, nil
}
