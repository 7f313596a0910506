// Package target turns what a user names ("postgres", "redis:aof-always",
// "postgres@18", "redis://cache:6379") into a running store: a managed server started from
// the installed binaries, or the user's own server reached by URL.
package target

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/storebench/storebench/internal/server"
	"github.com/storebench/storebench/internal/store"
)

// Spec is one target as asked for, before anything is started.
type Spec struct {
	// Name labels the target in reports; defaults to store[:profile] or the redacted URL.
	Name string `yaml:"name,omitempty" json:"name"`
	// Store is the store kind: memory, files, sqlite, postgres, redis, memcached.
	Store string `yaml:"store" json:"store"`
	// Profile selects a managed server's configuration; "" is the kind's default.
	Profile string `yaml:"profile,omitempty" json:"profile,omitempty"`
	// Version picks an installed version of a managed server, e.g. "18"
	// (matches 18.6) or "7.0"; "" is the default binary (the distribution's).
	Version string `yaml:"version,omitempty" json:"version,omitempty"`
	// URL points at an external server or path; "" means managed (or in-process).
	URL string `yaml:"url,omitempty" json:"url,omitempty"`
	// Options are store-specific, e.g. fsync=true for files, design=unlogged for postgres.
	Options map[string]string `yaml:"options,omitempty" json:"options,omitempty"`
}

// Managed reports whether storebench starts this target itself.
func (s Spec) Managed() bool { return s.URL == "" }

// Label is the name shown in tables.
func (s Spec) Label() string {
	if s.Name != "" {
		return s.Name
	}
	if s.URL != "" {
		return s.Store + "@" + store.RedactURL(s.URL)
	}
	label := s.Store
	if s.Version != "" {
		label += "@" + s.Version
	}
	var shape []string
	if s.Profile != "" && s.Profile != "default" {
		shape = append(shape, s.Profile)
	}
	// A cluster's size tells two targets of one store apart, as a profile
	// does, and is written the way Parse reads it.
	for _, o := range ShapeOptionNames {
		if v, ok := s.Options[o]; ok && wordRE.MatchString(v) {
			shape = append(shape, o+"="+v)
		}
	}
	if len(shape) > 0 {
		label += ":" + strings.Join(shape, ",")
	}
	return label
}

// String is the label, so a Spec printed with %v or %s shows no password.
func (s Spec) String() string { return s.Label() }

// GoString keeps %#v from printing the URL's password.
func (s Spec) GoString() string {
	return fmt.Sprintf("target.Spec{Name:%q, Store:%q, Profile:%q, Version:%q, URL:%q, Options:%#v}", s.Name, s.Store, s.Profile, s.Version, store.RedactURL(s.URL), s.Options)
}

// MarshalJSON records the spec with its URL's password redacted.
func (s Spec) MarshalJSON() ([]byte, error) {
	type plain Spec // without this method
	p := plain(s)
	p.URL = store.RedactURL(p.URL)
	return json.Marshal(p)
}

// OpenArgs is what a Kind needs to open a store.
type OpenArgs struct {
	URL       string            // the server's URL (managed or external) or a path
	Namespace string            // what storebench owns inside the store
	RunDir    string            // a directory of this run, for stores that keep files
	Options   map[string]string // Spec.Options
}

