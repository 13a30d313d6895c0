package eventhook

import (
	"strings"
	"testing"
)

func TestValidateURL(t *testing.T) {
	for _, c := range []struct {
		url          string
		allowPrivate bool
		ok           bool
	}{
		{"https://hooks.example.com/in", false, true},
		{"https://hooks.example.com:8443/in?x=1", false, true},
		{"http://hooks.example.com/in", false, false},
		{"http://hooks.example.com/in", true, true},
		{"http://127.0.0.1:9000/in", true, true},
		{"https://127.0.0.1/in", false, false},
		{"https://10.0.0.1/in", false, false},
		{"https://169.254.169.254/", false, false},
		{"https://[::1]/in", false, false},
		{"https://localhost/in", false, false},
		{"https://api.localhost/in", false, false},
		{"ftp://hooks.example.com/in", true, false},
		{"hooks.example.com/in", false, false},
		{"https:///in", false, false},
		{"https://hooks.example.com/in#frag", false, false},
		{"https://hooks.example.com/" + strings.Repeat("a", 2050), false, false},
		// refused by the sender at dial time, so refused at registration too
		{"https://metadata.google.internal/computeMetadata/v1/", false, false},
		{"https://Metadata.Google.Internal./x", false, false},
		{"https://100.64.0.1/in", false, false},
		{"https://100.100.100.200/in", false, false},
		{"https://[64:ff9b::a00:1]/in", false, false},
		{"https://metadata.example.com/in", false, true},
		{"https://93.184.216.34/in", false, true},
	} {
		err := ValidateURL(c.url, c.allowPrivate)
		if (err == nil) != c.ok {
			t.Errorf("ValidateURL(%q, %t) = %v", c.url, c.allowPrivate, err)
		}
	}
}
