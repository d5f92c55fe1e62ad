package ranking_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/standings/standings/internal/testsupport"
)

// goLine is the one form in which a script's header names the Go side of
// its protocol: "-- Go       <file>.go: <func>, <func>", each function a
// top-level function or method declared in that file of this package.
var goLine = regexp.MustCompile(`^-- Go +([a-z_]+\.go): (.+)$`)

var goIdent = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// TestScriptHeadersNameRealGoFunctions keeps each header's statement of
// who builds KEYS and ARGV (and decodes the reply) true: a renamed or
// moved builder fails here, not in a reader's search.
func TestScriptHeadersNameRealGoFunctions(t *testing.T) {
	paths, err := filepath.Glob("scripts/*.lua")
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Fatal("no scripts found")
	}
	declared := map[string]map[string]bool{} // file -> its function names
	for _, path := range paths {
		name := filepath.Base(path)
		if name == "lib.lua" {
			continue // helpers, no protocol of their own
		}
		t.Run(name, func(t *testing.T) {
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var refs [][]string
			for _, line := range strings.Split(string(src), "\n") {
				if !strings.HasPrefix(line, "--") {
					break // the header is the leading comment
				}
				if strings.Contains(line, "built by") {
					t.Errorf("free-form builder reference %q: name it on the Go line", line)
				}
				if m := goLine.FindStringSubmatch(line); m != nil {
					refs = append(refs, m[1:])
				}
			}
			if len(refs) != 1 {
				t.Fatalf("header has %d Go lines, want 1 of the form %q", len(refs), "-- Go       file.go: func, func")
			}
			file, list := refs[0][0], refs[0][1]
			funcs, ok := declared[file]
			if !ok {
				funcs, err = testsupport.Declared(file)
				if err != nil {
					t.Fatal(err)
				}
				declared[file] = funcs
			}
			for _, fn := range strings.Split(list, ", ") {
				if !goIdent.MatchString(fn) {
					t.Errorf("Go line names %q, not a function name", fn)
				} else if !funcs[fn] {
					t.Errorf("Go line names %s, which %s does not declare", fn, file)
				}
			}
		})
	}
}