// Kind describes one store kind: how to reach it and what it can do.
type Kind struct {
	Name        string
	Description string
	// Server is the managed server kind; "" for in-process stores (memory, files, sqlite).
	Server server.Kind
	// Cluster says its managed form is a group of Server nodes
	// (server.StartCluster) that the store's clients use together, sized
	// by the options nodes and replicas (ClusterOptions).
	Cluster bool
	// EveryNode says every host of its URL must answer (a primary and its
	// replicas), where a cluster's seeds need one.
	EveryNode bool
	// NoFailover says one node of its cluster takes every write and none
	// takes over when it dies (a PostgreSQL primary and its replicas).
	NoFailover bool
	// Schemes are the URL schemes that select this kind, e.g. "postgres", "postgresql".
	Schemes []string
	// Prototype is a nil store of the kind's concrete type: the workloads
	// check the capabilities they need on it by type assertion
	// (workload.Supports) when they plan, before any work.
	Prototype store.Store
	// ClientPrototype is a nil client of the kind's concrete type, for the
	// capabilities a client has (store.Batcher, store.Adder).
	ClientPrototype store.Client
	// Batches says whether its clients send several ops per round trip
	// (store.Batcher): needed for --pipeline and kv --batch.
	Batches bool
	// DataInProcess says the store keeps its data in storebench's own
	// memory (the memory store): a plan's memory estimate counts it.
	DataInProcess bool
	// Options lists the store-specific options a Spec may set, with a word on each.
	Options map[string]string
	// ServerOptions are options that configure a managed server (they become
	// its settings, e.g. memcached threads); they make no sense with a URL.
	ServerOptions map[string]string
	// CheckURL parses an external URL's connection options as the store's
	// driver will (pgx.ParseConfig, mysql.ParseDSN, rueidis.ParseURL and the
	// parameters storebench allows), without connecting, so a bad parameter is
	// bad input found before any work. Its errors quote no part of the URL.
	// nil: the scheme, host and path are all there is to check.
	CheckURL func(url string) error
	// CheckOptions validates option values before any work; nil accepts any value.
	CheckOptions func(opts map[string]string) error
	// Open opens the store. It must fail within a few seconds when a server does not answer.
	Open func(ctx context.Context, a OpenArgs) (store.Store, error)

	// Namespace says what a namespace is in this kind, its name in place
	// of %s, e.g. "schema %s": for a kept run's record and for clean.
	Namespace string
	// Namespaces lists the namespaces that carry storebench's mark in the
	// store at a.URL (what runs left or kept); nil when the kind cannot
	// list them (memcached cannot list keys).
	Namespaces func(ctx context.Context, a OpenArgs) ([]string, error)
	// DropNamespace removes namespace a.Namespace from the store at a.URL,
	// only if it carries storebench's mark.
	DropNamespace func(ctx context.Context, a OpenArgs) error
	// Dependents returns a *store.DependentsError when objects outside
	// namespace a.Namespace depend on it, so that DropNamespace would leave
	// it (a view on a kept table); nil when none do, and nil for a kind
	// whose namespaces nothing outside can depend on.
	Dependents func(ctx context.Context, a OpenArgs) error
	// CrashLoss says what the store loses under its effective settings
	// (store.Info's merged with a managed server's, as Instance.Info
	// records them) when its process is SIGKILLed (processCrash; the page
	// cache survives) and when the power fails (powerLoss): the durability
	// workload's expectations. nil: unknown.
	CrashLoss func(settings map[string]string) (processCrash, powerLoss string)
	// Reattach opens again, from another process, an in-process store
	// (files, SQLite) that this one holds open: the durability workload's
	// writer process, which storebench kills in its place. nil for a kind
	// whose data lives in a server or nowhere.
	Reattach *Reattach
	// CheapList says Namespaces costs one query, not a scan of the
	// server's data, so a run may look for leftovers on its own targets.
	CheapList bool
}

// Reattach opens an in-process store from what it said of itself
// (store.Info: its location, namespace and effective settings), which is
// all another process is given.
type Reattach struct {
	// Attach opens the existing namespace info describes; closing it
	// keeps the data.
	Attach func(ctx context.Context, info store.Info) (store.Store, error)
	// Create makes the namespace info describes (at a location of the
	// caller's choosing) and lets go of it, keeping it for Attach.
	Create func(ctx context.Context, info store.Info) error
}

// Registry is the list of store kinds this binary knows.
type Registry []Kind

// aliases are other names users give a kind.
var aliases = map[string]string{"mysql": "mariadb", "pg": "postgres", "postgresql": "postgres"}

// Lookup finds a kind by name or alias ("mysql" is the managed MariaDB;
// a MySQL server is measured through a mysql:// URL).
func (r Registry) Lookup(name string) (Kind, bool) {
	if a, ok := aliases[name]; ok {
		name = a
	}
	for _, k := range r {
		if k.Name == name {
			return k, true
		}
	}
	return Kind{}, false
}

// Names lists the kinds' names.
func (r Registry) Names() []string {
	var n []string
	for _, k := range r {
		n = append(n, k.Name)
	}
	return n
}

func (r Registry) byScheme(scheme string) (Kind, bool) {
	for _, k := range r {
		for _, s := range k.Schemes {
			if s == scheme {
				return k, true
			}
		}
	}
	return Kind{}, false
}

var nameRE = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)

