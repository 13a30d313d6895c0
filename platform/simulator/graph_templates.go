package simulator

import (
	"encoding/base64"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// ---- GET /{version}/{waba-id}/message_templates ----

type templateListResponse struct {
	Data   []map[string]any `json:"data"`
	Paging *paging          `json:"paging,omitempty"`
}

type paging struct {
	Cursors  cursors `json:"cursors"`
	Next     string  `json:"next,omitempty"`
	Previous string  `json:"previous,omitempty"`
}

type cursors struct {
	Before string `json:"before"`
	After  string `json:"after"`
}

// cursorFor encodes a template id as an opaque Graph-looking cursor.
func cursorFor(id string) string {
	return base64.RawURLEncoding.EncodeToString([]byte("AQH" + id))
}

// idFromCursor decodes cursorFor; ok is false for a malformed cursor.
func idFromCursor(c string) (string, bool) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil || len(b) < 3 || string(b[:3]) != "AQH" {
		return "", false
	}
	return string(b[3:]), true
}

// serveTemplateList lists a WABA's templates: every status, the definition
// shape, filters name (substring, case-insensitive), status, category and
// language (comma lists), fields, and limit/after/before paging.
func (s *Simulator) serveTemplateList(w http.ResponseWriter, r *http.Request, wabaID, trace string) {
	tok := bearer(r)
	s.mu.Lock()
	_, tokenKnown := s.tokens[tok]
	wabaKnown := len(s.templates[wabaID]) > 0
	allowed := false
	for _, n := range s.numbers {
		if n.WabaID == wabaID {
			wabaKnown = true
			if n.AccessToken == tok {
				allowed = true
			}
		}
	}
	var list []Template
	if allowed {
		for _, st := range s.templates[wabaID] {
			list = append(list, st.t)
		}
	}
	s.mu.Unlock()
	switch {
	case tok == "" || !tokenKnown:
		tokenError().write(w, trace)
		return
	case !wabaKnown:
		unknownObjectError("get", wabaID).write(w, trace)
		return
	case !allowed:
		tokenError().write(w, trace)
		return
	}

	q := r.URL.Query()
	limit := 25
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			paramError("Param limit must be a positive integer", "limit must be a positive integer").write(w, trace)
			return
		}
		limit = n
	}
	filter := func(key, value string) bool {
		want := q.Get(key)
		if want == "" {
			return true
		}
		for v := range strings.SplitSeq(want, ",") {
			if strings.EqualFold(strings.TrimSpace(v), value) {
				return true
			}
		}
		return false
	}
	name := strings.ToLower(q.Get("name"))
	var items []Template
	for _, t := range list {
		if name != "" && !strings.Contains(strings.ToLower(t.Name), name) {
			continue
		}
		if filter("status", t.Status) && filter("category", t.Category) && filter("language", t.Language) {
			items = append(items, t)
		}
	}

	start, end := 0, len(items)
	switch {
	case q.Get("after") != "":
		id, ok := idFromCursor(q.Get("after"))
		i := slices.IndexFunc(items, func(t Template) bool { return t.ID == id })
		if !ok || i < 0 {
			paramError("Invalid parameter", "after: the cursor is not valid").write(w, trace)
			return
		}
		start = i + 1
		end = min(start+limit, len(items))
	case q.Get("before") != "":
		id, ok := idFromCursor(q.Get("before"))
		i := slices.IndexFunc(items, func(t Template) bool { return t.ID == id })
		if !ok || i < 0 {
			paramError("Invalid parameter", "before: the cursor is not valid").write(w, trace)
			return
		}
		end = i
		start = max(0, end-limit)
	default:
		end = min(limit, len(items))
	}
	page := items[start:end]

	var fields []string
	if f := q.Get("fields"); f != "" {
		for v := range strings.SplitSeq(f, ",") {
			if v = strings.TrimSpace(v); v != "" {
				fields = append(fields, v)
			}
		}
	}
	resp := templateListResponse{Data: make([]map[string]any, 0, len(page))}
	for _, t := range page {
		resp.Data = append(resp.Data, templateFields(t, fields))
	}
	if len(page) > 0 {
		p := &paging{Cursors: cursors{Before: cursorFor(page[0].ID), After: cursorFor(page[len(page)-1].ID)}}
		if end < len(items) {
			p.Next = pageURL(r, limit, "after", p.Cursors.After)
		}
		if start > 0 {
			p.Previous = pageURL(r, limit, "before", p.Cursors.Before)
		}
		resp.Paging = p
	}
	writeGraphJSON(w, http.StatusOK, resp)
}

// templateFields renders a template in the definition shape, restricted to
// fields when given (id is always included).
func templateFields(t Template, fields []string) map[string]any {
	t = copyTemplate(t)
	all := map[string]any{
		"id":               t.ID,
		"name":             t.Name,
		"language":         t.Language,
		"status":           t.Status,
		"category":         t.Category,
		"parameter_format": t.ParameterFormat,
		"components":       t.Components,
	}
	if t.RejectedReason != "" {
		all["rejected_reason"] = t.RejectedReason
	} else if t.Status == "REJECTED" {
		all["rejected_reason"] = "NONE"
	}
	if len(fields) == 0 {
		return all
	}
	out := map[string]any{"id": t.ID}
	for _, f := range fields {
		if v, ok := all[f]; ok {
			out[f] = v
		}
	}
	return out
}

// pageURL builds the absolute URL of another page from the request's own
// scheme, host, path and query.
func pageURL(r *http.Request, limit int, key, cursor string) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	} else if p := r.Header.Get("X-Forwarded-Proto"); p == "https" || p == "http" {
		scheme = p
	}
	q := r.URL.Query()
	q.Del("after")
	q.Del("before")
	q.Set("limit", strconv.Itoa(limit))
	q.Set(key, cursor)
	u := url.URL{Scheme: scheme, Host: r.Host, Path: r.URL.Path, RawQuery: q.Encode()}
	return u.String()
}
