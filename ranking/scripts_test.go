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

// TestScriptsAssignPortably keeps every script's multiple assignments
// correct on the embedded store's Lua as well as Redis's. Lua evaluates
// all of an assignment's expressions before assigning any variable, so
// `a, b = b, a` swaps; miniredis's Lua (gopher-lua) assigns each local as
// soon as its expression is evaluated, and reads a local for a table
// store only at the end, so there `a, b = b, a` sets both to b,
// `a, b = a + 1, a + b` reads the new a, and `t.x, a = a, b` stores the
// new a. A run_safe swap written that way let the embedded store take
// scores past a desc board's bounds. So an expression of a multiple
// assignment (or an index of one of its targets) must not read a local
// that the same statement assigns at another position; reading the one
// it assigns itself (`n, c = tonumber(n), tonumber(c)`) is portable.
// Statements are taken one line at a time (after "then", "do" or "else"),
// with the next when a line ends in "=" or ",".
func TestScriptsAssignPortably(t *testing.T) {
	paths, err := filepath.Glob("scripts/*.lua")
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range paths {
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(src), "\n")
		goesOn := func(code string) bool {
			code = strings.TrimSpace(code)
			return strings.HasSuffix(code, "=") || strings.HasSuffix(code, ",")
		}
		for n := 0; n < len(lines); n++ {
			first, code := n, luaCode(lines[n])
			for n+1 < len(lines) && goesOn(code) {
				n++
				code += " " + luaCode(lines[n])
			}
			for _, stmt := range splitTop(code, ';') {
				if bad := crossReads(stmt); bad != "" {
					t.Errorf("%s:%d: %q reads %s, which it also assigns: assign one variable per statement", path, first+1, strings.TrimSpace(code), bad)
				}
			}
		}
	}
	// The check itself.
	for stmt, want := range map[string]string{
		"a, b = b, a":                       "b",
		"if desc then a, b = b, a end":      "b",
		"x, y = y * 2, x * 2":               "y",
		"t.x, a = a, b":                     "a",
		"a, t[a] = 1, 2":                    "a",
		"n, c = tonumber(n), tonumber(c)":   "",
		"sign, n = '-', -n":                 "",
		"local a, b = b, a":                 "",
		"t[1], t[2] = t[2], t[1]":           "",
		"x, y = o.x, o.y":                   "",
		"a, b = 'a, b', 1":                  "",
		"if a == b then x, y = 1, b end":    "",
		"out[i], out[i + 1] = code, member": "",
		"a, b =   b, a":                     "b",
	} {
		if got := crossReads(luaCode(stmt)); got != want {
			t.Errorf("crossReads(%q) = %q, want %q", stmt, got, want)
		}
	}
}

// luaCode is a line of Lua without its comment and with its strings
// emptied.
func luaCode(line string) string {
	var b strings.Builder
	var quote byte
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quote != 0 && c == '\\':
			i++
		case quote != 0:
			if c == quote {
				quote = 0
				b.WriteByte(c)
			}
		case c == '"' || c == '\'':
			quote = c
			b.WriteByte(c)
		case c == '-' && i+1 < len(line) && line[i+1] == '-':
			return b.String()
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// outside calls at with the index of each byte of s outside brackets,
// until at returns false.
func outside(s string, at func(i int) bool) {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			depth--
		default:
			if depth == 0 && !at(i) {
				return
			}
		}
	}
}

// splitTop splits s at sep outside brackets.
func splitTop(s string, sep byte) []string {
	var parts []string
	from := 0
	outside(s, func(i int) bool {
		if s[i] == sep {
			parts = append(parts, s[from:i])
			from = i + 1
		}
		return true
	})
	return append(parts, s[from:])
}

var (
	luaName     = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*`)
	luaKeywords = map[string]bool{"and": true, "break": true, "do": true, "else": true, "elseif": true, "end": true, "false": true, "for": true, "function": true, "if": true, "in": true, "local": true, "nil": true, "not": true, "or": true, "repeat": true, "return": true, "then": true, "true": true, "until": true, "while": true}
	luaOpener   = regexp.MustCompile(`\b(then|do|else)\b`)
)

// crossReads returns a local that stmt, a multiple assignment, assigns at
// one position and reads at another ("" if none, or not one).
func crossReads(stmt string) string {
	if loc := luaOpener.FindAllStringIndex(stmt, -1); loc != nil {
		stmt = stmt[loc[len(loc)-1][1]:]
	}
	stmt = strings.TrimSpace(stmt)
	if strings.HasPrefix(stmt, "local ") || strings.HasPrefix(stmt, "for ") {
		return ""
	}
	eq := -1 // the assignment's "=", not a comparison's
	outside(stmt, func(i int) bool {
		if stmt[i] == '=' && (i == 0 || !strings.ContainsRune("=~<>", rune(stmt[i-1]))) && (i+1 == len(stmt) || stmt[i+1] != '=') {
			eq = i
		}
		return eq < 0
	})
	if eq < 0 {
		return ""
	}
	targets := splitTop(stmt[:eq], ',')
	if len(targets) < 2 {
		return ""
	}
	values := splitTop(stmt[eq+1:], ',')
	assigned := map[string]int{} // a local target -> its position
	for i, tg := range targets {
		if tg = strings.TrimSpace(tg); goIdent.MatchString(tg) {
			assigned[tg] = i
		}
	}
	reads := func(expr string, at int) string {
		for _, loc := range luaName.FindAllStringIndex(expr, -1) {
			name := expr[loc[0]:loc[1]]
			before := strings.TrimRight(expr[:loc[0]], " ")
			if luaKeywords[name] || strings.HasSuffix(before, ".") || strings.HasSuffix(before, ":") {
				continue // a keyword, a field or a method
			}
			if pos, ok := assigned[name]; ok && pos != at {
				return name
			}
		}
		return ""
	}
	for i, v := range values {
		if name := reads(v, i); name != "" {
			return name
		}
	}
	for _, tg := range targets {
		if tg = strings.TrimSpace(tg); !goIdent.MatchString(tg) {
			if name := reads(tg, -1); name != "" {
				return name
			}
		}
	}
	return ""
}