// wordRE is what a store, profile or parameter name can look like. Anything
// else is never quoted back: it may be a connection string, or a URL
// without its "//", holding a password.
var wordRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.+-]{0,39}$`)

var schemeRE = regexp.MustCompile(`^[a-z][a-z0-9+.-]{0,19}$`)

// quoteWord quotes a name the user gave, or an ellipsis when it is not one.
func quoteWord(s string) string {
	if wordRE.MatchString(s) {
		return strconv.Quote(s)
	}
	return `"…"`
}

func (r Registry) unknownStore(name string) error {
	if !wordRE.MatchString(name) {
		return fmt.Errorf("unknown store: a target is a store name (%s) or a URL (scheme://…)", strings.Join(r.Names(), ", "))
	}
	return fmt.Errorf("unknown store %q (valid: %s)", name, strings.Join(r.Names(), ", "))
}

// Parse reads one target as written on the command line: "store",
// "store:profile", "store@version", "store@version:profile", or a URL
// ("redis://host:6379", "sqlite:///tmp/x.db"). A version is checked for its
// form here; whether it is installed, by server.Check before the run (so a
// suite may skip a version this machine lacks).
// Its errors quote no part of the input that may hold a password.
func (r Registry) Parse(s string) (Spec, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return Spec{}, errors.New("empty target name")
	}
	if strings.Contains(s, "://") {
		return r.parseURL(s)
	}
	name, profile, _ := strings.Cut(s, ":")
	if strings.Contains(name, "=") {
		return Spec{}, errConnString
	}
	name, version, versioned := strings.Cut(name, "@")
	k, ok := r.Lookup(name)
	if !ok {
		return Spec{}, r.unknownStore(name)
	}
	var opts map[string]string
	if k.Cluster && strings.Contains(profile, "=") {
		var err error
		if profile, opts, err = clusterShape(k, profile); err != nil {
			return Spec{}, err
		}
	}
	if strings.Contains(profile, "=") {
		return Spec{}, r.noShape(k, profile)
	}
	if versioned {
		if err := checkVersion(k, version); err != nil {
			return Spec{}, err
		}
	}
	if profile != "" && !wordRE.MatchString(profile) {
		return Spec{}, fmt.Errorf("target %s:…: a profile is a name (%s); a URL starts with scheme://", k.Name, profileNames(k))
	}
	spec := Spec{Store: k.Name, Profile: profile, Version: version, Options: opts}
	return spec, r.Check(spec)
}

// SplitList splits a comma-separated list of targets (--stores), keeping
// together what a target holds commas in: a URL's password
// ("redis://u:p,w@h:6379", whose pieces would otherwise be quoted as
// unknown stores), a cluster's seed list ("redis-cluster://h1:7000,h2:7001/")
// and its size ("redis-cluster:nodes=6,replicas=1"). After a URL or a
// cluster target, a piece joins it unless it starts a target of its own: a
// URL, or a store's name (so a seed host must not be named like a store; a
// scenario file's targets list has no such limit).
func (r Registry) SplitList(list string) []string {
	var out []string
	for _, piece := range strings.Split(list, ",") {
		if n := len(out); n > 0 && (strings.Contains(out[n-1], "://") || r.clusterTarget(out[n-1])) && !r.startsTarget(piece) {
			out[n-1] += "," + piece
			continue
		}
		out = append(out, piece)
	}
	return out
}

// errAmbiguousList refuses a --stores list that a comma in a URL's password
// makes ambiguous; no piece of it is quoted, since any may be the password.
var errAmbiguousList = errors.New("--stores: a URL's password holds a ',' followed by a store's name, so the list cannot be split: percent-encode the comma as %2C")

// errPasswordRunsOn refuses a list in which a password= parameter is
// followed by a ',': the comma may be the password's.
var errPasswordRunsOn = errors.New("--stores: a URL's password= parameter is followed by a ',', which may be part of it: name that URL last in the list, and percent-encode a ',' in the password as %2C")

// SplitStores is SplitList for a --stores list given by a user: it refuses
// a list whose split is in doubt. After a URL, a piece that starts with a
// store's name but goes on with '@' and no version ("file://pw,memory@/dir")
// is the rest of the URL's password at least as likely as a target.
func (r Registry) SplitStores(list string) ([]string, error) {
	pieces := r.SplitList(list)
	for i := 1; i < len(pieces); i++ {
		if !strings.Contains(pieces[i-1], "://") || strings.Contains(pieces[i], "://") {
			continue
		}
		if store.EndsInPassword(pieces[i-1]) {
			return nil, errPasswordRunsOn
		}
		if _, after, ok := strings.Cut(pieces[i], "@"); ok {
			version, _, _ := strings.Cut(after, ":")
			if server.CheckVersion(version) != nil {
				return nil, errAmbiguousList
			}
		}
	}
	return pieces, nil
}

// startsTarget says whether piece begins a target: a URL, or a known
// store's name (with a version or profile).
func (r Registry) startsTarget(piece string) bool {
	piece = strings.TrimSpace(piece)
	if strings.Contains(piece, "://") {
		return true
	}
	name, _, _ := strings.Cut(piece, ":")
	name, _, _ = strings.Cut(name, "@")
	_, ok := r.Lookup(name)
	return ok || piece == ""
}

// clusterTarget says whether a target of the list is of a cluster kind.
func (r Registry) clusterTarget(t string) bool {
	t = strings.TrimSpace(t)
	if scheme, _, ok := strings.Cut(t, "://"); ok {
		k, known := r.byScheme(strings.ToLower(scheme))
		return known && k.Cluster
	}
	name, _, _ := strings.Cut(t, ":")
	name, _, _ = strings.Cut(name, "@")
	k, ok := r.Lookup(name)
	return ok && k.Cluster
}

var errConnString = errors.New("a key=value connection string is not a target: write it as a URL, e.g. postgres://user:password@host:5432/db (percent-encode / ? # @ % and spaces in the password)")

// clusterShape reads what follows a cluster kind's ':' when it sizes the
// cluster, "replicas=1" or "aof-always,nodes=6,replicas=1": its options,
// and at most one profile among them. Values are checked by Check.
func clusterShape(k Kind, text string) (profile string, opts map[string]string, err error) {
	opts = map[string]string{}
	for _, item := range strings.Split(text, ",") {
		name, value, isOption := strings.Cut(item, "=")
		switch {
		case !isOption && profile != "":
			return "", nil, fmt.Errorf("target %s:…: one profile at most, then options such as nodes=3,replicas=1", k.Name)
		case !isOption:
			profile = item
		case !slices.Contains(ShapeOptionNames, name):
			return "", nil, fmt.Errorf("target %s:…: unknown option %s (valid: %s)", k.Name, quoteWord(name), strings.Join(shapeOptions(k), ", "))
		case !wordRE.MatchString(value):
			return "", nil, fmt.Errorf("target %s:…: option %s wants a number or a word", k.Name, name)
		default:
			opts[name] = value
		}
	}
	return profile, opts, nil
}

// ClusterOptionNames are the options that size a managed cluster: its
// primaries (nodes) and each one's replicas.
var ClusterOptionNames = []string{"nodes", "replicas"}

// ShapeOptionNames are the options a cluster target may carry after its
// ':' (and its label shows): its size, and a replica set's read policy.
var ShapeOptionNames = []string{"nodes", "replicas", "reads"}

// shapeOptions are the shape options kind k knows.
func shapeOptions(k Kind) []string {
	var out []string
	for _, o := range ShapeOptionNames {
		_, opt := k.Options[o]
		_, srv := k.ServerOptions[o]
		if opt || srv {
			out = append(out, o)
		}
	}
	return out
}

// noShape is the error of options after a single server's ':'
// ("postgres:replicas=1"): the kinds that have such an option are named
// when the option is a shape option; anything else may be a connection
// string and is quoted nowhere.
func (r Registry) noShape(k Kind, text string) error {
	name, _, _ := strings.Cut(strings.Split(text, ",")[0], "=")
	if !slices.Contains(ShapeOptionNames, name) {
		return errConnString
	}
	var have []string
	for _, other := range r {
		if other.Cluster && slices.Contains(shapeOptions(other), name) {
			have = append(have, other.Name)
		}
	}
	for _, other := range have {
		if r.kindServer(other) == k.Server && k.Server != "" {
			return fmt.Errorf("target %s:%s…: store %s is one server; write %s:%s=… (%s)", k.Name, name, k.Name, other, name, r.description(other))
		}
	}
	return fmt.Errorf("target %s:%s…: store %s cannot have %s (stores that can: %s)", k.Name, name, k.Name, name, strings.Join(have, ", "))
}

func (r Registry) kindServer(name string) server.Kind {
	k, _ := r.Lookup(name)
	return k.Server
}

// description is a kind's description up to its first ':' or ';', or its
// name.
func (r Registry) description(name string) string {
	k, _ := r.Lookup(name)
	d, _, _ := strings.Cut(k.Description, ":")
	d, _, _ = strings.Cut(d, ";")
	if d == "" {
		return name
	}
	return d
}

// checkVersion checks a version a target names for kind k: only managed
// servers have versions, and a version is a number. The version is quoted
// only once it is one: "postgres@…" may be a URL that lost its "//".
func checkVersion(k Kind, version string) error {
	if k.Server == "" {
		return fmt.Errorf("store %s has no versions: it runs inside storebench (versions pick a managed server's binaries)", k.Name)
	}
	if version == "" {
		return fmt.Errorf("target %s@: no version after @ (e.g. %s@%s; storebench list shows the installed ones)", k.Name, k.Name, versionExample(k))
	}
	if err := server.CheckVersion(version); err != nil {
		return fmt.Errorf("target %s@…: %v (storebench list shows the installed ones)", k.Name, err)
	}
	return nil
}

func versionExample(k Kind) string {
	switch k.Server {
	case server.Postgres:
		return "18"
	case server.Valkey:
		return "9.1"
	}
	return "7.0"
}

// parseURL reads a target given as a URL: the scheme picks the kind, the
// URL must parse strictly (store.ParseURL) and, for a server, the store's
// driver must accept every connection option in it (Kind.CheckURL), so a bad
// parameter is bad input, found before any work.
func (r Registry) parseURL(s string) (Spec, error) {
	scheme := strings.ToLower(s[:strings.Index(s, "://")])
	if !schemeRE.MatchString(scheme) {
		return Spec{}, fmt.Errorf("malformed URL: it does not start with a scheme such as postgres:// (known: %s)", strings.Join(r.schemes(), ", "))
	}
	k, ok := r.byScheme(scheme)
	if !ok {
		return Spec{}, fmt.Errorf("unknown URL scheme %q (known: %s)", scheme, strings.Join(r.schemes(), ", "))
	}
	// A local store's URL has no host to show: what stands there is a
	// misplaced password as likely as anything ("file://pw#x@/dir").
	shown := store.SafeURL(s)
	if k.Server == "" {
		shown = scheme + "://…"
	}
	u, err := store.ParseURL(s)
	if err != nil {
		return Spec{}, urlError("malformed", shown, err)
	}
	if k.Server != "" && u.Host == "" {
		return Spec{}, urlError("malformed", shown, errors.New("no host:port"))
	}
	if k.Server == "" && u.Path == "" {
		return Spec{}, urlError("malformed", shown, fmt.Errorf("no path (write %s:///absolute/path)", scheme))
	}
	if k.CheckURL != nil {
		if err := k.CheckURL(s); err != nil {
			return Spec{}, urlError("bad", shown, err)
		}
	}
	return Spec{Store: k.Name, URL: s}, nil
}

// urlError names the URL by its scheme and host alone (store.SafeURL).
func urlError(adjective, shown string, err error) error {
	return fmt.Errorf("%s URL %s: %v", adjective, shown, err)
}

func profileNames(k Kind) string {
	if k.Server == "" {
		return "it has none"
	}
	return strings.Join(server.Profiles(k.Server), ", ")
}

// Check validates a spec without starting anything: known store, known profile.
func (r Registry) Check(s Spec) error {
	k, ok := r.Lookup(s.Store)
	if !ok {
		return r.unknownStore(s.Store)
	}
	if s.Name != "" && !nameRE.MatchString(strings.ReplaceAll(s.Name, ":", "-")) {
		return fmt.Errorf("target name %s: use lower-case letters, digits, '-' and ':'", quoteWord(s.Name))
	}
	if s.Profile != "" && s.URL != "" {
		return fmt.Errorf("target %s: a profile configures a managed server; an external URL keeps its own settings", s.Label())
	}
	if s.Version != "" {
		if s.URL != "" {
			return fmt.Errorf("target %s: a version picks a managed server's binaries; an external URL's server is what it is", store.RedactURL(s.URL))
		}
		if err := checkVersion(k, s.Version); err != nil {
			return err
		}
	}
	if s.Profile != "" && s.Profile != "default" {
		if k.Server == "" {
			return fmt.Errorf("store %s has no profiles (options: %s)", k.Name, optionNames(k))
		}
		if !slices.Contains(server.Profiles(k.Server), s.Profile) {
			return fmt.Errorf("unknown profile %s for %s (valid: %s)", quoteWord(s.Profile), k.Name, strings.Join(server.Profiles(k.Server), ", "))
		}
	}
	for o := range s.Options {
		_, isServer := k.ServerOptions[o]
		if _, ok := k.Options[o]; !ok && !isServer {
			return fmt.Errorf("unknown option %s for store %s (valid: %s)", quoteWord(o), k.Name, optionNames(k))
		}
		if isServer && s.URL != "" {
			return fmt.Errorf("option %s configures a managed %s server; %s is external", o, k.Name, s.Label())
		}
	}
	if k.CheckOptions != nil {
		if err := k.CheckOptions(s.Options); err != nil {
			return fmt.Errorf("store %s: %v", k.Name, err)
		}
	}
	return nil
}

func optionNames(k Kind) string {
	var n []string
	for o := range k.Options {
		n = append(n, o)
	}
	for o := range k.ServerOptions {
		n = append(n, o)
	}
	if len(n) == 0 {
		return "none"
	}
	sort.Strings(n)
	return strings.Join(n, ", ")
}

func (r Registry) schemes() []string {
	var out []string
	for _, k := range r {
		out = append(out, k.Schemes...)
	}
	return out
}
