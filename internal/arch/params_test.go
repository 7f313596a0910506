package arch

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReportReadsNoParamByName: the report reads a cell's parameters
// through result.Cell.Settings (typed, the one place their names are
// read), never by indexing Params with a name (issue 29).
func TestReportReadsNoParamByName(t *testing.T) {
	if found := paramIndexes(t, "../../internal/report"); len(found) > 0 {
		t.Errorf("report code reads cell parameters by name (use result.Cell.Settings): %v", found)
	}
}

// The scan finds `c.Params["keys"]` and `x.Params[k]`, not a typed
// struct's field nor a map of another name.
func TestParamIndexesCaught(t *testing.T) {
	dir := t.TempDir()
	src := "package report\n\nfunc f(c struct{ Params map[string]any }, k string) (any, any, any) {\n\tother := map[string]any{}\n\treturn c.Params[\"keys\"], c.Params[k], other[\"keys\"]\n}\n"
	if err := writeFile(filepath.Join(dir, "f.go"), src); err != nil {
		t.Fatal(err)
	}
	if found := paramIndexes(t, dir); len(found) != 2 {
		t.Errorf("found %v, want the two Params indexes", found)
	}
}

// paramIndexes lists file:line of every `….Params[…]` in dir's non-test Go files.
func paramIndexes(t *testing.T, dir string) []string {
	t.Helper()
	var found []string
	fset := token.NewFileSet()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if ix, ok := n.(*ast.IndexExpr); ok {
				if sel, ok := ix.X.(*ast.SelectorExpr); ok && sel.Sel.Name == "Params" {
					found = append(found, fset.Position(ix.Pos()).String())
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

func writeFile(path, text string) error { return os.WriteFile(path, []byte(text), 0o644) }
