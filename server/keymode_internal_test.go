package server

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"

	"gateway/server/domain"
)

// Each key mode selects its implementations: a live key the account's data (and reads a polled
// message ahead), test and demo keys the fixtures, a demo key rate-limited.
func TestModeForSelectsImplementation(t *testing.T) {
	s := &Server{}
	s.buildRecords()
	cases := []struct {
		mode              string
		live, ahead, limd bool
	}{
		{domain.ModeLive, true, true, false},
		{domain.ModeTest, false, false, false},
		{domain.ModeDemo, false, false, true},
	}
	for _, c := range cases {
		km := s.modeFor(c.mode)
		_, live := km.data.(liveMessaging)
		_, test := km.data.(testMessaging)
		_, liveRecords := km.records.(domain.LiveRecords)
		_, testRecords := km.records.(domain.TestRecords)
		if live != c.live || test == c.live || liveRecords != c.live || testRecords == c.live ||
			km.readsAhead != c.ahead || km.limited != c.limd {
			t.Errorf("%s: %T %T readsAhead=%v limited=%v", c.mode, km.data, km.records, km.readsAhead, km.limited)
		}
	}
}

// The live/test fork is decided in keymode.go alone: no other file of the package, nor of the
// domain (whose send keymode.go picks), compares a mode with ModeLive, ModeTest or ModeDemo
// (domain/apikey.go only checks that a key names one of them).
func TestModeComparedOnlyInKeymode(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	domainFiles, err := filepath.Glob("domain/*.go")
	if err != nil || len(domainFiles) == 0 {
		t.Fatalf("domain files: %v %v", domainFiles, err)
	}
	files = append(files, domainFiles...)
	isMode := func(e ast.Expr) bool {
		id, ok := e.(*ast.Ident)
		return ok && (id.Name == "ModeLive" || id.Name == "ModeTest" || id.Name == "ModeDemo")
	}
	fset := token.NewFileSet()
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") || name == "keymode.go" || name == filepath.Join("domain", "apikey.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.BinaryExpr:
				if (n.Op == token.EQL || n.Op == token.NEQ) && (isMode(n.X) || isMode(n.Y)) {
					t.Errorf("%s: compares a key mode; select the behaviour in modeFor (keymode.go)", fset.Position(n.Pos()))
				}
			case *ast.CaseClause:
				for _, e := range n.List {
					if isMode(e) {
						t.Errorf("%s: switches on a key mode; select the behaviour in modeFor (keymode.go)", fset.Position(e.Pos()))
					}
				}
			}
			return true
		})
	}
	if checked < 10 {
		t.Fatalf("only %d files checked", checked)
	}
}
