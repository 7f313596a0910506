// Package scenario reads scenario files: targets × workloads × load, strictly
// (an unknown field is an error naming file:line), and expands them into cells.
package scenario

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/storebench/storebench/internal/netem"
	"github.com/storebench/storebench/internal/result"
	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/target"
	"github.com/storebench/storebench/internal/workload"
	"github.com/storebench/storebench/internal/workload/durability"
	"github.com/storebench/storebench/internal/workload/keydist"
	"github.com/storebench/storebench/internal/workload/mix"
	"github.com/storebench/storebench/internal/workload/payments"
	"github.com/storebench/storebench/internal/workload/sessions"
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
	// ClientThreads is the client's GOMAXPROCS for the whole run (0: one
	// per CPU it may use); --client-threads overrides it. A suite sets it
	// to match the tool its article used (redis-benchmark: one thread).
	ClientThreads int `yaml:"client_threads,omitempty" json:"client_threads,omitempty"`
	// ClientCPUs and ServerCPUs pin the client and the managed servers to
	// CPUs ("0", "0-1", "0,2"); --client-cpus and --server-cpus override
	// them. A suite sets them to match its article's machine.
	ClientCPUs string `yaml:"client_cpus,omitempty" json:"client_cpus,omitempty"`
	ServerCPUs string `yaml:"server_cpus,omitempty" json:"server_cpus,omitempty"`
	// Repeat runs every cell this many times, in rounds over each target's
	// cells (0 or 1: once); --repeat overrides it. A suite sets it where its
	// article averaged several runs.
	Repeat int `yaml:"repeat,omitempty" json:"repeat,omitempty"`
	// Keep leaves every target's data in place after the run (run --keep):
	// targets named by URL only.
	Keep bool `yaml:"keep,omitempty" json:"keep,omitempty"`
	// Quick replaces parts of the scenario under --quick: a smaller run of the same shape.
	Quick *Quick `yaml:"quick,omitempty" json:"quick,omitempty"`
	// Article is the published experiment a suite reproduces.
	Article *result.Article `yaml:"article,omitempty" json:"-"`
	// Replica (--replica) adds sessions cells whose reads go to a managed
	// PostgreSQL streaming replica.
	Replica bool `yaml:"-" json:"replica,omitempty"`
	// Source is the file name, for error messages.
	Source string `yaml:"-" json:"source,omitempty"`
}

// Quick is what --quick changes: fewer keys, fewer ops, shorter phases.
type Quick struct {
	Keys       []int64         `yaml:"keys,omitempty" json:"keys,omitempty"`
	Ops        int64           `yaml:"ops,omitempty" json:"ops,omitempty"`
	Duration   Duration        `yaml:"duration,omitempty" json:"duration,omitempty"`
	Warmup     Duration        `yaml:"warmup,omitempty" json:"warmup,omitempty"`
	Payments   *payments.Spec  `yaml:"payments,omitempty" json:"payments,omitempty"`
	Durability *DurabilitySpec `yaml:"durability,omitempty" json:"durability,omitempty"`
	Sessions   *sessions.Spec  `yaml:"sessions,omitempty" json:"sessions,omitempty"`
	Repeat     int             `yaml:"repeat,omitempty" json:"repeat,omitempty"`
}

// DurabilitySpec is the durability workload's section: how many crashes and
// when (zero fields take the workload's defaults).
type DurabilitySpec struct {
	Trials          int      `yaml:"trials,omitempty" json:"trials,omitempty"`
	MinAcked        int64    `yaml:"min_acked,omitempty" json:"min_acked,omitempty"`
	KillWindow      Duration `yaml:"kill_window,omitempty" json:"kill_window,omitempty"`
	TrialTimeout    Duration `yaml:"trial_timeout,omitempty" json:"trial_timeout,omitempty"`
	RecoveryTimeout Duration `yaml:"recovery_timeout,omitempty" json:"recovery_timeout,omitempty"`
}

