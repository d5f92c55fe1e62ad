package views_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// idsGo reads the string constants of ids.go, by prefix: ID (DOM ids,
// each distinct), Hook (data- attributes the script reads), Test
// (data-testid values).
func idsGo(t *testing.T) (ids, hooks, tests map[string]string) {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "ids.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	ids, hooks, tests = map[string]string{}, map[string]string{}, map[string]string{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			vs := s.(*ast.ValueSpec)
			for i, n := range vs.Names {
				lit, ok := vs.Values[i].(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					t.Fatalf("ids.go: %s is not a string literal", n.Name)
				}
				v, _ := strconv.Unquote(lit.Value)
				switch {
				case strings.HasPrefix(n.Name, "ID"):
					// One value for two ids would be one element id on a
					// page that shows both.
					if other, dup := ids[v]; dup {
						t.Errorf("ids.go: %s and %s are both %q", other, n.Name, v)
					}
					ids[v] = n.Name
				case strings.HasPrefix(n.Name, "Hook"):
					hooks[v] = n.Name
				case strings.HasPrefix(n.Name, "Test"):
					tests[v] = n.Name
				default:
					t.Errorf("ids.go: %s is neither an ID, a Hook nor a Test name", n.Name)
				}
			}
		}
	}
	return ids, hooks, tests
}

// appJS is app.js without its comments, which may name attributes freely.
func appJS(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../static/app.js")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "//") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

var (
	jsByID     = regexp.MustCompile(`getElementById\(\s*["']([^"']*)["']\s*\)`)
	jsSelector = regexp.MustCompile(`querySelector(?:All)?\(\s*(?:"([^"]*)"|'([^']*)')`)
	jsSelID    = regexp.MustCompile(`#([A-Za-z][\w-]*)`)
	jsDataAttr = regexp.MustCompile(`data-[a-z0-9-]+`)
	jsDataset  = regexp.MustCompile(`\.dataset\.([A-Za-z0-9]+)`)
)

// TestAppJSNamesAreDefined: every DOM id and data- attribute static/app.js
// names is defined in ids.go, and it reads no data-testid: a rename in
// ids.go that the script did not follow fails here, not in a browser.
func TestAppJSNamesAreDefined(t *testing.T) {
	ids, hooks, _ := idsGo(t)
	js := appJS(t)
	var usedIDs, usedHooks []string
	for _, m := range jsByID.FindAllStringSubmatch(js, -1) {
		usedIDs = append(usedIDs, m[1])
	}
	for _, m := range jsSelector.FindAllStringSubmatch(js, -1) {
		for _, id := range jsSelID.FindAllStringSubmatch(m[1]+m[2], -1) {
			usedIDs = append(usedIDs, id[1])
		}
	}
	usedHooks = append(usedHooks, jsDataAttr.FindAllString(js, -1)...)
	for _, m := range jsDataset.FindAllStringSubmatch(js, -1) {
		usedHooks = append(usedHooks, datasetAttr(m[1]))
	}
	// The parse must see what the script is known to use, or it checks nothing.
	for _, want := range []string{"live-status", "member-search"} {
		if !slices.Contains(usedIDs, want) {
			t.Errorf("app.js: parse found no id %q; found %q", want, usedIDs)
		}
	}
	for _, want := range []string{"data-ws", "data-member", "data-live-score", "data-countdown-end"} {
		if !slices.Contains(usedHooks, want) {
			t.Errorf("app.js: parse found no hook %q; found %q", want, usedHooks)
		}
	}
	for _, id := range usedIDs {
		if _, ok := ids[id]; !ok {
			t.Errorf("app.js uses the id %q, which no ID constant of views/ids.go defines", id)
		}
	}
	for _, h := range usedHooks {
		if h == "data-testid" {
			t.Errorf("app.js reads data-testid: test ids are for tests; read a Hook of views/ids.go")
		} else if _, ok := hooks[h]; !ok {
			t.Errorf("app.js reads %s, which no Hook constant of views/ids.go defines", h)
		}
	}
}

// datasetAttr is the attribute behind el.dataset.name: countdownEnd is
// data-countdown-end.
func datasetAttr(prop string) string {
	var b strings.Builder
	b.WriteString("data-")
	for _, r := range prop {
		if unicode.IsUpper(r) {
			b.WriteByte('-')
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Attributes whose value is a DOM id (or, for aria-labelledby, ids).
var tplIDAttr = regexp.MustCompile(`\s(id|for|list|aria-labelledby|aria-describedby|aria-controls|data-copy)="([^"]*)"|\shref="#([^"]*)"`)

// TestTemplatesDefineNoIDs: no template writes a literal DOM id that
// ids.go does not define (write id={ IDName } instead), and every Hook of
// ids.go is written by some template, so the script has it to read.
func TestTemplatesDefineNoIDs(t *testing.T) {
	ids, hooks, _ := idsGo(t)
	files, err := filepath.Glob("*.templ")
	if err != nil || len(files) == 0 {
		t.Fatalf("no templates: %v", err)
	}
	var all strings.Builder
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		all.Write(b)
		for _, m := range tplIDAttr.FindAllStringSubmatch(string(b), -1) {
			attr, vals := m[1], strings.Fields(m[2])
			if attr == "" {
				attr, vals = "href", []string{m[3]}
			}
			for _, v := range vals {
				if _, ok := ids[v]; !ok {
					t.Errorf("%s: %s=%q is an id views/ids.go does not define", f, attr, v)
				}
			}
		}
	}
	src := all.String()
	for h, name := range hooks {
		if !regexp.MustCompile(`\s` + regexp.QuoteMeta(h) + `[\s=>/]`).MatchString(src) {
			t.Errorf("%s (%s) is written by no template", name, h)
		}
	}
}
