package testsupport

import (
	"go/ast"
	"go/parser"
	"go/token"
)

// Declared lists what one Go file declares at top level, for tests that keep
// documentation's references to code true: each function and type by its
// name ("F", "T"), and each method both as "T.M" and as "M".
func Declared(path string) (map[string]bool, error) {
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			out[d.Name.Name] = true
			if d.Recv == nil || len(d.Recv.List) == 0 {
				continue
			}
			typ := d.Recv.List[0].Type
			if s, ok := typ.(*ast.StarExpr); ok {
				typ = s.X
			}
			if g, ok := typ.(*ast.IndexExpr); ok { // a generic receiver
				typ = g.X
			}
			if id, ok := typ.(*ast.Ident); ok {
				out[id.Name+"."+d.Name.Name] = true
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				if ts, ok := s.(*ast.TypeSpec); ok {
					out[ts.Name.Name] = true
				}
			}
		}
	}
	return out, nil
}
