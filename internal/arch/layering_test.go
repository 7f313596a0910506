// Package arch holds no code, only the test that keeps docs/DESIGN.md's
// layering: dependencies point one way, and the lower floors never reach up.
package arch

import (
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/storebench/storebench/"

// A rule forbids packages matching from to import packages matching any of
// to, but those matching allow. A pattern is a path under the module;
// "x/..." is x and everything below it.
type rule struct {
	from   string
	except []string // from-packages the rule does not cover
	to     []string
	allow  []string
	why    string
}

// testSupport packages start real servers and stores for tests (servertest,
// storetest, workloadtest): they may reach anything they need, and only
// tests may import them, which the last rule checks. workloadtest is test
// support, not a workload: it opens stores on servers for the workloads'
// tests, the way servertest and storetest do for lower floors. testkit
// runs processes for tests (the binary, signals, /proc states, polling).
var testSupport = []string{"internal/server/servertest", "internal/store/storetest", "internal/workload/workloadtest", "internal/testkit"}

var rules = []rule{
	{from: "internal/store/...", to: []string{"internal/workload/...", "internal/target/...", "internal/metrics/...", "internal/result/..."},
		why: "a store is the bottom floor: it knows no workload, target, metrics or result"},
	{from: "internal/store/...", to: []string{"cmd/...", "internal/..."}, allow: []string{"internal/store/...", "internal/errclass"},
		why: "store imports none of our other packages but the leaf errclass (DESIGN.md)"},
	{from: "internal/metrics/...", to: []string{"internal/store/..."},
		why: "metrics counts errors by errclass, not by store"},
	{from: "internal/result/...", to: []string{"internal/workload/...", "internal/report/..."},
		why: "the result schema owns itself: renaming a workload's field must not change storebench.result/v1"},
	{from: "internal/report/...", to: []string{"internal/workload/..."},
		why: "a report renders a result, so an old result is rendered with its own figures"},
	{from: "internal/workload/...", except: testSupport, to: []string{"internal/cli/...", "internal/server/..."},
		why: "a workload reaches a server through a narrow interface, never the command layer or the server manager"},
	{from: "internal/store/storetest", to: []string{"internal/workload/...", "internal/cli/...", "internal/run/..."},
		why: "the store conformance suites test stores, not what drives them"},
	{from: "internal/testkit", to: []string{"cmd/...", "internal/..."},
		why: "testkit imports none of storebench's packages, so the tests of every floor (a store's, the server manager's) can use it"},
	{from: "internal/run/...", to: []string{"internal/cli/...", "cmd/..."},
		why: "the runner knows no command line: the CLI fills run.Options and shows what a run.Observer is told"},
	{from: "internal/...", except: []string{"internal/cli/...", "internal/livemetrics/..."}, to: []string{"internal/livemetrics/..."},
		why: "live metrics are the command line's choice: the runner tells a run.Observer and knows no exporter"},
	{from: "internal/livemetrics/...", to: []string{"cmd/...", "internal/..."}, allow: []string{"internal/livemetrics/...", "internal/run", "internal/metrics"},
		why: "live metrics read what a run.Observer is told (run, metrics), never the engine's per-op path"},
	{from: "internal/cli/...", to: []string{"internal/store/..."}, allow: []string{"internal/store"},
		why: "the command layer opens no store: the binary's registry (internal/kinds) names the backends"},
	{from: "internal/...", to: []string{"internal/kinds", "internal/workload/all"},
		why: "the lists of store kinds and workloads are the binary's (cmd) and the tests': the layers between are given them and name none"},
	{from: "...", except: testSupport, to: testSupport,
		why: "test support is for _test.go files only"},
}

// exceptions are violations on main that other parts of issue 16 remove;
// each names its part. Delete the line with the import: the test fails on
// an exception nothing needs any more, so the list cannot go stale.
var exceptions = []struct{ from, to, part string }{}

func match(pattern, pkg string) bool {
	if pattern == "..." {
		return true
	}
	if base, ok := strings.CutSuffix(pattern, "/..."); ok {
		return pkg == base || strings.HasPrefix(pkg, base+"/")
	}
	return pkg == pattern
}

func matchAny(patterns []string, pkg string) bool {
	return slices.ContainsFunc(patterns, func(p string) bool { return match(p, pkg) })
}

// imports lists every package of the module with the module's packages it
// imports in non-test code (go list, for this GOOS).
func imports(t *testing.T) map[string][]string {
	t.Helper()
	cmd := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, module+"...")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr(err))
	}
	graph := map[string][]string{}
	for line := range strings.Lines(string(out)) {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		pkg, ok := strings.CutPrefix(fields[0], module)
		if !ok {
			continue
		}
		graph[pkg] = []string{}
		for _, imp := range fields[1:] {
			if own, ok := strings.CutPrefix(imp, module); ok {
				graph[pkg] = append(graph[pkg], own)
			}
		}
	}
	return graph
}

