package scenario

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/storebench/storebench/internal/workload"
)

// Workload is one entry of workloads: the fields every workload has, and
// its type's own section (Spec), which Resolve decodes from the entry as
// written once the registry says which fields the type has.
type Workload struct {
	Type string `yaml:"type" json:"type"`
	// Name tells two entries of one type apart in cell ids (default: the type).
	Name string `yaml:"name,omitempty" json:"name,omitempty"`
	// Load overrides the scenario's load for this workload only.
	Load *Load `yaml:"load,omitempty" json:"load,omitempty"`
	// Stall stops the managed server for a while in each measured phase.
	Stall *Stall `yaml:"stall,omitempty" json:"stall,omitempty"`
	// Targets restricts the workload to these targets (by name); empty = all.
	Targets []string `yaml:"targets,omitempty" json:"targets,omitempty"`
	Line    int      `yaml:"-" json:"-"`
	// Spec is the type's own section, set by Resolve.
	Spec workload.Spec `yaml:"-" json:"-"`
	node *yaml.Node
}

// common is the part of an entry every type has.
type common struct {
	Type    string   `yaml:"type"`
	Name    string   `yaml:"name,omitempty"`
	Load    *Load    `yaml:"load,omitempty"`
	Stall   *Stall   `yaml:"stall,omitempty"`
	Targets []string `yaml:"targets,omitempty"`
}

// UnmarshalYAML keeps the entry as written, for Resolve, and reads the
// common fields.
func (w *Workload) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("line %d: a workload is a mapping with a type, e.g. {type: kv}", n.Line)
	}
	var c common
	if err := commonPart(n).Decode(&c); err != nil {
		return err
	}
	*w = Workload{Type: c.Type, Name: c.Name, Load: c.Load, Stall: c.Stall, Targets: c.Targets, Line: n.Line, node: n}
	return nil
}

// commonPart is the mapping n with only the common fields' keys.
func commonPart(n *yaml.Node) *yaml.Node {
	names := yamlFields(reflect.TypeOf(common{}))
	out := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: n.Line, Column: n.Column}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if slices.Contains(names, n.Content[i].Value) {
			out.Content = append(out.Content, n.Content[i], n.Content[i+1])
		}
	}
	return out
}

// AppliesTo reports whether the workload runs on the target of that label.
func (w Workload) AppliesTo(label string) bool {
	return len(w.Targets) == 0 || slices.Contains(w.Targets, label)
}

// Label is the workload's name in cell ids.
func (w Workload) Label() string {
	if w.Name != "" {
		return w.Name
	}
	return w.Type
}

// MarshalJSON records the entry flat, as it is written: the common fields
// and the section's.
func (w Workload) MarshalJSON() ([]byte, error) {
	m := map[string]any{}
	if w.Spec != nil {
		if err := remarshal(w.Spec, &m); err != nil {
			return nil, err
		}
	} else if w.node != nil {
		// Not resolved: the entry as written.
		if err := w.node.Decode(&m); err != nil {
			return nil, err
		}
	}
	if err := remarshal(common{Type: w.Type, Name: w.Name, Load: w.Load, Stall: w.Stall, Targets: w.Targets}, &m); err != nil {
		return nil, err
	}
	return json.Marshal(m)
}

// remarshal lays v's JSON fields over m.
func remarshal(v any, m *map[string]any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, m)
}

// Quick is what --quick changes: fewer ops, shorter phases, fewer repeats,
// and any workload field (keys, a section's), laid over each entry that
// has it.
type Quick struct {
	Ops      int64    `yaml:"ops,omitempty" json:"ops,omitempty"`
	Duration Duration `yaml:"duration,omitempty" json:"duration,omitempty"`
	Warmup   Duration `yaml:"warmup,omitempty" json:"warmup,omitempty"`
	Repeat   int      `yaml:"repeat,omitempty" json:"repeat,omitempty"`
	fields   *yaml.Node
}

