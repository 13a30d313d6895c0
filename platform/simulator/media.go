package simulator

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"math/rand/v2"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Media: what users send (created with deterministic content for an inbound message, so a test
// can stream 100 MB without storing it) and what the business uploads, served through the
// Graph media endpoints:
//
//	GET    /{version}/{media-id}              → {url, mime_type, sha256 (hex), file_size, id}
//	GET    <url>  with the Bearer token       → the bytes (the URL expires after MediaURLTTL)
//	POST   /{version}/{phone-number-id}/media  multipart {messaging_product, type, file} → {id}
//	DELETE /{version}/{media-id}              → {success: true}

// MediaURLTTL is how long a media URL from GET /{media-id} can be fetched.
const MediaURLTTL = 5 * time.Minute

// mediaPathPrefix is the path of media URLs (outside the Graph versions and the control API).
const mediaPathPrefix = "/_media/"

// maxUploadBody bounds an upload request: the largest file plus the form around it.
const maxUploadBody = maxMediaBytes + 1<<20

const maxMediaBytes = 100 << 20

// mediaLimit is what the platform accepts for one MIME type.
type mediaLimit struct {
	kind     string
	maxBytes int64
}

// mediaLimits are the platform's upload types and sizes (reference §12; 1 MB = 2^20 bytes);
// webp stickers are checked against the animated limit.
var mediaLimits = map[string]mediaLimit{
	"image/jpeg":                    {"image", 5 << 20},
	"image/png":                     {"image", 5 << 20},
	"video/mp4":                     {"video", 16 << 20},
	"video/3gpp":                    {"video", 16 << 20},
	"audio/aac":                     {"audio", 16 << 20},
	"audio/amr":                     {"audio", 16 << 20},
	"audio/mpeg":                    {"audio", 16 << 20},
	"audio/mp4":                     {"audio", 16 << 20},
	"audio/ogg":                     {"audio", 16 << 20},
	"image/webp":                    {"sticker", 500 << 10},
	"text/plain":                    {"document", maxMediaBytes},
	"application/pdf":               {"document", maxMediaBytes},
	"application/msword":            {"document", maxMediaBytes},
	"application/vnd.ms-excel":      {"document", maxMediaBytes},
	"application/vnd.ms-powerpoint": {"document", maxMediaBytes},
	"application/vnd.openxmlformats-officedocument.wordprocessingml.document":   {"document", maxMediaBytes},
	"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet":         {"document", maxMediaBytes},
	"application/vnd.openxmlformats-officedocument.presentationml.presentation": {"document", maxMediaBytes},
}

// inboundMediaDefaults are the MIME type and size of media created for an inbound message
// that names neither.
var inboundMediaDefaults = map[string]struct {
	mimeType string
	size     int64
}{
	"image":    {"image/jpeg", 64 << 10},
	"video":    {"video/mp4", 1 << 20},
	"audio":    {"audio/ogg; codecs=opus", 32 << 10},
	"document": {"application/pdf", 128 << 10},
	"sticker":  {"image/webp", 16 << 10},
}

func isMediaType(t string) bool {
	_, ok := inboundMediaDefaults[t]
	return ok
}

// MediaInfo describes a media object the simulator holds.
type MediaInfo struct {
	ID       string `json:"id"`
	WabaID   string `json:"waba_id"`
	MimeType string `json:"mime_type"`
	Size     int64  `json:"file_size"`
	SHA256   string `json:"sha256"` // hex
	Filename string `json:"filename,omitempty"`
	Uploaded bool   `json:"uploaded"` // uploaded by the business (else created for an inbound message)
}

// mediaObject is a stored media file: uploaded bytes, or generated content (data nil).
type mediaObject struct {
	info MediaInfo
	data []byte
}

// mediaURL is a download URL's media and expiry.
type mediaURL struct {
	mediaID string
	expires time.Time
}

// open returns the media's content.
func (m *mediaObject) open() io.Reader {
	if m.data != nil {
		return bytes.NewReader(m.data)
	}
	return generatedContent(m.info.ID, m.info.Size)
}

// generatedContent is the deterministic content of a generated media object: a ChaCha8 stream
// seeded from its id.
func generatedContent(id string, size int64) io.Reader {
	seed := sha256.Sum256([]byte("simulator-media:" + id))
	return io.LimitReader(rand.NewChaCha8(seed), size)
}

// newMediaID returns a numeric media id like the platform's.
func newMediaID() string {
	return strconv.FormatUint(1_000_000_000_000_000+rand.Uint64N(8_999_999_999_999_999), 10)
}

// Media returns what the simulator holds for a media id; ok is false for an unknown id.
func (s *Simulator) Media(id string) (MediaInfo, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.media[id]
	if !ok {
		return MediaInfo{}, false
	}
	return m.info, true
}

// Uploads is how many media objects the business uploaded that the simulator holds.
func (s *Simulator) Uploads() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, m := range s.media {
		if m.info.Uploaded {
			n++
		}
	}
	return n
}

