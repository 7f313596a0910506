// Package target turns what a user names ("postgres", "redis:aof-always",
// "redis://cache:6379") into a running store: a managed server started from
// the installed binaries, or the user's own server reached by URL.
package target

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"sort"
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
	if s.Profile != "" && s.Profile != "default" {
		return s.Store + ":" + s.Profile
	}
	return s.Store
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
	// Schemes are the URL schemes that select this kind, e.g. "postgres", "postgresql".
	Schemes []string
	// Workloads this kind can run (its capabilities), checked before a run.
	Workloads []string
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
	// CheckOptions validates option values before any work; nil accepts any value.
	CheckOptions func(opts map[string]string) error
	// Open opens the store. It must fail within a few seconds when a server does not answer.
	Open func(ctx context.Context, a OpenArgs) (store.Store, error)
}

// Supports reports whether the kind can run the workload.
func (k Kind) Supports(workload string) bool {
	for _, w := range k.Workloads {
		if w == workload {
			return true
		}
	}
	return false
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

// Parse reads one target as written on the command line: "store",
// "store:profile", or a URL ("redis://host:6379", "sqlite:///tmp/x.db").
func (r Registry) Parse(s string) (Spec, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return Spec{}, errors.New("empty target name")
	}
	if strings.Contains(s, "://") {
		u, err := url.Parse(s)
		if err != nil {
			return Spec{}, fmt.Errorf("malformed URL %q: %v", store.RedactURL(s), redactErr(err, s))
		}
		k, ok := r.byScheme(u.Scheme)
		if !ok {
			return Spec{}, fmt.Errorf("unknown URL scheme %q in %q (known: %s)", u.Scheme, store.RedactURL(s), strings.Join(r.schemes(), ", "))
		}
		if k.Server != "" && u.Host == "" {
			return Spec{}, fmt.Errorf("malformed URL %q: no host:port", store.RedactURL(s))
		}
		if k.Server == "" && u.Path == "" {
			return Spec{}, fmt.Errorf("malformed URL %q: no path (write %s:///absolute/path)", store.RedactURL(s), u.Scheme)
		}
		return Spec{Store: k.Name, URL: s}, nil
	}
	name, profile, _ := strings.Cut(s, ":")
	k, ok := r.Lookup(name)
	if !ok {
		return Spec{}, fmt.Errorf("unknown store %q (valid: %s)", name, strings.Join(r.Names(), ", "))
	}
	return Spec{Store: k.Name, Profile: profile}, r.Check(Spec{Store: k.Name, Profile: profile})
}

// Check validates a spec without starting anything: known store, known profile.
func (r Registry) Check(s Spec) error {
	k, ok := r.Lookup(s.Store)
	if !ok {
		return fmt.Errorf("unknown store %q (valid: %s)", s.Store, strings.Join(r.Names(), ", "))
	}
	if s.Name != "" && !nameRE.MatchString(strings.ReplaceAll(s.Name, ":", "-")) {
		return fmt.Errorf("target name %q: use lower-case letters, digits, '-' and ':'", s.Name)
	}
	if s.Profile != "" && s.URL != "" {
		return fmt.Errorf("target %s: a profile configures a managed server; an external URL keeps its own settings", s.Label())
	}
	if s.Profile != "" && s.Profile != "default" {
		if k.Server == "" {
			return fmt.Errorf("store %s has no profiles (options: %s)", k.Name, optionNames(k))
		}
		if !contains(server.Profiles(k.Server), s.Profile) {
			return fmt.Errorf("unknown profile %q for %s (valid: %s)", s.Profile, k.Name, strings.Join(server.Profiles(k.Server), ", "))
		}
	}
	for o := range s.Options {
		_, isServer := k.ServerOptions[o]
		if _, ok := k.Options[o]; !ok && !isServer {
			return fmt.Errorf("unknown option %q for store %s (valid: %s)", o, k.Name, optionNames(k))
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

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// redactErr keeps url.Parse errors from echoing a password.
func redactErr(err error, raw string) string {
	return strings.ReplaceAll(err.Error(), raw, store.RedactURL(raw))
}
