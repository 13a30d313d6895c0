package dashboard

import (
	"strconv"
	"strings"

	"gateway/server/refusal"
)

// sendInputs are the send form's inputs by the API's field path (the keys of a 422's errors):
// destination, name, campaign, header and body (header.N and body.N for one variable), media
// (the header as a whole), media_link, media_id, media_filename, location, latitude,
// longitude, location_name, location_address and buttons (button_N for one button).
var sendInputs = map[string]string{
	"destination": "destination", "name": "name", "campaign_name": "campaign",
	"body_variables": "body", "header_variables": "header",
	"header_media": "media", "header_media.type": "media", "header_media.link": "media_link",
	"header_media.id": "media_id", "header_media.filename": "media_filename",
	"header_location": "location", "header_location.latitude": "latitude", "header_location.longitude": "longitude",
	"header_location.name": "location_name", "header_location.address": "location_address",
	"button_variables": "buttons",
}

// sendInput is the form input a broken rule is about, or "" for the form as a whole (the
// template). A rule about a button goes to that button's input, whatever its path.
func sendInput(f refusal.Field) string {
	if f.Button != refusal.NoButton {
		return "button_" + strconv.Itoa(f.Button)
	}
	if in, ok := sendInputs[f.Path]; ok {
		return in
	}
	head, rest, _ := strings.Cut(f.Path, ".")
	switch head {
	case "body_variables", "header_variables":
		n, _, _ := strings.Cut(rest, ".")
		return sendInputs[head] + "." + n
	case "button_variables":
		return "buttons"
	}
	return ""
}

// formRefusal is a refused send for the form: each reason under its input (in the order the
// API lists them, several joined with "; ") when the page shows that input, and the message
// listing those that belong to no input shown.
func formRefusal(fs refusal.Fields, shows func(input string) bool) (string, map[string]string) {
	errs := map[string]string{}
	var general []string
	for _, f := range fs.Sorted() {
		in := sendInput(f)
		if in == "" || !shows(in) {
			general = append(general, f.Path+": "+f.Reason)
			continue
		}
		reason := f.Reason
		if prev := errs[in]; prev != "" {
			reason = prev + "; " + reason
		}
		errs[in] = reason
	}
	if len(general) > 0 {
		return "The send was refused: " + strings.Join(general, "; ") + ".", errs
	}
	return "The send was refused: correct the fields marked below.", errs
}

// shows reports whether the send page shows the reasons about the input: those of the form
// (destination, name, campaign, and the header, body and buttons parts, which are shown
// whenever they have a reason) and those of the template's inputs, when the form is shown.
func (sd *sendData) shows(input string) bool {
	if sd.Template == nil || sd.Unsupported != "" {
		return false
	}
	switch input {
	case "destination", "name", "campaign", "media", "location", "header", "body", "buttons":
		return true
	}
	for _, g := range sd.Groups {
		for _, f := range g.Fields {
			if f.input == input {
				return true
			}
		}
	}
	return false
}