// Overlay returns d with o's set fields on top.
func (d DurabilitySpec) Overlay(o *DurabilitySpec) DurabilitySpec {
	if o == nil {
		return d
	}
	if o.Trials != 0 {
		d.Trials = o.Trials
	}
	if o.MinAcked != 0 {
		d.MinAcked = o.MinAcked
	}
	if o.KillWindow != 0 {
		d.KillWindow = o.KillWindow
	}
	if o.TrialTimeout != 0 {
		d.TrialTimeout = o.TrialTimeout
	}
	if o.RecoveryTimeout != 0 {
		d.RecoveryTimeout = o.RecoveryTimeout
	}
	return d
}

// DurabilityParams builds the durability workload's parameters.
func (s *Scenario) DurabilityParams(w Workload) durability.Params {
	d := DurabilitySpec{}.Overlay(w.Durability)
	return durability.Params{
		Trials: d.Trials, Writers: s.EffectiveLoad(w).Clients, ValueSize: w.ValueSize, MinAcked: d.MinAcked,
		KillWindow: time.Duration(d.KillWindow), Seed: s.Seed,
		TrialTimeout: time.Duration(d.TrialTimeout), RecoveryTimeout: time.Duration(d.RecoveryTimeout),
	}.WithDefaults()
}

// ApplyQuick shrinks the scenario as its quick section says.
func (s *Scenario) ApplyQuick() error {
	if s.Quick == nil {
		return fmt.Errorf("%s has no quick mode", s.Name)
	}
	q := s.Quick
	if q.Repeat > 0 {
		s.Repeat = q.Repeat
	}
	for i := range s.Workloads {
		w := &s.Workloads[i]
		if len(q.Keys) > 0 && len(w.Keys) > 0 {
			w.Keys = q.Keys
		}
		// Shrink within the workload's own mode: an op count stays an op
		// count (its warm-up ops still apply), a duration stays a duration.
		eff := s.EffectiveLoad(*w)
		l := Load{}.Overlay(w.Load)
		switch {
		case eff.Ops > 0 && q.Ops > 0:
			l.Ops, l.Duration = min(q.Ops, eff.Ops), 0
		case eff.Duration > 0 && q.Duration > 0:
			l.Ops, l.Duration = 0, min(q.Duration, eff.Duration)
			if q.Warmup > 0 {
				l.Warmup = min(q.Warmup, eff.Warmup)
			}
		}
		w.Load = &l
		if q.Sessions != nil && w.Sessions != nil {
			sp := w.Sessions.Overlay(q.Sessions)
			w.Sessions = &sp
		}
		if q.Durability != nil && w.Type == "durability" {
			d := DurabilitySpec{}.Overlay(w.Durability).Overlay(q.Durability)
			w.Durability = &d
		}
		if q.Payments != nil && w.Payments != nil {
			sp := w.Payments.Overlay(q.Payments)
			w.Payments = &sp
		}
	}
	return nil
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

// fieldName is what a mistyped field name looks like; anything else is not
// quoted back in an error, since it may be part of a URL.
var fieldName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]{0,40}$`)

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
			switch {
			case targetFields[k.Value]:
			case !fieldName.MatchString(k.Value):
				// Not echoed: "- postgres://u:pa: ss@h/db" is a mapping whose
				// key holds part of a password.
				return fmt.Errorf("line %d: this target reads as a mapping, not a name or URL: quote a URL that holds \": \" or \" #\" (in a password, percent-encode them)", k.Line)
			default:
				return fmt.Errorf("line %d: field %s not found in target (valid: name, store, profile, url, options)", k.Line, k.Value)
			}
		}
		return n.Decode(&t.Spec)
	}
	return fmt.Errorf("line %d: a target is a name like \"redis\" or a mapping with store/profile/url", n.Line)
}

// Workload is one entry of workloads. Its fields are those of every workload
// type; validate rejects the ones that do not apply to its type.
type Workload struct {
	Type string `yaml:"type" json:"type"`
	// Name tells two entries of one type apart in cell ids (default: the type).
	Name       string   `yaml:"name,omitempty" json:"name,omitempty"`
	Keys       []int64  `yaml:"keys,omitempty" json:"keys,omitempty"`
	ValueSize  int      `yaml:"value_size,omitempty" json:"value_size,omitempty"`
	KeyMode    string   `yaml:"key_mode,omitempty" json:"key_mode,omitempty"`
	Batch      int      `yaml:"batch,omitempty" json:"batch,omitempty"`
	Keyspace   int64    `yaml:"keyspace,omitempty" json:"keyspace,omitempty"`
	Operations []string `yaml:"operations,omitempty" json:"operations,omitempty"`
	Value      string   `yaml:"value,omitempty" json:"value,omitempty"`
	// ReadRatio is mix's share of gets, 0 to 1 (a pointer: 0 means all sets).
	ReadRatio *float64 `yaml:"read_ratio,omitempty" json:"read_ratio,omitempty"`
	// KeyDist is mix's key distribution: uniform, zipfian or sequential.
	KeyDist string `yaml:"key_dist,omitempty" json:"key_dist,omitempty"`
	// Load overrides the scenario's load for this workload only.
	Load *Load `yaml:"load,omitempty" json:"load,omitempty"`
	// Sessions is the sessions workload's own section.
	Sessions *sessions.Spec `yaml:"sessions,omitempty" json:"sessions,omitempty"`
	// Durability is the durability workload's own section.
	Durability *DurabilitySpec `yaml:"durability,omitempty" json:"durability,omitempty"`
	// Payments is the payments workload's own section.
	Payments *payments.Spec `yaml:"payments,omitempty" json:"payments,omitempty"`
	// Stall stops the managed server for a while in each measured phase.
	Stall *Stall `yaml:"stall,omitempty" json:"stall,omitempty"`
	// Targets restricts the workload to these targets (by name); empty = all.
	Targets []string `yaml:"targets,omitempty" json:"targets,omitempty"`
	Line    int      `yaml:"-" json:"-"`
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

// Stall stops a managed server (SIGSTOP) After into each measured phase of
// a workload, and continues it (SIGCONT) For later: a stall that an open
// loop records for every op due during it and a closed loop only for the
// ops in flight (coordinated omission).
type Stall struct {
	After Duration `yaml:"after" json:"after"`
	For   Duration `yaml:"for" json:"for"`
}

// Target is the stall as the target package runs it.
func (s Stall) Target() target.Stall {
	return target.Stall{After: time.Duration(s.After), For: time.Duration(s.For)}
}

// check validates the stall against the workload's load: it must fall
// inside a timed phase.
func (s Stall) check(l Load) error {
	switch {
	case s.For <= 0:
		return fmt.Errorf("stall: for must be positive (how long the server stays stopped), got %v", time.Duration(s.For))
	case s.After < 0:
		return fmt.Errorf("stall: after must not be negative, got %v", time.Duration(s.After))
	case l.Duration <= 0:
		return errors.New("stall: needs a timed phase (a load duration or --duration, e.g. 5s), so that after can be checked against it")
	case s.After >= l.Duration:
		return fmt.Errorf("stall: after (%v) must fall inside the measured phase (duration %v)", time.Duration(s.After), time.Duration(l.Duration))
	}
	return nil
}

// checkStallTarget refuses a stall of anything but a managed server: only a
// process storebench started is its to stop.
func checkStallTarget(k target.Kind, spec target.Spec) error {
	switch {
	case k.Server == "":
		return fmt.Errorf("stall: target %s is an in-process store, with no server to stop; stall a managed server such as redis or postgres", spec.Label())
	case !spec.Managed():
		return fmt.Errorf("stall: target %s is an external server, which storebench does not stop; stall a managed one (give the store without a URL)", spec.Label())
	}
	return nil
}

// Load is how hard the clients drive each target. Zero fields are unset: a
// workload's own load overrides the scenario's field by field.
type Load struct {
	Clients      int      `yaml:"clients,omitempty" json:"clients,omitempty"`
	Pipeline     int      `yaml:"pipeline,omitempty" json:"pipeline,omitempty"`
	ConnectPerOp *bool    `yaml:"connect_per_op,omitempty" json:"connect_per_op,omitempty"`
	Rate         float64  `yaml:"rate,omitempty" json:"rate,omitempty"`
	Ops          int64    `yaml:"ops,omitempty" json:"ops,omitempty"`
	Duration     Duration `yaml:"duration,omitempty" json:"duration,omitempty"`
	Warmup       Duration `yaml:"warmup,omitempty" json:"warmup,omitempty"`
	WarmupOps    int64    `yaml:"warmup_ops,omitempty" json:"warmup_ops,omitempty"`
	// RTT puts a network between the clients and the target (netem): every
	// round trip pays this much more. Unset: reached directly; 0: through
	// the network proxy, with no delay (its own cost).
	RTT *Duration `yaml:"rtt,omitempty" json:"rtt,omitempty"`
	// Jitter varies each round trip by up to ±Jitter (needs rtt).
	Jitter Duration `yaml:"jitter,omitempty" json:"jitter,omitempty"`
	// Bandwidth limits each direction, e.g. 100mbit or 10MB/s (needs rtt).
	Bandwidth string `yaml:"bandwidth,omitempty" json:"bandwidth,omitempty"`
}

// Overlay returns l with o's set fields on top.
func (l Load) Overlay(o *Load) Load {
	if o == nil {
		return l
	}
	if o.Clients != 0 {
		l.Clients = o.Clients
	}
	if o.Pipeline != 0 {
		l.Pipeline = o.Pipeline
	}
	if o.ConnectPerOp != nil {
		l.ConnectPerOp = o.ConnectPerOp
	}
	if o.Rate != 0 {
		l.Rate = o.Rate
	}
	if o.Ops != 0 || o.Duration != 0 {
		l.Ops, l.Duration = o.Ops, o.Duration
	}
	if o.Warmup != 0 {
		l.Warmup = o.Warmup
	}
	if o.WarmupOps != 0 {
		l.WarmupOps = o.WarmupOps
	}
	if o.RTT != nil {
		l.RTT = o.RTT
	}
	if o.Jitter != 0 {
		l.Jitter = o.Jitter
	}
	if o.Bandwidth != "" {
		l.Bandwidth = o.Bandwidth
	}
	return l
}

// Network is the network the load asks for: nil when rtt is unset (the
// target is reached directly).
func (l Load) Network() (*netem.Config, error) {
	if l.RTT == nil {
		if l.Jitter != 0 || l.Bandwidth != "" {
			return nil, errors.New("jitter and bandwidth need an rtt (rtt: 0 for none)")
		}
		return nil, nil
	}
	c := netem.Config{RTT: time.Duration(*l.RTT), Jitter: time.Duration(l.Jitter)}
	if l.Bandwidth != "" {
		r, err := netem.ParseRate(l.Bandwidth)
		if err != nil {
			return nil, err
		}
		c.Bandwidth = r
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return &c, nil
}

// Workload converts to the workloads' load parameters.
func (l Load) Workload() workload.Load {
	return workload.Load{
		Clients: l.Clients, Pipeline: l.Pipeline, ConnectPerOp: l.ConnectPerOp != nil && *l.ConnectPerOp,
		Rate: l.Rate, Ops: l.Ops, Duration: time.Duration(l.Duration), Warmup: time.Duration(l.Warmup), WarmupOps: l.WarmupOps,
	}
}

// Duration is a time.Duration written as "10s", "1m30s" in YAML and JSON.
type Duration time.Duration

// UnmarshalYAML parses a Go duration string.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	v, err := time.ParseDuration(n.Value)
	if err != nil {
		return fmt.Errorf("line %d: %q is not a duration (write e.g. 10s, 2m, 500ms)", n.Line, n.Value)
	}
	*d = Duration(v)
	return nil
}

// MarshalJSON writes the duration as a string.
func (d Duration) MarshalJSON() ([]byte, error) {
	return []byte(`"` + time.Duration(d).String() + `"`), nil
}

// UnmarshalJSON reads what MarshalJSON wrote.
func (d *Duration) UnmarshalJSON(b []byte) error {
	v, err := time.ParseDuration(strings.Trim(string(b), `"`))
	*d = Duration(v)
	return err
}

