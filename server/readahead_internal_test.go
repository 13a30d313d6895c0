package server

import (
	"net/http/httptest"
	"testing"
)

// The read-ahead finds openapi.yaml's poll operation by its operationId: a rename there would
// silently make every poll two statements again.
func TestAheadMessageIDFindsThePoll(t *testing.T) {
	_, router := specRouteTable(t)
	for path, want := range map[string]int64{
		"/v1/messages/42":  42,
		"/v1/messages/0":   0, // validation answers
		"/v1/messages/abc": 0,
		"/v1/campaigns/42": 0, // another operation
	} {
		route, params, err := router.FindRoute(httptest.NewRequest("GET", path, nil))
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if got := aheadMessageID(route, params); got != want {
			t.Errorf("%s: read-ahead id %d, want %d", path, got, want)
		}
	}
}
