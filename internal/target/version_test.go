package target

import (
	"errors"
	"strings"
	"testing"

	"github.com/storebench/storebench/internal/server"
)

// TestParseVersion: store@version[:profile] picks a version of a managed
// server; the label shows it.
func TestParseVersion(t *testing.T) {
	r := testRegistry()
	for in, want := range map[string]Spec{
		"postgres@18":              {Store: "postgres", Version: "18"},
		"postgres@15":              {Store: "postgres", Version: "15"},
		"pg@18.6":                  {Store: "postgres", Version: "18.6"},
		"redis@7.0":                {Store: "redis", Version: "7.0"},
		"valkey@9.1":               {Store: "valkey", Version: "9.1"},
		"valkey@9.1:aof-always":    {Store: "valkey", Version: "9.1", Profile: "aof-always"},
		"postgres@18:async-commit": {Store: "postgres", Version: "18", Profile: "async-commit"},
		"valkey":                   {Store: "valkey"},
	} {
		got, err := r.Parse(in)
		if err != nil || got.Store != want.Store || got.Version != want.Version || got.Profile != want.Profile {
			t.Errorf("Parse(%q) = %+v, %v; want %+v", in, got, err, want)
			continue
		}
		if label, want := got.Label(), strings.Replace(in, "pg@", "postgres@", 1); label != want {
			t.Errorf("Parse(%q).Label() = %q", in, label)
		}
	}
	for in, wantErr := range map[string]string{
		"postgres@":                "target postgres@: no version after @ (e.g. postgres@18",
		"postgres@abc":             "target postgres@…: a version is a number such as 18, 7.0 or 9.1.2",
		"postgres@18.6.1.2":        "a version is a number",
		"postgres@-1":              "a version is a number",
		"memory@1":                 "store memory has no versions",
		"sqlite@3":                 "store sqlite has no versions",
		"valkey@9.1:turbo":         `unknown profile "turbo" for valkey`,
		"postgres:async-commit@18": "target postgres:…: a profile is a name",
		"mongo@1":                  `unknown store "mongo"`,
	} {
		_, err := r.Parse(in)
		if err == nil || !strings.Contains(err.Error(), wantErr) || strings.Contains(err.Error(), "\n") {
			t.Errorf("Parse(%q) error = %v, want one line with %q", in, err, wantErr)
		}
	}
	if err := r.Check(Spec{Store: "postgres", Version: "18", URL: "postgres://u:" + secret + "@db:5432/app"}); err == nil ||
		!strings.Contains(err.Error(), "a version picks a managed server") || strings.Contains(err.Error(), secret) {
		t.Errorf("a version on a URL target: %v", err)
	}
	if err := r.Check(Spec{Store: "memory", Version: "1"}); err == nil || !strings.Contains(err.Error(), "has no versions") {
		t.Errorf("Check(memory version 1) = %v", err)
	}
}

// TestVersionNotInstalled: postgres@99 parses (a suite may list a version a
// machine lacks and skip it), and the check before the run refuses it in
// one line naming what is installed and how to install more.
func TestVersionNotInstalled(t *testing.T) {
	r := testRegistry()
	spec, err := r.Parse("postgres@99")
	if err != nil {
		t.Fatal(err)
	}
	k, _ := r.Lookup("postgres")
	err = server.Check(k.Server, k.ServerOptionsFor(spec, StartArgs{}))
	var missing *server.MissingError
	if !errors.As(err, &missing) {
		t.Fatalf("Check(postgres@99) = %v, want a *MissingError", err)
	}
	for _, want := range []string{"postgres 99 is not installed (installed: 15.", "18.6 at ", "make deps"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	for _, in := range []string{"postgres@18", "postgres@15", "redis@7.0", "valkey@9.1", "valkey"} {
		spec, err := r.Parse(in)
		if err != nil {
			t.Fatal(err)
		}
		k, _ := r.Lookup(spec.Store)
		if err := server.Check(k.Server, k.ServerOptionsFor(spec, StartArgs{})); err != nil {
			t.Errorf("%s: %v (make deps installs the wheels)", in, err)
		}
	}
}

// TestServerOptionsCarryVersionAndBin: the target's version and the run's
// --server-bin reach the server's options; io-threads is a server setting.
func TestServerOptionsCarryVersionAndBin(t *testing.T) {
	r := testRegistry()
	k, _ := r.Lookup("valkey")
	o := k.ServerOptionsFor(Spec{Store: "valkey", Version: "9.1", Profile: "none", Options: map[string]string{"io-threads": "2"}},
		StartArgs{ServerBins: map[server.Kind]string{server.Valkey: "/opt/valkey/bin", server.Postgres: "/opt/pg17/bin"}})
	if o.Version != "9.1" || o.BinDir != "/opt/valkey/bin" || o.Profile != "none" || o.Settings["io-threads"] != "2" {
		t.Errorf("ServerOptionsFor = %+v", o)
	}
}

// TestParseServerBins: --server-bin store=path, checked before any work.
func TestParseServerBins(t *testing.T) {
	r := testRegistry()
	pg15, err := server.LocateFor(server.Postgres, server.Options{Version: "15"})
	if err != nil {
		t.Fatal(err)
	}
	valkey, err := server.LocateFor(server.Valkey, server.Options{})
	if err != nil {
		t.Fatal(err)
	}
	pgDir := pg15.Server[:strings.LastIndex(pg15.Server, "/")]
	got, err := r.ParseServerBins([]string{"pg=" + pgDir, "valkey=" + valkey.Server})
	if err != nil || got[server.Postgres] != pgDir || got[server.Valkey] != valkey.Server {
		t.Errorf("ParseServerBins = %v, %v", got, err)
	}
	empty := t.TempDir()
	for in, wantErr := range map[string]string{
		"postgres":                  "want store=path, e.g. postgres=/opt/pg17/bin",
		"postgres=/nonexistent/bin": "--server-bin postgres=/nonexistent/bin: no such file or directory",
		"postgres=" + empty:         "no executable postgres and initdb there",
		"memory=/tmp":               "store memory runs inside storebench",
		"mongo=/tmp":                `unknown store "mongo"`,
		"redis=/bin/true":           "is not a redis server",
		"postgres=":                 "no path",
		"password=" + secret:        "unknown store",
	} {
		_, err := r.ParseServerBins([]string{in})
		if err == nil || !strings.Contains(err.Error(), wantErr) || strings.Contains(err.Error(), "\n") || strings.Contains(err.Error(), secret) {
			t.Errorf("ParseServerBins(%q) = %v, want one line with %q", in, err, wantErr)
		}
	}
	if _, err := r.ParseServerBins([]string{"postgres=" + pgDir, "pg=" + pgDir}); err == nil || !strings.Contains(err.Error(), "given twice") {
		t.Errorf("a store given twice: %v", err)
	}
}