// OpenMedia returns the content of a media object (generated content is produced as it is
// read, never stored); ok is false for an unknown id.
func (s *Simulator) OpenMedia(id string) (r io.Reader, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.media[id]
	if !ok {
		return nil, false
	}
	return m.open(), true
}

// inboundMedia creates the media of an inbound media message whose payload names no id, and
// returns the payload with id, mime_type and sha256 (base64) filled. The caller holds s.mu.
func (s *Simulator) inboundMedia(n Number, in Inbound, now time.Time) (any, Injected, error) {
	var p map[string]any
	switch v := in.Payload.(type) {
	case nil:
		p = map[string]any{}
	case map[string]any:
		if _, has := v["id"]; has {
			return v, Injected{}, nil
		}
		p = make(map[string]any, len(v)+3)
		for k, x := range v {
			p[k] = x
		}
	default:
		return nil, Injected{}, fmt.Errorf("simulator: a %s payload must be an object", in.Type)
	}
	def := inboundMediaDefaults[in.Type]
	mimeType, _ := p["mime_type"].(string)
	if mimeType == "" {
		mimeType = def.mimeType
	}
	size := in.MediaSize
	if size <= 0 {
		size = def.size
	}
	if size > maxMediaBytes {
		return nil, Injected{}, fmt.Errorf("simulator: media size %d exceeds the platform's %d", size, maxMediaBytes)
	}
	id := newMediaID()
	h := sha256.New()
	_, _ = io.Copy(h, generatedContent(id, size))
	sum := h.Sum(nil)
	filename, _ := p["filename"].(string)
	s.media[id] = &mediaObject{info: MediaInfo{ID: id, WabaID: n.WabaID, MimeType: mimeType, Size: size, SHA256: hex.EncodeToString(sum), Filename: filename}}
	p["id"], p["mime_type"], p["sha256"] = id, mimeType, base64.StdEncoding.EncodeToString(sum)
	return p, Injected{MediaID: id, SHA256: hex.EncodeToString(sum), MediaSize: size}, nil
}

// mediaAccess checks the token of a media request: a token of a number of the media's WABA.
// The caller holds s.mu.
func (s *Simulator) mediaAccess(tok string, m *mediaObject) bool {
	for _, n := range s.numbers {
		if n.AccessToken == tok && n.WabaID == m.info.WabaID {
			return true
		}
	}
	return false
}

// serveMediaObject implements GET and DELETE /{version}/{media-id}.
func (s *Simulator) serveMediaObject(w http.ResponseWriter, r *http.Request, id, trace string) {
	tok := bearer(r)
	s.mu.Lock()
	m, known := s.media[id]
	_, tokenKnown := s.tokens[tok]
	allowed := known && s.mediaAccess(tok, m)
	now := s.clock()
	var urlTok string
	if allowed && r.Method == http.MethodGet {
		urlTok = strings.ToLower(randomHex(16))
		s.mediaURLs[urlTok] = mediaURL{mediaID: id, expires: now.Add(MediaURLTTL)}
	}
	if allowed && r.Method == http.MethodDelete {
		delete(s.media, id)
	}
	s.mu.Unlock()
	switch {
	case tok == "" || !tokenKnown:
		tokenError().write(w, trace)
	case !allowed:
		unknownObjectError(strings.ToLower(r.Method), id).write(w, trace)
	case r.Method == http.MethodDelete:
		writeGraphJSON(w, http.StatusOK, map[string]any{"success": true})
	default:
		writeGraphJSON(w, http.StatusOK, map[string]any{
			"url":               "http://" + r.Host + mediaPathPrefix + urlTok + "?mid=" + id + "&ext=" + strconv.FormatInt(now.Unix(), 10),
			"mime_type":         m.info.MimeType,
			"sha256":            m.info.SHA256,
			"file_size":         m.info.Size,
			"id":                id,
			"messaging_product": "whatsapp",
		})
	}
}

