// Package scenario reads scenario files: targets × workloads × load, strictly
// (an unknown field is an error naming file:line), and expands them into cells.
package scenario

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/storebench/storebench/internal/netem"
	"github.com/storebench/storebench/internal/result"
	"github.com/storebench/storebench/internal/store"
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
	// Asserts are thresholds the run is judged by (as --assert, which adds
	// to them): "p99<=2ms", "redis:get:p99<=1ms", "capacity>0".
	Asserts []string `yaml:"asserts,omitempty" json:"asserts,omitempty"`
	// ClientThreads is the client's GOMAXPROCS in every cell (0: chosen
	// per cell, see run's chooseClientThreads); --client-threads overrides
	// it. A suite sets it to match the tool its article used
	// (redis-benchmark: one thread).
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
	// Shard runs one of N equal parts of the scenario (run --shard): each
	// workload's load is its share (workload.Load.Share). Not a field of
	// the file: every shard runs the same file.
	Shard workload.Shard `yaml:"-" json:"-"`
	// Quick replaces parts of the scenario under --quick: a smaller run of the same shape.
	Quick *Quick `yaml:"quick,omitempty" json:"quick,omitempty"`
	// Article is the published experiment a suite reproduces.
	Article *result.Article `yaml:"article,omitempty" json:"-"`
	// Source is the file name, for error messages.
	Source string `yaml:"-" json:"source,omitempty"`
	// Values are the file's string values that may hold a password (a
	// URL, a password= parameter) in any field, not only a target's URL:
	// the command line redacts their passwords from all it prints.
	Values []string `yaml:"-" json:"-"`
	// overlays are workload fields laid over every entry that has them, in
	// order (the quick section's, then the command line's): Resolve's.
	overlays []overlay
	// beforeQuick is the scenario as ApplyQuick found it: Resolve says
	// what --quick changed against its entries (quickNote).
	beforeQuick *Scenario
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

var targetFields = map[string]bool{"name": true, "store": true, "version": true, "profile": true, "url": true, "options": true}

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
				return fmt.Errorf("line %d: field %s not found in target (valid: name, store, version, profile, url, options)", k.Line, k.Value)
			}
		}
		return n.Decode(&t.Spec)
	}
	return fmt.Errorf("line %d: a target is a name like \"redis\" or a mapping with store/profile/url", n.Line)
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
	case k.Cluster:
		return fmt.Errorf("stall: target %s is a cluster; a stall stops one managed server (stall %s instead)", spec.Label(), k.Server)
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
	l.Clients = cmp.Or(o.Clients, l.Clients)
	l.Pipeline = cmp.Or(o.Pipeline, l.Pipeline)
	l.ConnectPerOp = cmp.Or(o.ConnectPerOp, l.ConnectPerOp)
	l.Rate = cmp.Or(o.Rate, l.Rate)
	if o.Ops != 0 || o.Duration != 0 {
		l.Ops, l.Duration = o.Ops, o.Duration
	}
	l.Warmup = cmp.Or(o.Warmup, l.Warmup)
	l.WarmupOps = cmp.Or(o.WarmupOps, l.WarmupOps)
	l.RTT = cmp.Or(o.RTT, l.RTT)
	l.Jitter = cmp.Or(o.Jitter, l.Jitter)
	l.Bandwidth = cmp.Or(o.Bandwidth, l.Bandwidth)
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

// Parse reads a scenario from r, at most MaxFileBytes; name is used in
// error messages.
func Parse(name string, r io.Reader) (*Scenario, error) {
	b, err := readBounded(name, r)
	if err != nil {
		return nil, err
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
	if err := checkDocument(name, b); err != nil {
		return nil, err
	}
	s.Source, s.Values = name, secretValues(b)
	return &s, nil
}

// secretValues are the scalars of doc that may hold a password, each
// apart: a password is looked for in one value, never across a document
// (where an '@' further on would stretch a URL's user information).
func secretValues(doc []byte) []string {
	var root yaml.Node
	if yaml.Unmarshal(doc, &root) != nil {
		return nil
	}
	var out []string
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		if n.Kind == yaml.ScalarNode && (strings.Contains(n.Value, "://") || strings.Contains(strings.ToLower(n.Value), "password")) {
			out = append(out, n.Value)
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(&root)
	return out
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

// ParseStall reads a stall written AFTER:FOR (--stall), e.g. 1s:500ms.
func ParseStall(v string) (Stall, error) {
	a, f, ok := strings.Cut(v, ":")
	after, err1 := time.ParseDuration(strings.TrimSpace(a))
	dur, err2 := time.ParseDuration(strings.TrimSpace(f))
	if !ok || err1 != nil || err2 != nil {
		return Stall{}, fmt.Errorf("want AFTER:FOR, e.g. 1s:500ms (stop the server 1 s into each measured phase for 500 ms), got %q", v)
	}
	switch {
	case dur <= 0:
		return Stall{}, fmt.Errorf("FOR must be positive, got %v", dur)
	case after < 0:
		return Stall{}, errors.New("AFTER must not be negative")
	}
	return Stall{After: Duration(after), For: Duration(dur)}, nil
}
