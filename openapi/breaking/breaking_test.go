// Package breaking is the breaking-change gate: openapi.yaml must stay backward compatible with
// the released v1 description (../baseline/v1.yaml), as oasdiff judges it. It is a module of its
// own so oasdiff and its dependencies stay out of the product's go.mod; `make apicheck` runs it.
package breaking

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/oasdiff/oasdiff/checker"
	"github.com/oasdiff/oasdiff/diff"
	"github.com/oasdiff/oasdiff/load"
)

const (
	baseline = "../baseline/v1.yaml"
	current  = "../openapi.yaml"
)

// breakingChanges lists what oasdiff reports from base to rev at level WARN or above.
//
// Decisions: allOf is flattened before the diff (oasdiff's --flatten-allof), so that moving
// fields between allOf parts, as the per-status error envelopes do, is judged by the merged
// schema a client sees rather than by the parts' positions; WARN fails like ERR (under allOf
// oasdiff reports a removed required response field as WARN only); a value removed from a
// response enum is an error, because generated clients turn enums into union types and code
// that names the removed value stops compiling; a value added to one passes (v1 tells clients
// to expect them: new event names, statuses, error codes). Tightening a response (a field now required,
// success pinned to true, a code enum per status) is what old clients already received and
// passes; every request-side narrowing fails.
func breakingChanges(t *testing.T, base, rev string) []string {
	t.Helper()
	loader := openapi3.NewLoader()
	s1, err := load.NewSpecInfo(loader, load.NewSource(base), load.WithFlattenAllOf())
	if err != nil {
		t.Fatalf("load %s: %v", base, err)
	}
	s2, err := load.NewSpecInfo(loader, load.NewSource(rev), load.WithFlattenAllOf())
	if err != nil {
		t.Fatalf("load %s: %v", rev, err)
	}
	d, sources, err := diff.GetPathsDiff(diff.NewConfig(), []*load.SpecInfo{s1}, []*load.SpecInfo{s2})
	if err != nil {
		t.Fatalf("diff: %v", err)
	}
	cfg := checker.NewConfig(checker.GetAllChecks(), checker.WithSeverityLevels(map[string]checker.Level{
		checker.ResponsePropertyEnumValueRemovedId: checker.ERR,
		// v1 promises that responses gain fields and enum values (openapi.yaml, Versioning).
		checker.ResponsePropertyEnumValueAddedId: checker.INFO,
	}))
	changes := checker.CheckBackwardCompatibilityUntilLevel(cfg, d, sources, checker.WARN)
	var out []string
	l := checker.NewDefaultLocalizer()
	for _, c := range changes {
		text := c.GetUncolorizedText(l)
		if c.GetLevel() < checker.WARN || perStatusCode(c.GetId(), text) {
			continue
		}
		out = append(out, c.GetId()+": "+text)
	}
	// The values a status can carry are narrowed per status on purpose (each failure status
	// has its envelope listing its codes); the list of every code must keep them all.
	baseCodes, revCodes := errorCodes(t, s1), errorCodes(t, s2)
	for _, c := range baseCodes {
		if !slices.Contains(revCodes, c) {
			out = append(out, "error code removed from ErrorCode: "+c)
		}
	}
	return out
}

// perStatusCode reports a change that only narrows a failure envelope's `code` to the codes
// its status carries.
func perStatusCode(id, text string) bool {
	return id == checker.ResponsePropertyEnumValueRemovedId && strings.Contains(text, "from the `code` response property")
}

func errorCodes(t *testing.T, s *load.SpecInfo) []string {
	t.Helper()
	ref := s.Spec.Components.Schemas["ErrorCode"]
	if ref == nil || ref.Value == nil {
		t.Fatalf("%s: no ErrorCode schema", s.Url)
	}
	var out []string
	for _, v := range ref.Value.Enum {
		out = append(out, v.(string))
	}
	return out
}

// TestNoBreakingChange is the gate: openapi.yaml against the released v1.
func TestNoBreakingChange(t *testing.T) {
	if errs := breakingChanges(t, baseline, current); len(errs) > 0 {
		t.Fatalf("openapi.yaml breaks v1 (baseline %s):\n  %s", baseline, strings.Join(errs, "\n  "))
	}
}

// mutate writes openapi.yaml with each old → new replacement applied (each must match once).
func mutate(t *testing.T, pairs ...string) string {
	t.Helper()
	b, err := os.ReadFile(current)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for i := 0; i < len(pairs); i += 2 {
		if n := strings.Count(s, pairs[i]); n != 1 {
			t.Fatalf("%q occurs %d times in openapi.yaml", pairs[i], n)
		}
		s = strings.Replace(s, pairs[i], pairs[i+1], 1)
	}
	p := filepath.Join(t.TempDir(), "openapi.yaml")
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// The gate fails on each kind of break a client would suffer, and passes additions and the
// tightening of responses (a field now required, success pinned to true), which old clients
// cannot notice.
func TestGateCatchesBreaks(t *testing.T) {
	breaks := map[string][]string{
		"renamed response field": {
			"        chat_message_id:\n          type: string\n          description: Id assigned by the messaging platform.",
			"        platform_message_id:\n          type: string\n          description: Id assigned by the messaging platform.",
		},
		"renamed request field": {
			"        campaign_name:\n          type: string\n          minLength: 1\n          maxLength: 120",
			"        campaign:\n          type: string\n          minLength: 1\n          maxLength: 120",
		},
		"removed operation": {
			"  /contacts:\n    get:\n      operationId: listContacts",
			"  /contacts:\n    head:\n      operationId: listContacts",
		},
		"removed enum value": {
			"      enum: [sent, delivered, read, failed]",
			"      enum: [sent, delivered, failed]",
		},
		"removed error code": {
			"        - idempotency_conflict\n",
			"",
		},
		"new required request field": {
			"      description: The recipient is `destination` or `user_id`, exactly one.\n      properties:",
			"      description: The recipient is `destination` or `user_id`, exactly one.\n      required: [campaign_name]\n      properties:",
		},
		"narrower request type": {
			"          maxLength: 80\n          description: Contact name saved when the number is new to the account.",
			"          maxLength: 40\n          description: Contact name saved when the number is new to the account.",
		},
	}
	for name, pair := range breaks {
		t.Run(name, func(t *testing.T) {
			if errs := breakingChanges(t, current, mutate(t, pair...)); len(errs) == 0 {
				t.Fatalf("%s: the gate let it through", name)
			} else {
				t.Logf("%s: %s", name, strings.Join(errs, "; "))
			}
		})
	}
	additions := map[string][]string{
		"new optional request field": {
			"        campaign_name:\n          type: string\n          minLength: 1\n          maxLength: 120",
			"        client_note:\n          type: string\n          maxLength: 64\n        campaign_name:\n          type: string\n          minLength: 1\n          maxLength: 120",
		},
		"new response field": {
			"        contact_created:\n          type: boolean",
			"        queued_at:\n          type: string\n          format: date-time\n        contact_created:\n          type: boolean",
		},
		"new enum value in a response": {
			"          enum: [simulated, real]",
			"          enum: [simulated, real, queued]",
		},
	}
	for name, pair := range additions {
		t.Run(name, func(t *testing.T) {
			if errs := breakingChanges(t, current, mutate(t, pair...)); len(errs) > 0 {
				t.Fatalf("%s is an addition, the gate refused it:\n  %s", name, strings.Join(errs, "\n  "))
			}
		})
	}
}