type quickCommon struct {
	Ops      int64    `yaml:"ops,omitempty"`
	Duration Duration `yaml:"duration,omitempty"`
	Warmup   Duration `yaml:"warmup,omitempty"`
	Repeat   int      `yaml:"repeat,omitempty"`
}

// UnmarshalYAML reads the common fields and keeps the rest for Resolve.
func (q *Quick) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("line %d: quick is a mapping, e.g. {ops: 1000}", n.Line)
	}
	names := yamlFields(reflect.TypeOf(quickCommon{}))
	mine := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: n.Line}
	rest := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: n.Line}
	for i := 0; i+1 < len(n.Content); i += 2 {
		dst := rest
		if slices.Contains(names, n.Content[i].Value) {
			dst = mine
		}
		dst.Content = append(dst.Content, n.Content[i], n.Content[i+1])
	}
	var c quickCommon
	if err := mine.Decode(&c); err != nil {
		return err
	}
	*q = Quick{Ops: c.Ops, Duration: c.Duration, Warmup: c.Warmup, Repeat: c.Repeat, fields: rest}
	return nil
}

// MarshalJSON records the quick section whole.
func (q Quick) MarshalJSON() ([]byte, error) {
	m := map[string]any{}
	if q.fields != nil {
		if err := q.fields.Decode(&m); err != nil {
			return nil, err
		}
	}
	if err := remarshal(q.common(), &m); err != nil {
		return nil, err
	}
	return json.Marshal(m)
}

func (q Quick) common() quickCommon {
	return quickCommon{Ops: q.Ops, Duration: q.Duration, Warmup: q.Warmup, Repeat: q.Repeat}
}

// overlay is workload fields to lay over every entry that has them.
type overlay struct {
	origin string // where it comes from, for errors: "quick", "--keys"
	fields *yaml.Node
}

// Override lays fields (as a scenario entry spells them, e.g.
// {"keys": []int64{1000}, "sessions": {"time_scale": 0.01}}) over every
// workload entry that has them, after the quick section's; origin names
// them in errors (e.g. "--keys").
func (s *Scenario) Override(origin string, fields map[string]any) error {
	var n yaml.Node
	if err := n.Encode(fields); err != nil {
		return fmt.Errorf("%s: %w", origin, err)
	}
	s.overlays = append(s.overlays, overlay{origin: origin, fields: &n})
	return nil
}

// yamlFields lists the yaml field names of struct type t (inline structs
// included).
func yamlFields(t reflect.Type) []string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil
	}
	var out []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("yaml")
		name, opts, _ := strings.Cut(tag, ",")
		switch {
		case name == "-":
		case strings.Contains(opts, "inline"):
			out = append(out, yamlFields(f.Type)...)
		case name == "":
			out = append(out, strings.ToLower(f.Name))
		default:
			out = append(out, name)
		}
	}
	return out
}

// fieldType is the type of t's field spelled name in YAML.
func fieldType(t reflect.Type, name string) (reflect.Type, bool) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil, false
	}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if strings.Contains(opts, "inline") {
			if ft, ok := fieldType(f.Type, name); ok {
				return ft, true
			}
			continue
		}
		if tag == name || tag == "" && strings.ToLower(f.Name) == name {
			return f.Type, true
		}
	}
	return nil, false
}

var unmarshalerType = reflect.TypeOf((*yaml.Unmarshaler)(nil)).Elem()

// unknownField finds the first mapping key in n, at any depth, that type t
// has no field for: yaml's strict mode reaches only a whole document, and
// an entry's type is known only once the registry is.
func unknownField(n *yaml.Node, t reflect.Type) (key *yaml.Node, in reflect.Type) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) {
		return nil, nil
	}
	switch {
	case t.Kind() == reflect.Struct && n.Kind == yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			ft, ok := fieldType(t, n.Content[i].Value)
			if !ok {
				return n.Content[i], t
			}
			if k, in := unknownField(n.Content[i+1], ft); k != nil {
				return k, in
			}
		}
	case (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) && n.Kind == yaml.SequenceNode:
		for _, e := range n.Content {
			if k, in := unknownField(e, t.Elem()); k != nil {
				return k, in
			}
		}
	case t.Kind() == reflect.Map && n.Kind == yaml.MappingNode:
		for i := 1; i < len(n.Content); i += 2 {
			if k, in := unknownField(n.Content[i], t.Elem()); k != nil {
				return k, in
			}
		}
	}
	return nil, nil
}

