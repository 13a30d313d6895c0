package main

import (
	"encoding/json"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// listedPackage is what `go list -json` says of one package.
type listedPackage struct {
	ImportPath string
	Imports    []string
	Deps       []string
}

// listPackages runs `go list -deps -json` over patterns and returns every package it names.
func listPackages(t *testing.T, patterns ...string) map[string]listedPackage {
	t.Helper()
	out, err := exec.Command("go", append([]string{"list", "-deps", "-json"}, patterns...)...).Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	pkgs := map[string]listedPackage{}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p listedPackage
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs[p.ImportPath] = p
	}
	return pkgs
}

// TestLayering holds the layers of docs/architecture.md: the domain speaks neither HTTP nor
// SQL, store and platform import nothing of ours, the API and the dashboard are siblings that
// do not import each other, and the background services need neither UI.
func TestLayering(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	pkgs := listPackages(t, "./...")
	ours := func(path string) bool { return path == "gateway" || strings.HasPrefix(path, "gateway/") }

	// The domain: no HTTP and no SQL in it or in anything it reaches except through the store
	// package, whose types it uses to talk to the database.
	forbidden := []string{"net/http", "database/sql", "github.com/labstack/echo/v4", "github.com/lib/pq", "github.com/jmoiron/sqlx", "gateway/gen"}
	var walk func(path string, seen map[string]bool)
	walk = func(path string, seen map[string]bool) {
		if seen[path] || path == "gateway/store" {
			return
		}
		seen[path] = true
		for _, imp := range pkgs[path].Imports {
			if slices.Contains(forbidden, imp) {
				t.Errorf("gateway/server/domain reaches %s through %s", imp, path)
			}
			walk(imp, seen)
		}
	}
	if _, ok := pkgs["gateway/server/domain"]; !ok {
		t.Fatal("no package gateway/server/domain")
	}
	walk("gateway/server/domain", map[string]bool{})

	// store and platform import nothing of ours but their own subpackages (and store's
	// test helpers the migrations).
	for path, p := range pkgs {
		var own string
		switch {
		case path == "gateway/store" || strings.HasPrefix(path, "gateway/store/"):
			own = "gateway/store"
		case strings.HasPrefix(path, "gateway/platform/"):
			own = "gateway/platform/"
		default:
			continue
		}
		for _, imp := range p.Imports {
			if ours(imp) && !strings.HasPrefix(imp, own) && !(path == "gateway/store/storetest" && imp == "gateway/migrations") {
				t.Errorf("%s imports %s", path, imp)
			}
		}
	}

	// The API and the dashboard are siblings; the workers need neither.
	for _, c := range []struct{ from, not string }{
		{"gateway/server", "gateway/server/dashboard"},
		{"gateway/server/dashboard", "gateway/server"},
		{"gateway/server/worker", "gateway/server"},
		{"gateway/server/worker", "gateway/server/dashboard"},
	} {
		if slices.Contains(pkgs[c.from].Deps, c.not) {
			t.Errorf("%s depends on %s", c.from, c.not)
		}
	}
}
