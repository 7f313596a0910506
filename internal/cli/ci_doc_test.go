package cli

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// The GitHub Actions workflow of docs/ci.md parses, runs storebench, and
// every storebench command and flag it runs exists (issue 33): a renamed
// flag breaks this test, not a user's pipeline.
func TestCIDocWorkflow(t *testing.T) {
	b, err := os.ReadFile("../../docs/ci.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)```yaml\n(.*?)```").FindSubmatch(b)
	if m == nil {
		t.Fatal("docs/ci.md has no yaml block")
	}
	var wf struct {
		On   any `yaml:"on"`
		Jobs map[string]struct {
			RunsOn   string         `yaml:"runs-on"`
			Services map[string]any `yaml:"services"`
			Steps    []struct {
				Uses string `yaml:"uses"`
				Run  string `yaml:"run"`
			} `yaml:"steps"`
		} `yaml:"jobs"`
	}
	dec := yaml.NewDecoder(strings.NewReader(string(m[1])))
	dec.KnownFields(false)
	if err := dec.Decode(&wf); err != nil {
		t.Fatalf("the workflow does not parse: %v", err)
	}
	root := testApp().root()
	commands := 0
	for name, job := range wf.Jobs {
		if job.RunsOn == "" || len(job.Steps) == 0 {
			t.Errorf("job %s: no runs-on or steps", name)
		}
		for _, kind := range []string{"postgres", "redis"} {
			if _, ok := job.Services[kind]; !ok {
				t.Errorf("job %s: no %s service container", name, kind)
			}
		}
		for _, st := range job.Steps {
			args := shellWords(st.Run)
			if len(args) < 2 || args[0] != "./storebench" {
				continue
			}
			commands++
			cmd, rest, err := root.Find(args[1:])
			if err != nil || cmd == root {
				t.Errorf("%q: no storebench command %q", st.Run, args[1])
				continue
			}
			for _, a := range rest {
				flag, ok := strings.CutPrefix(a, "--")
				if !ok {
					continue
				}
				flag, _, _ = strings.Cut(flag, "=")
				if cmd.Flags().Lookup(flag) == nil && cmd.InheritedFlags().Lookup(flag) == nil {
					t.Errorf("%q: storebench %s has no flag --%s", st.Run, cmd.Name(), flag)
				}
			}
		}
	}
	if commands < 2 {
		t.Errorf("%d storebench commands in the workflow; want a run with thresholds and a compare", commands)
	}
}

// shellWords splits a command line as sh would for plain words and single
// or double quotes (no expansions: "$PG,…" stays one word).
func shellWords(s string) []string {
	var out []string
	var cur strings.Builder
	in, quote := false, rune(0)
	for _, r := range s {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '\'' || r == '"':
			quote, in = r, true
		case r == ' ' || r == '\n' || r == '\t':
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if in {
		out = append(out, cur.String())
	}
	return out
}
