package server_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"gateway/server"
	"gateway/server/servertest"
)

// TestMain checks, after a full run of the package, that every (operation, status) pair the spec
// documents was received by some test through the contract-checking harness. It is skipped when
// a -run filter selects only some tests.
func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 && !filtered() {
		spec, err := server.LoadSpec()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		if missing := servertest.Uncovered(spec); len(missing) > 0 {
			fmt.Fprintf(os.Stderr, "contract coverage: no test received these documented responses:\n  %s\n", strings.Join(missing, "\n  "))
			code = 1
		}
	}
	os.Exit(code)
}

func filtered() bool {
	for _, a := range os.Args[1:] {
		if strings.HasPrefix(a, "-test.run") || strings.HasPrefix(a, "-test.skip") || strings.HasPrefix(a, "-test.bench") {
			return true
		}
	}
	return testing.Short()
}
