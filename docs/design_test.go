// Package docs holds the project's documentation; its test keeps
// design.md's code references true.
package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/standings/standings/internal/testsupport"
)

// codeRef is a hop as design.md writes it: `dir/file.go:Func`, or
// `dir/file.go:Type.Method`.
var codeRef = regexp.MustCompile("`((?:[a-z0-9_]+/)+[a-z0-9_]+\\.go):([A-Za-z_][A-Za-z0-9_]*(?:\\.[A-Za-z_][A-Za-z0-9_]*)?)`")

// TestDesignNamesExist: every `file.go:Func` that design.md names is a
// function, method or type declared in that file, so that the hops a
// newcomer follows never lead nowhere.
func TestDesignNamesExist(t *testing.T) {
	text, err := os.ReadFile("design.md")
	if err != nil {
		t.Fatal(err)
	}
	refs := codeRef.FindAllStringSubmatch(string(text), -1)
	if len(refs) < 20 {
		t.Fatalf("design.md names %d file:Func hops; the write and read paths alone name more", len(refs))
	}
	decls := map[string]map[string]bool{}
	for _, r := range refs {
		file, name := r[1], r[2]
		d, ok := decls[file]
		if !ok {
			d, err = testsupport.Declared(filepath.Join("..", file))
			if err != nil {
				t.Errorf("design.md names %s: %v", r[0], err)
				continue
			}
			decls[file] = d
		}
		if !d[name] {
			t.Errorf("design.md names %s, but %s declares no %s", r[0], file, name)
		}
	}
}
