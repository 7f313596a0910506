// Package scenario reads scenario files: targets × workloads × load, strictly
// (an unknown field is an error naming file:line), and expands them into cells.
package scenario

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/storebench/storebench/internal/target"
	"github.com/storebench/storebench/internal/workload"
)

// Scenario is a parsed scenario file.
type Scenario struct {
	Name        string `yaml:"name" json:"name"`
	Description string `yaml:"description,omitempty" json:"description,omitempty"`
	// SkipUnavailable lets a suite run on whatever stores are installed: a
	// managed target whose binary is missing is skipped and noted, not an error.
	SkipUnavailable bool       `yaml:"skip_unavailable,omitempty" json:"skip_unavailable,omitempty"`
	Seed            uint64     `yaml:"seed,omitempty" json:"seed"`
	Targets         []Target   `yaml:"targets" json:"targets"`
	Workloads       []Workload `yaml:"workloads" json:"workloads"`
	Load            Load       `yaml:"load,omitempty" json:"load"`
	// Source is the file name, for error messages.
	Source string `yaml:"-" json:"source,omitempty"`
}

// Target is one entry of targets: a string ("redis:aof-always",
// "postgres://…") or a mapping with store, profile, url, name, options.
type Target struct {
	Raw  string `yaml:"-" json:"-"`
	Spec target.Spec
	Line int `yaml:"-" json:"-"`
}

// MarshalJSON records the target as its spec.
func (t Target) MarshalJSON() ([]byte, error) {
	return jsonOf(t.Spec)
}

var targetFields = map[string]bool{"name": true, "store": true, "profile": true, "url": true, "options": true}

// UnmarshalYAML accepts both forms and rejects unknown fields in the mapping form.
func (t *Target) UnmarshalYAML(n *yaml.Node) error {
	t.Line = n.Line
	switch n.Kind {
	case yaml.ScalarNode:
		t.Raw = n.Value
		return nil
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if !targetFields[k.Value] {
				return fmt.Errorf("line %d: field %s not found in target (valid: name, store, profile, url, options)", k.Line, k.Value)
			}
		}
		return n.Decode(&t.Spec)
	}
	return fmt.Errorf("line %d: a target is a name like \"redis\" or a mapping with store/profile/url", n.Line)
}

// Workload is one entry of workloads. Its fields are those of every workload
// type; Validate rejects the ones that do not apply to its type.
type Workload struct {
	Type      string  `yaml:"type" json:"type"`
	Keys      []int64 `yaml:"keys,omitempty" json:"keys,omitempty"`
	ValueSize int     `yaml:"value_size,omitempty" json:"value_size,omitempty"`
	KeyMode   string  `yaml:"key_mode,omitempty" json:"key_mode,omitempty"`
	Line      int     `yaml:"-" json:"-"`
}

// Load is how hard the clients drive each target.
type Load struct {
	Clients   int   `yaml:"clients,omitempty" json:"clients"`
	WarmupOps int64 `yaml:"warmup_ops,omitempty" json:"warmup_ops"`
}

// Workloads this binary can run.
var Workloads = []string{"kv"}

// Defaults fills what the file leaves out.
func (s *Scenario) Defaults() {
	if s.Seed == 0 {
		s.Seed = 42
	}
	if s.Load.Clients == 0 {
		s.Load.Clients = 1
	}
	for i := range s.Workloads {
		w := &s.Workloads[i]
		if w.Type == "kv" {
			if len(w.Keys) == 0 {
				w.Keys = []int64{1000, 10000, 100000}
			}
			if w.ValueSize == 0 {
				w.ValueSize = 100
			}
			if w.KeyMode == "" {
				w.KeyMode = string(workload.KeyRandomFloat)
			}
		}
	}
}

// Parse reads a scenario from r; name is used in error messages.
func Parse(name string, r io.Reader) (*Scenario, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	var s Scenario
	if err := dec.Decode(&s); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s: empty scenario", name)
		}
		return nil, fmt.Errorf("%s", locate(name, err))
	}
	s.Source = name
	var root yaml.Node
	if yaml.Unmarshal(b, &root) == nil {
		s.recordWorkloadLines(&root)
	}
	return &s, nil
}