var (
	durationType    = reflect.TypeOf(Duration(0))
	goDurationType  = reflect.TypeOf(time.Duration(0))
	countedSections = []reflect.Type{reflect.TypeOf(Load{}), reflect.TypeOf(Quick{})}
)

// checkNumbers checks every number written in n, decoded into a value of
// type t, as a flag's value is checked: a fraction where t holds a whole
// number is refused (yaml truncates it), a plain number where t holds a
// time.Duration too (yaml reads nanoseconds), and a 0 written out where 0
// is no value (workload.RefuseZero; a pointer field's 0 is a value). The
// line is the offending value's.
func checkNumbers(n *yaml.Node, t reflect.Type) (int, error) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || n.Kind != yaml.MappingNode {
		return 0, nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		ft, ok := fieldType(t, k.Value)
		if !ok || k.Value == "article" { // the article's figures are not parameters
			continue
		}
		values, elem, listed := []*yaml.Node{v}, ft, false
		if ft.Kind() == reflect.Slice && v.Kind == yaml.SequenceNode {
			values, elem, listed = v.Content, ft.Elem(), true
		}
		for _, e := range values {
			if err := checkNumber(k.Value, e, elem, listed, slices.Contains(countedSections, t)); err != nil {
				return e.Line, err
			}
			if line, err := checkNumbers(e, elem); err != nil {
				return line, err
			}
		}
		if ft.Kind() == reflect.Map && v.Kind == yaml.MappingNode {
			for j := 1; j < len(v.Content); j += 2 {
				if line, err := checkNumbers(v.Content[j], ft.Elem()); err != nil {
					return line, err
				}
			}
		}
	}
	return 0, nil
}

// checkNumber checks one scalar v of field name, of type t; listed says it
// is an element of a list (whose bound says what a 0 in it is), counted
// that the field's section falls back to counted ops without a duration.
func checkNumber(name string, v *yaml.Node, t reflect.Type, listed, counted bool) error {
	if v.Kind != yaml.ScalarNode || v.Tag == "!!null" {
		return nil
	}
	optional := t.Kind() == reflect.Pointer // nil is unset: 0 is a value
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	zero := false
	switch {
	case t == durationType || t == goDurationType:
		if t == goDurationType && (v.Tag == "!!float" || v.Tag == "!!int" && v.Value != "0") {
			return fmt.Errorf("%s %s: want a duration such as 10s or 500ms", name, v.Value)
		}
		d, err := time.ParseDuration(v.Value)
		zero = err == nil && d == 0
	case t.Kind() >= reflect.Int && t.Kind() <= reflect.Uint64:
		if v.Tag == "!!float" {
			return fmt.Errorf("%s %s: want a whole number (a fraction is refused, not truncated)", name, v.Value)
		}
		n, err := strconv.ParseFloat(strings.ReplaceAll(v.Value, "_", ""), 64)
		zero = v.Tag == "!!int" && err == nil && n == 0
	}
	if !zero || optional || listed {
		return nil
	}
	instead := "the default"
	if counted {
		instead = "counted ops"
	}
	return workload.RefuseZero(name, name, instead)
}

// checkDocument is checkNumbers over a whole scenario file b (name), which
// Parse has decoded: the scenario's own fields, its load, quick section and
// each entry's common fields (an entry's own section is its type's, checked
// when Resolve decodes it).
func checkDocument(name string, b []byte) error {
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil || len(doc.Content) == 0 {
		return nil // Parse's decoding said what is wrong
	}
	if line, err := checkNumbers(doc.Content[0], reflect.TypeOf(Scenario{})); err != nil {
		return fmt.Errorf("%s:%d: %v", name, line, err)
	}
	return nil
}
