package arch

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/storebench/storebench/internal/kinds"
)

// kindFree are the layers that are given a target.Registry and must name no
// store kind: a fact about a kind belongs to the kind (internal/kinds), not
// to a switch on its name in a workload, the runner or a report (issue 29).
var kindFree = []string{"internal/workload", "internal/run", "internal/report", "internal/result", "internal/scenario", "internal/cli"}

// kindLiteral is a string literal equal to a store kind's name.
type kindLiteral struct {
	file, name string // file is slash-separated, under the module's root
	line       int
}

// kindLiterals lists the string literals equal to one of names in the
// non-test Go files under dirs (relative to root).
func kindLiterals(t *testing.T, root string, dirs []string, names []string) []kindLiteral {
	t.Helper()
	var found []kindLiteral
	fset := token.NewFileSet()
	for _, dir := range dirs {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			rel, err := filepath.Rel(root, path)
			if err != nil {
				return err
			}
			ast.Inspect(f, func(n ast.Node) bool {
				lit, ok := n.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					return true
				}
				if s, err := strconv.Unquote(lit.Value); err == nil && slices.Contains(names, s) {
					found = append(found, kindLiteral{file: filepath.ToSlash(rel), name: s, line: fset.Position(lit.Pos()).Line})
				}
				return true
			})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return found
}

// kindNameDebts are the kind names the kind-free layers hold today, by file
// and name, with how many times: each a fact of a kind that issue 29 moves
// into the kind (a field of target.Kind set in internal/kinds, or a
// capability of its store), after which its entry goes. The test fails on a
// name not counted here and on a count larger than what is left, so the
// list can only shrink. notKind marks a word that is a store's name by
// coincidence (a host's memory) and stays.
var kindNameDebts = []struct {
	file, name string
	n          int
	notKind    bool
}{
	{"internal/report/model.go", "memory", 1, true},        // the host's memory, a row of the environment table
	{"internal/workload/host_linux.go", "memory", 1, true}, // the cgroup controller
}

// checkKindNames says what in found the debts do not cover (a new name,
// one more of a counted name) and which debts are smaller than counted
// (paid: lower the count or delete the entry).
func checkKindNames(found []kindLiteral) (added, paid []string) {
	at := map[[2]string][]string{}
	for _, l := range found {
		k := [2]string{l.file, l.name}
		at[k] = append(at[k], fmt.Sprintf("%s:%d", l.file, l.line))
	}
	counted := map[[2]string]bool{}
	for _, d := range kindNameDebts {
		k := [2]string{d.file, d.name}
		counted[k] = true
		switch n := len(at[k]); {
		case n > d.n:
			added = append(added, fmt.Sprintf("%s: %q %d times, %d allowed (issue 29)", strings.Join(at[k], ", "), d.name, n, d.n))
		case n < d.n:
			paid = append(paid, fmt.Sprintf("%s: %q %d times, the list allows %d: lower it", d.file, d.name, n, d.n))
		}
	}
	for k, where := range at {
		if !counted[k] {
			added = append(added, fmt.Sprintf("%s: %q", strings.Join(where, ", "), k[1]))
		}
	}
	slices.Sort(added)
	slices.Sort(paid)
	return added, paid
}

// testSupportDirs are testSupport's directories: only tests import them
// (TestLayering), and they name the stores they start for the tests.
func testSupportDirs() []string {
	var dirs []string
	for _, p := range testSupport {
		dirs = append(dirs, filepath.FromSlash(p)+string(filepath.Separator))
	}
	return dirs
}

// TestNoKindNamesAboveTheStores: the workloads, the runner, the scenario,
// the result, the report and the command layer name no store kind in
// non-test code, but the debts listed (issue 29): a fact of a kind is the
// kind's.
func TestNoKindNamesAboveTheStores(t *testing.T) {
	names := kinds.All().Names()
	if len(names) < 8 {
		t.Fatalf("kinds.All() names %v: not the binary's list", names)
	}
	var found []kindLiteral
	for _, l := range kindLiterals(t, "../..", kindFree, names) {
		if !slices.ContainsFunc(testSupportDirs(), func(d string) bool { return strings.HasPrefix(filepath.FromSlash(l.file), d) }) {
			found = append(found, l)
		}
	}
	added, paid := checkKindNames(found)
	for _, a := range added {
		t.Errorf("%s: a store kind's name above the stores; make it a fact of the kind (internal/kinds)", a)
	}
	for _, p := range paid {
		t.Error(p)
	}
}

// The scan finds a kind's name where a workload switches on it, in a
// comparison and a case, and not in a comment, an identifier or another
// string; a new one fails, a removed one asks the list to shrink.
func TestKindNamesCaught(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "internal", "workload", "kv")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	src := "package kv\n\n// redis is fast.\nfunc f(kind string) int {\n\tredis := 1\n\tif kind == \"redis\" {\n\t\treturn redis\n\t}\n\tswitch kind {\n\tcase `sqlite`, \"redis:aof\":\n\t}\n\treturn 0\n}\n"
	for name, text := range map[string]string{"kv.go": src, "kv_test.go": src} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	found := kindLiterals(t, root, []string{"internal/workload"}, []string{"redis", "sqlite"})
	want := []kindLiteral{{"internal/workload/kv/kv.go", "redis", 6}, {"internal/workload/kv/kv.go", "sqlite", 10}}
	if !slices.Equal(found, want) {
		t.Fatalf("found %v, want %v", found, want)
	}
	added, paid := checkKindNames(found)
	if !slices.Equal(added, []string{`internal/workload/kv/kv.go:10: "sqlite"`, `internal/workload/kv/kv.go:6: "redis"`}) || len(paid) != len(kindNameDebts) {
		t.Errorf("added %q, paid %d of %d debts", added, len(paid), len(kindNameDebts))
	}
}