// Workloads this binary can run, with what each defaults to.
var Workloads = []string{"kv", "throughput", "mix", "hotkey", "web", "sessions", "payments", "durability"}

// typeDefaults are each workload type's defaults, applied under the file.
var typeDefaults = map[string]Load{
	"kv":         {Clients: 1},
	"throughput": {Clients: 50, Ops: 100000},
	"mix":        {Clients: mix.DefaultClients, Ops: mix.DefaultOps},
	"hotkey":     {Clients: 1, Ops: 10000},
	"web":        {Clients: 1, Ops: 10000},
	"durability": {Clients: 4},
}

// EffectiveLoad is the load a workload runs with: its type's defaults, the
// scenario's load, then the workload's own.
func (s *Scenario) EffectiveLoad(w Workload) Load {
	return typeDefaults[w.Type].Overlay(&s.Load).Overlay(w.Load)
}

// Defaults fills what the file leaves out.
func (s *Scenario) Defaults() {
	if s.Seed == 0 {
		s.Seed = 42
	}
	for i := range s.Workloads {
		w := &s.Workloads[i]
		switch w.Type {
		case "kv":
			if len(w.Keys) == 0 {
				w.Keys = []int64{1000, 10000, 100000}
			}
			if w.ValueSize == 0 {
				w.ValueSize = 100
			}
		case "throughput":
			if w.Keyspace == 0 {
				w.Keyspace = 100000
			}
			if w.ValueSize == 0 {
				w.ValueSize = 3 // redis-benchmark's -d default
			}
			if len(w.Operations) == 0 {
				w.Operations = []string{"set", "get"}
			}
		case "mix":
			d := mix.Params{Keyspace: workload.Keyspace{Keys: w.Keyspace, ValueSize: w.ValueSize}, ReadRatio: w.ReadRatio, KeyDist: keydist.Dist(w.KeyDist)}.WithDefaults()
			w.Keyspace, w.ValueSize, w.ReadRatio, w.KeyDist = d.Keys, d.ValueSize, d.ReadRatio, string(d.KeyDist)
		case "hotkey", "web":
			if w.Value == "" && w.ValueSize == 0 {
				w.Value = "hello world" // the article's value
			}
		}
		switch {
		case w.KeyMode != "":
		case w.Type == "kv":
			w.KeyMode = string(workload.KeyRandomFloat)
		case w.Type == "throughput":
			w.KeyMode = string(workload.KeySequential) // redis-benchmark's key:<n>
		case w.Type == "mix":
			w.KeyMode = string(mix.DefaultKeyMode)
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
		// A YAML error may quote a value (cannot unmarshal !!str `…`): a
		// password anywhere in the file is removed from it.
		return nil, errors.New(store.RedactText(locate(name, err), string(b)))
	}
	if err := onlyDocument(name, dec); err != nil {
		return nil, err
	}
	s.Source = name
	var root yaml.Node
	if yaml.Unmarshal(b, &root) == nil {
		s.recordWorkloadLines(&root)
	}
	return &s, nil
}

// onlyDocument refuses documents after the first (after a "---"), which
// would otherwise be ignored without a word; empty ones are harmless.
func onlyDocument(name string, dec *yaml.Decoder) error {
	for {
		var doc yaml.Node
		switch err := dec.Decode(&doc); {
		case errors.Is(err, io.EOF):
			return nil
		case err != nil:
			return fmt.Errorf("%s", locate(name, err))
		case len(doc.Content) == 1 && doc.Content[0].Tag == "!!null":
			continue
		}
		return fmt.Errorf("%s:%d: a second YAML document (after ---): a scenario file holds one scenario; put each in a file of its own", name, doc.Line)
	}
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

// MaxClientThreads bounds client_threads and --client-threads: more OS
// threads than this only measures the scheduler.
const MaxClientThreads = 1024

// MaxRepeat bounds repeat and --repeat: a typo of 1000 should not start a
// week's run.
const MaxRepeat = 100

func (s *Scenario) quickRepeat() int {
	if s.Quick == nil {
		return 0
	}
	return s.Quick.Repeat
}

// Validate checks the scenario against the store registry, before any
// work. Its error is one line: it ends up as one line on the terminal.
func (s *Scenario) Validate(reg target.Registry) error {
	if err := s.validate(reg); err != nil {
		return oneLine{err}
	}
	return nil
}

// oneLine is an error whose message has its lines (errors.Join's) joined
// by "; ", each once: a sessions entry checks each of its cells alike.
type oneLine struct{ err error }

func (e oneLine) Error() string {
	var lines []string
	for _, l := range strings.Split(e.err.Error(), "\n") {
		if !slices.Contains(lines, l) {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, "; ")
}

func (e oneLine) Unwrap() error { return e.err }

func (s *Scenario) validate(reg target.Registry) error {
	budget, budgetWhy := workload.MemoryBudget()
	where := func(line int) string {
		if line > 0 {
			return s.Source + ":" + strconv.Itoa(line)
		}
		return s.Source
	}
	if len(s.Targets) == 0 {
		return fmt.Errorf("%s: no targets", s.Source)
	}
	if s.ClientThreads < 0 || s.ClientThreads > MaxClientThreads {
		return fmt.Errorf("%s: client_threads %d: want 1 to %d (or leave it out: one per CPU)", s.Source, s.ClientThreads, MaxClientThreads)
	}
	for _, r := range []struct {
		field string
		n     int
	}{{"repeat", s.Repeat}, {"quick: repeat", s.quickRepeat()}} {
		if r.n < 0 || r.n > MaxRepeat {
			return fmt.Errorf("%s: %s %d: want 1 to %d (or leave it out: once)", s.Source, r.field, r.n, MaxRepeat)
		}
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
	labels := map[string]bool{}
	for _, w := range s.Workloads {
		if err := s.validateWorkload(w); err != nil {
			return fmt.Errorf("%s: %v", where(w.Line), err)
		}
		if labels[w.Label()] {
			return fmt.Errorf("%s: two workloads are called %s (give one a name)", where(w.Line), w.Label())
		}
		labels[w.Label()] = true
		batches := s.EffectiveLoad(w).Pipeline > 1 || w.Batch > 0
		net, err := s.EffectiveLoad(w).Network()
		if err != nil {
			return fmt.Errorf("%s: %s: %v", where(w.Line), w.Label(), err)
		}
		for _, name := range w.Targets {
			if !seen[name] {
				return fmt.Errorf("%s: workload %s names target %q, which the scenario does not have", where(w.Line), w.Label(), name)
			}
		}
		if w.Stall != nil {
			if err := w.Stall.check(s.EffectiveLoad(w)); err != nil {
				return fmt.Errorf("%s: %s: %v", where(w.Line), w.Label(), err)
			}
		}
		for _, t := range s.Targets {
			if !w.AppliesTo(t.Spec.Label()) {
				continue
			}
			k, _ := reg.Lookup(t.Spec.Store)
			if w.Stall != nil {
				if err := checkStallTarget(k, t.Spec); err != nil {
					return fmt.Errorf("%s: %s: %v", where(w.Line), w.Label(), err)
				}
			}
			if net != nil && !k.NetworkCapable() {
				return fmt.Errorf("%s: %s: store %s %v", where(w.Line), w.Label(), k.Name, target.ErrNoNetwork)
			}
			if !k.Supports(w.Type) {
				return fmt.Errorf("%s: store %s does not support workload %s", where(w.Line), k.Name, w.Type)
			}
			if w.Type == "payments" {
				if err := s.checkPayments(w, k.Name); err != nil {
					return fmt.Errorf("%s: %v", where(w.Line), err)
				}
			}
			if w.Type == "durability" {
				if err := durability.Check(k, t.Spec); err != nil {
					return fmt.Errorf("%s: %v", where(w.Line), err)
				}
				if err := s.DurabilityParams(w).Validate(); err != nil {
					return fmt.Errorf("%s: %v", where(w.Line), err)
				}
			}
			if batches && !k.Batches {
				return fmt.Errorf("%s: store %s cannot send several ops per round trip (pipeline, batch); drop it from this workload's targets", where(w.Line), k.Name)
			}
			for _, e := range s.estimates(w, k.Name) {
				if err := workload.CheckMemory(e, k.DataInProcess, budget, budgetWhy); err != nil {
					return fmt.Errorf("%s: %s on %s %v", where(w.Line), w.Label(), t.Spec.Label(), err)
				}
			}
		}
	}
	return nil
}

func (s *Scenario) validateWorkload(w Workload) error {
	if err := w.checkFields(); err != nil {
		return err
	}
	l := s.EffectiveLoad(w)
	wl := l.Workload()
	switch w.Type {
	case "kv":
		if l.Ops != 0 || l.Duration != 0 || l.Rate != 0 || l.Pipeline > 1 || wl.ConnectPerOp {
			return errors.New("kv: the key counts set the op counts; ops, duration, rate, pipeline and connect_per_op do not apply (use batch for bulk writes)")
		}
		for _, n := range w.Keys {
			if err := s.KVParams(w, n).Validate(); err != nil {
				return err
			}
		}
	case "throughput":
		return s.ThroughputParams(w).Validate()
	case "mix":
		return s.MixParams(w).Validate()
	case "hotkey":
		return s.HotkeyParams(w).Validate()
	case "web":
		return s.WebParams(w).Validate()
	case "sessions":
		if w.Sessions == nil {
			return errors.New("sessions: the sessions section is required (phase: insert or churn, …)")
		}
		return w.Sessions.Check(s.Seed, wl)
	case "durability":
		if l.Ops != 0 || l.Duration != 0 || l.Rate != 0 || l.Pipeline > 1 || wl.ConnectPerOp || l.Warmup != 0 || l.WarmupOps != 0 {
			return errors.New("durability: writers write until the kill; ops, duration, rate, pipeline, connect_per_op and warm-up do not apply (set clients and the durability section)")
		}
		if l.Clients <= 0 {
			return fmt.Errorf("durability: clients must be positive, got %d", l.Clients)
		}
	case "payments":
		if l.Clients < 0 {
			return fmt.Errorf("payments: clients must be positive, got %d", l.Clients)
		}
		// Checked per target in checkPayments, which knows each store's modes.
	case "":
		return errors.New("workload without a type (valid: " + strings.Join(Workloads, ", ") + ")")
	default:
		return fmt.Errorf("unknown workload %q (valid: %s)", w.Type, strings.Join(Workloads, ", "))
	}
	return nil
}

// fieldsOf lists the workload fields each type reads; a field set for a type
// that ignores it is an error rather than silently doing nothing.
var fieldsOf = map[string][]string{
	"kv":         {"keys", "value_size", "key_mode", "batch"},
	"throughput": {"keyspace", "value_size", "key_mode", "operations", "stall"},
	"mix":        {"keyspace", "value_size", "key_mode", "read_ratio", "key_dist", "stall"},
	"hotkey":     {"value", "value_size", "stall"},
	"web":        {"value", "stall"},
	"payments":   {"payments"},
	"durability": {"durability", "value_size"},
	"sessions":   {"sessions"},
}

func (w Workload) checkFields() error {
	set := map[string]bool{
		"keys": len(w.Keys) > 0, "value_size": w.ValueSize != 0, "key_mode": w.KeyMode != "", "batch": w.Batch != 0,
		"keyspace": w.Keyspace != 0, "operations": len(w.Operations) > 0, "value": w.Value != "",
		"payments": w.Payments != nil, "durability": w.Durability != nil, "sessions": w.Sessions != nil,
		"stall": w.Stall != nil, "read_ratio": w.ReadRatio != nil, "key_dist": w.KeyDist != "",
	}
	allowed, known := fieldsOf[w.Type]
	if !known {
		return nil
	}
	for f, isSet := range set {
		if isSet && !slices.Contains(allowed, f) {
			return fmt.Errorf("%s: field %s does not apply (its fields: %s)", w.Type, f, strings.Join(allowed, ", "))
		}
	}
	return nil
}

// PaymentsSpec is a payments workload's section (empty when the file has none).
func (w Workload) PaymentsSpec() payments.Spec {
	if w.Payments == nil {
		return payments.Spec{}
	}
	return *w.Payments
}

// checkPayments builds every cell's parameters for one store kind, so a bad
// payments section fails before any work.
func (s *Scenario) checkPayments(w Workload, kind string) error {
	spec := w.PaymentsSpec()
	for _, v := range spec.Variants(kind) {
		if _, err := payments.PlanParams(spec, v, s.Seed, s.EffectiveLoad(w).Workload()); err != nil {
			return err
		}
	}
	return nil
}