// recordWorkloadLines remembers where each workload starts, for later errors.
func (s *Scenario) recordWorkloadLines(root *yaml.Node) {
	if len(root.Content) == 0 || root.Content[0].Kind != yaml.MappingNode {
		return
	}
	m := root.Content[0]
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == "workloads" && m.Content[i+1].Kind == yaml.SequenceNode {
			for j, n := range m.Content[i+1].Content {
				if j < len(s.Workloads) {
					s.Workloads[j].Line = n.Line
				}
			}
		}
	}
}

var lineRE = regexp.MustCompile(`line (\d+): `)

// locate rewrites yaml's "line N: msg" into "file:N: msg", one per line.
func locate(name string, err error) string {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	msg = strings.TrimPrefix(msg, "unmarshal errors:\n")
	var out []string
	for _, l := range strings.Split(msg, "\n") {
		l = strings.TrimSpace(l)
		if l == "" {
			continue
		}
		if m := lineRE.FindStringSubmatchIndex(l); m != nil {
			l = name + ":" + l[m[2]:m[3]] + ": " + l[:m[0]] + l[m[1]:]
		} else {
			l = name + ": " + l
		}
		out = append(out, strings.TrimSpace(l))
	}
	return strings.Join(out, "; ")
}

// Validate checks the scenario against the store registry, before any work.
func (s *Scenario) Validate(reg target.Registry) error {
	where := func(line int) string {
		if line > 0 {
			return s.Source + ":" + strconv.Itoa(line)
		}
		return s.Source
	}
	if len(s.Targets) == 0 {
		return fmt.Errorf("%s: no targets", s.Source)
	}
	if len(s.Workloads) == 0 {
		return fmt.Errorf("%s: no workloads", s.Source)
	}
	for i := range s.Targets {
		t := &s.Targets[i]
		if t.Raw != "" {
			spec, err := reg.Parse(t.Raw)
			if err != nil {
				return fmt.Errorf("%s: %v", where(t.Line), err)
			}
			t.Spec = spec
			continue
		}
		if t.Spec.URL != "" {
			spec, err := reg.Parse(t.Spec.URL)
			if err != nil {
				return fmt.Errorf("%s: %v", where(t.Line), err)
			}
			if t.Spec.Store != "" && t.Spec.Store != spec.Store {
				return fmt.Errorf("%s: store %s does not match URL scheme (%s)", where(t.Line), t.Spec.Store, spec.Store)
			}
			t.Spec.Store = spec.Store
		}
		if err := reg.Check(t.Spec); err != nil {
			return fmt.Errorf("%s: %v", where(t.Line), err)
		}
	}
	seen := map[string]bool{}
	for _, t := range s.Targets {
		if seen[t.Spec.Label()] {
			return fmt.Errorf("%s: target %s is listed twice (give one a name)", where(t.Line), t.Spec.Label())
		}
		seen[t.Spec.Label()] = true
	}
	if s.Load.Clients <= 0 {
		return fmt.Errorf("%s: load.clients must be positive, got %d", s.Source, s.Load.Clients)
	}
	if s.Load.WarmupOps < 0 {
		return fmt.Errorf("%s: load.warmup_ops must not be negative, got %d", s.Source, s.Load.WarmupOps)
	}
	for _, w := range s.Workloads {
		if err := w.validate(); err != nil {
			return fmt.Errorf("%s: %v", where(w.Line), err)
		}
		for _, t := range s.Targets {
			k, _ := reg.Lookup(t.Spec.Store)
			if !k.Supports(w.Type) {
				return fmt.Errorf("%s: store %s does not support workload %s", where(w.Line), k.Name, w.Type)
			}
		}
	}
	return nil
}

func (w Workload) validate() error {
	switch w.Type {
	case "kv":
		for _, n := range w.Keys {
			if n <= 0 {
				return fmt.Errorf("kv: keys must be positive, got %d", n)
			}
		}
		if w.ValueSize <= 0 {
			return fmt.Errorf("kv: value_size must be positive, got %d", w.ValueSize)
		}
		if _, err := workload.ParseKeyMode(w.KeyMode); err != nil {
			return fmt.Errorf("kv: %v", err)
		}
		return nil
	case "":
		return errors.New("workload without a type (valid: " + strings.Join(Workloads, ", ") + ")")
	}
	return fmt.Errorf("unknown workload %q (valid: %s)", w.Type, strings.Join(Workloads, ", "))
}