func stderr(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return string(ee.Stderr)
	}
	return ""
}

// violations lists "from imports to: why" for every import graph breaks a
// rule, and the excepted imports seen.
func violations(graph map[string][]string) (broken []string, excepted map[string]bool) {
	excepted = map[string]bool{}
	for from, imps := range graph {
		for _, to := range imps {
			for _, r := range rules {
				if !match(r.from, from) || matchAny(r.except, from) || !matchAny(r.to, to) || matchAny(r.allow, to) {
					continue
				}
				known := slices.IndexFunc(exceptions, func(e struct{ from, to, part string }) bool { return e.from == from && e.to == to })
				if known >= 0 {
					excepted[from+" "+to] = true
					continue
				}
				broken = append(broken, fmt.Sprintf("%s imports %s: %s", from, to, r.why))
			}
		}
	}
	slices.Sort(broken)
	return broken, excepted
}

func TestLayering(t *testing.T) {
	graph := imports(t)
	for _, must := range []string{"internal/store", "internal/metrics", "internal/result", "internal/report", "internal/workload"} {
		if _, ok := graph[must]; !ok {
			t.Fatalf("go list found no %s: the graph is not the module's", must)
		}
	}
	broken, excepted := violations(graph)
	for _, b := range broken {
		t.Error(b)
	}
	for _, e := range exceptions {
		if !excepted[e.from+" "+e.to] {
			t.Errorf("exception %s → %s (%s) is not needed any more: delete it", e.from, e.to, e.part)
		}
	}
}

// The rules catch what they are written for: a store importing a workload,
// metrics importing a store, a workload importing the server manager, a
// package importing test support, the runner importing the command layer,
// the command layer importing a store backend, the runner importing the list
// of store kinds.
func TestLayeringRules(t *testing.T) {
	graph := map[string][]string{
		"internal/store/redis":           {"internal/store", "internal/workload"},
		"internal/store":                 {"internal/errclass"},
		"internal/metrics":               {"internal/errclass", "internal/store/redis"},
		"internal/workload/kv":           {"internal/server"},
		"internal/workload/workloadtest": {"internal/server/servertest"},
		"internal/cli":                   {"internal/store/storetest", "internal/store", "internal/store/redis", "internal/run"},
		"internal/run":                   {"internal/cli", "internal/target", "internal/kinds"},
		"internal/report":                {"internal/result"},
	}
	broken, _ := violations(graph)
	want := []string{
		"internal/cli imports internal/store/redis: the command layer opens no store: the binary's registry (internal/kinds) names the backends",
		"internal/cli imports internal/store/storetest: test support is for _test.go files only",
		"internal/cli imports internal/store/storetest: the command layer opens no store: the binary's registry (internal/kinds) names the backends",
		"internal/metrics imports internal/store/redis: metrics counts errors by errclass, not by store",
		"internal/run imports internal/cli: the runner knows no command line: the CLI fills run.Options and shows what a run.Observer is told",
		"internal/run imports internal/kinds: the lists of store kinds and workloads are the binary's (cmd) and the tests': the layers between are given them and name none",
		"internal/store/redis imports internal/workload: a store is the bottom floor: it knows no workload, target, metrics or result",
		"internal/store/redis imports internal/workload: store imports none of our other packages but the leaf errclass (DESIGN.md)",
		"internal/workload/kv imports internal/server: a workload reaches a server through a narrow interface, never the command layer or the server manager",
	}
	if !slices.Equal(broken, want) {
		t.Errorf("violations:\n%s\nwant:\n%s", strings.Join(broken, "\n"), strings.Join(want, "\n"))
	}
}