// serveMediaDownload implements GET of a media URL: the bytes, with the Bearer token of the
// media's WABA, until the URL expires.
func (s *Simulator) serveMediaDownload(w http.ResponseWriter, r *http.Request, urlTok string) {
	trace := traceID()
	tok := bearer(r)
	s.mu.Lock()
	u, found := s.mediaURLs[urlTok]
	m := s.media[u.mediaID]
	now := s.clock()
	allowed := found && m != nil && s.mediaAccess(tok, m)
	var body io.Reader
	if allowed {
		body = m.open()
	}
	s.mu.Unlock()
	switch {
	case r.Method != http.MethodGet:
		unknownPathError(r.URL.Path).write(w, trace)
	case tok == "":
		tokenError().write(w, trace)
	case !found || m == nil:
		(&graphError{status: http.StatusNotFound, typ: "OAuthException", code: 100, message: "Media URL not found", noData: true}).write(w, trace)
	case !now.Before(u.expires):
		(&graphError{status: http.StatusNotFound, typ: "OAuthException", code: 100, message: "Media URL expired: look the media id up again", noData: true}).write(w, trace)
	case !allowed:
		tokenError().write(w, trace)
	default:
		w.Header().Set("Content-Type", m.info.MimeType)
		w.Header().Set("Content-Length", strconv.FormatInt(m.info.Size, 10))
		w.WriteHeader(http.StatusOK)
		_, _ = io.Copy(w, body)
	}
}

// serveUpload implements POST /{version}/{phone-number-id}/media: multipart messaging_product,
// type (the MIME type) and file, checked against the platform's types and sizes.
func (s *Simulator) serveUpload(w http.ResponseWriter, r *http.Request, phoneID, trace string) {
	tok := bearer(r)
	s.mu.Lock()
	n, known := s.numbers[phoneID]
	_, tokenKnown := s.tokens[tok]
	s.mu.Unlock()
	switch {
	case tok == "" || !tokenKnown || (known && n.AccessToken != tok):
		tokenError().write(w, trace)
		return
	case !known:
		unknownObjectError("post", phoneID).write(w, trace)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxUploadBody)
	reader, err := r.MultipartReader()
	if err != nil {
		paramError("Invalid parameter", "the upload must be multipart/form-data: "+err.Error()).write(w, trace)
		return
	}
	fields := map[string]string{}
	var (
		data     []byte
		filename string
		gotFile  bool
	)
	for {
		part, err := reader.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			paramError("Invalid parameter", "the multipart body could not be read: "+err.Error()).write(w, trace)
			return
		}
		name := part.FormName()
		if name == "file" {
			gotFile, filename = true, part.FileName()
			var buf bytes.Buffer
			nread, err := io.Copy(&buf, io.LimitReader(part, maxMediaBytes+1))
			if err != nil {
				paramError("Invalid parameter", "the file could not be read: "+err.Error()).write(w, trace)
				return
			}
			if nread > maxMediaBytes {
				waError(131053, "The file is larger than the platform's largest media size (100 MB).").write(w, trace)
				return
			}
			data = buf.Bytes()
			continue
		}
		v, _ := io.ReadAll(io.LimitReader(part, 4096))
		fields[name] = string(v)
	}
	typ := fields["type"]
	mt, _, _ := mime.ParseMediaType(typ)
	limit, accepted := mediaLimits[mt]
	switch {
	case fields["messaging_product"] != "whatsapp":
		paramError("The parameter messaging_product is required.", "messaging_product must be whatsapp").write(w, trace)
	case !gotFile:
		paramError("The parameter file is required.", "file is required").write(w, trace)
	case typ == "":
		paramError("The parameter type is required.", "type is required").write(w, trace)
	case !accepted:
		waError(131053, "Unsupported file type "+strconv.Quote(typ)+".").write(w, trace)
	case int64(len(data)) > limit.maxBytes:
		waError(131053, fmt.Sprintf("The %s is %d bytes; the limit for %s is %d bytes.", limit.kind, len(data), mt, limit.maxBytes)).write(w, trace)
	default:
		sum := sha256.Sum256(data)
		id := newMediaID()
		s.mu.Lock()
		s.media[id] = &mediaObject{info: MediaInfo{ID: id, WabaID: n.WabaID, MimeType: typ, Size: int64(len(data)), SHA256: hex.EncodeToString(sum[:]), Filename: filename, Uploaded: true}, data: data}
		s.mu.Unlock()
		writeGraphJSON(w, http.StatusOK, map[string]any{"id": id})
	}
}
