package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/textproto"

	"gateway/sdkcheck/go/client"
)

// The media steps of the Go scenario: receive an image from the simulator's handset and fetch
// it through GET /media/{media_id}, checking its sha256; upload a file with POST /media and read
// it back.

// logoPNG is a 16×16 PNG.
var logoPNG, _ = base64.StdEncoding.DecodeString("iVBORw0KGgoAAAANSUhEUgAAABAAAAAQCAIAAACQkWg2AAAAIUlEQVR4nGJhYFggwMBAPGIBEaSAUQ2jGoaOBkAAAAD//4jaAsHcJKSLAAAAAElFTkSuQmCC")

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// It returns what it did and the media id of the upload (the answer steps send it).
func mediaSteps(ctx context.Context, live *client.ClientWithResponses, simulatorURL, phoneNumberID string) (summary, uploaded string, err error) {
	// Receive an image: the simulator's handset sends one to the dev number (its control API
	// says which media id and sha256 the webhook carried), and the key's holder fetches it.
	in, _ := json.Marshal(map[string]any{"phone_number_id": phoneNumberID, "from": "15551234567", "name": "Ana", "type": "image",
		"payload": map[string]any{"caption": "sdkcheck"}})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, simulatorURL+"/_sim/inbound", bytes.NewReader(in))
	if err != nil {
		return "", "", err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", "", err
	}
	var injected struct {
		MediaID string `json:"media_id"`
		SHA256  string `json:"sha256"`
	}
	err = json.NewDecoder(resp.Body).Decode(&injected)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		return "", "", fmt.Errorf("the simulator's handset did not send an image: %s %v", resp.Status, err)
	}
	image, err := live.GetMediaWithResponse(ctx, injected.MediaID)
	if err != nil || image.StatusCode() != http.StatusOK {
		return "", "", fmt.Errorf("GET /media/%s: %v %s", injected.MediaID, err, body(image))
	}
	if got := sha256Hex(image.Body); got != injected.SHA256 {
		return "", "", fmt.Errorf("image sha256 %s, the handset sent %s", got, injected.SHA256)
	}
	sum, _ := hex.DecodeString(injected.SHA256)
	if d := image.HTTPResponse.Header.Get("Repr-Digest"); d != "sha-256=:"+base64.StdEncoding.EncodeToString(sum)+":" {
		return "", "", fmt.Errorf("Repr-Digest %q", d)
	}

	// Upload a file for answers, then read it back.
	var form bytes.Buffer
	mw := multipart.NewWriter(&form)
	mw.WriteField("type", "image/png")
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", `form-data; name="file"; filename="logo.png"`)
	h.Set("Content-Type", "image/png")
	part, _ := mw.CreatePart(h)
	part.Write(logoPNG)
	mw.Close()
	up, err := live.UploadMediaWithBodyWithResponse(ctx, mw.FormDataContentType(), &form)
	if err != nil || up.JSON200 == nil {
		return "", "", fmt.Errorf("POST /media: %v %s", err, body(up))
	}
	u := up.JSON200.Data
	if u.Kind != client.MediaKindImage || u.FileSize != int64(len(logoPNG)) || u.Sha256 != sha256Hex(logoPNG) {
		return "", "", fmt.Errorf("upload %+v", u)
	}
	back, err := live.GetMediaWithResponse(ctx, u.MediaId)
	if err != nil || back.StatusCode() != http.StatusOK || !bytes.Equal(back.Body, logoPNG) {
		return "", "", fmt.Errorf("GET /media/%s: %v %s", u.MediaId, err, body(back))
	}
	return fmt.Sprintf("image %s fetched (%d bytes, sha256 checked), upload %s read back", injected.MediaID, len(image.Body), u.MediaId), u.MediaId, nil
}
