package target

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"strings"
	"testing"

	"github.com/storebench/storebench/internal/server"
	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/store/mysql"
	"github.com/storebench/storebench/internal/store/postgres"
	"github.com/storebench/storebench/internal/store/redis"
)

// testRegistry has the real stores' URL checks; nothing here opens a store.
func testRegistry() Registry {
	open := func(context.Context, OpenArgs) (store.Store, error) { return nil, store.ErrUnsupported }
	return Registry{
		{Name: "memory", Open: open},
		{Name: "sqlite", Schemes: []string{"sqlite"}, Open: open},
		{Name: "postgres", Server: server.Postgres, Schemes: []string{"postgres", "postgresql"}, Open: open, CheckURL: postgres.CheckURL},
		{Name: "redis", Server: server.Redis, Schemes: []string{"redis", "rediss"}, Open: open, CheckURL: redis.CheckURL},
		{Name: "mariadb", Server: server.MariaDB, Schemes: []string{"mysql", "mariadb"}, Open: open, CheckURL: mysql.CheckURL},
		{Name: "valkey", Server: server.Valkey, Open: open, ServerOptions: map[string]string{"io-threads": ""}},
		{Name: "redis-cluster", Server: server.Redis, Cluster: true, Schemes: []string{"redis-cluster"}, Open: open, CheckURL: redis.CheckClusterURL,
			ServerOptions: map[string]string{"nodes": "", "replicas": ""}, CheckOptions: func(o map[string]string) error { return CheckClusterOptions(server.Redis, o) }},
	}
}

func TestParse(t *testing.T) {
	r := testRegistry()
	for in, want := range map[string]Spec{
		"memory":                                      {Store: "memory"},
		"redis:aof-always":                            {Store: "redis", Profile: "aof-always"},
		"postgresql://u@h:5432/db":                    {Store: "postgres", URL: "postgresql://u@h:5432/db"},
		"sqlite:///tmp/x.db":                          {Store: "sqlite", URL: "sqlite:///tmp/x.db"},
		"  redis://127.0.0.1:6379  ":                  {Store: "redis", URL: "redis://127.0.0.1:6379"},
		"postgres:async-commit":                       {Store: "postgres", Profile: "async-commit"},
		"redis://:pw@127.0.0.1:6379/0 ":               {Store: "redis", URL: "redis://:pw@127.0.0.1:6379/0"},
		"redis-cluster":                               {Store: "redis-cluster"},
		"redis-cluster:replicas=1":                    {Store: "redis-cluster", Options: map[string]string{"replicas": "1"}},
		"redis-cluster:aof-always,nodes=6,replicas=1": {Store: "redis-cluster", Profile: "aof-always", Options: map[string]string{"nodes": "6", "replicas": "1"}},
		"redis-cluster://h1:7000,h2:7001/":            {Store: "redis-cluster", URL: "redis-cluster://h1:7000,h2:7001/"},
	} {
		got, err := r.Parse(in)
		if err != nil || got.Store != want.Store || got.Profile != want.Profile || got.URL != want.URL || fmt.Sprint(got.Options) != fmt.Sprint(want.Options) {
			t.Errorf("Parse(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for in, wantErr := range map[string]string{
		"":                     "empty target",
		"mongo":                `unknown store "mongo" (valid: memory, sqlite, postgres, redis, mariadb, valkey, redis-cluster)`,
		"redis:turbo":          `unknown profile "turbo" for redis`,
		"memory:fast":          "store memory has no profiles",
		"ftp://h/x":            `unknown URL scheme "ftp"`,
		"redis:///x":           "no host:port",
		"sqlite://":            "no path",
		"postgres://u:pw@h:%z": "malformed URL",
		// A cluster's size, after its ':' like a profile.
		"redis:replicas=1":                    "store redis is one server; write redis-cluster:replicas=…",
		"memory:replicas=1":                   "store memory cannot have replicas (stores that can: redis-cluster)",
		"redis:host=x,password=hunter2":       "key=value connection string",
		"redis-cluster:password=pw":           `unknown option "password"`,
		"redis-cluster:replicas=x":            "option replicas: want a whole number",
		"redis-cluster:replicas=3":            "want 0 to 2 per primary",
		"redis-cluster:nodes=0":               "want at least 1",
		"redis-cluster:nodes=17":              "at most 16",
		"redis-cluster:none,rdb":              "a profile is a name",
		"redis-cluster:none,rdb,replicas=1":   "one profile at most",
		"redis-cluster:turbo,replicas=1":      `unknown profile "turbo"`,
		"redis-cluster://h1:7000,h2:7001/app": "database 0 only",
	} {
		_, err := r.Parse(in)
		if err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Errorf("Parse(%q) error = %v, want %q", in, err, wantErr)
		}
		if err != nil && strings.Contains(err.Error(), "pw@") {
			t.Errorf("Parse(%q) error leaks the password: %v", in, err)
		}
	}
}

func TestLabelRedactsPassword(t *testing.T) {
	s := Spec{Store: "postgres", URL: "postgres://me:secret@db:5432/app"}
	if l := s.Label(); strings.Contains(l, "secret") || !strings.Contains(l, "db:5432") {
		t.Errorf("label %q", l)
	}
	for _, out := range printed(s) {
		if strings.Contains(out, "secret") {
			t.Errorf("the spec printed as %q", out)
		}
	}
}

// printed is every way a spec may reach an output.
func printed(s Spec) []string {
	j, _ := json.Marshal(s)
	return []string{s.Label(), s.String(), fmt.Sprint(s), fmt.Sprintf("%+v", s), fmt.Sprintf("%#v", s), fmt.Sprintf("%s %q", s, s), string(j)}
}

// secret stands for a password in the cases below.
const secret = "S3cr3tXyz987"

// passwordShapes are targets holding secret as users write them, among them
// the shapes an earlier version echoed: passwords that url.Parse rejects or
// misreads, key=value connection strings, and a URL without its "//".
var passwordShapes = []string{
	"postgres://bench:Wr0ng/" + secret + "@127.0.0.1:5432/db",
	"postgres://bench:Wr0ng#" + secret + "@127.0.0.1:5432/db",
	"postgres://bench:Wr0ng " + secret + "@127.0.0.1:5432/db",
	"postgres://bench:Wr0ng?" + secret + "@127.0.0.1:5432/db",
	"postgres://bench:Wr0ng@" + secret + "@127.0.0.1:5432/db",
	"postgres://bench:Wr0ng%zz" + secret + "@127.0.0.1:5432/db",
	"postgres://bench:12/" + secret + "@127.0.0.1/db", // url.Parse accepts it: host bench:12
	"postgresql://127.0.0.1/db?password=Wr0ng#" + secret,
	"postgres://bench:" + secret,
	"redis://:Wr0ng/" + secret + "@127.0.0.1:6379",
	"redis://u:Wr0ng#" + secret + "@127.0.0.1:6379/0",
	"rediss://:Wr0ng " + secret + "@127.0.0.1:6380",
	"mysql://bench:Wr0ng?" + secret + "@127.0.0.1:3306/db",
	"mariadb://bench:Wr0ng@" + secret + "@127.0.0.1/db",
	"mysql://bench:Wr0ng%zz" + secret + "@127.0.0.1/db",
	"host=127.0.0.1 password=" + secret + " dbname=db",
	"host=127.0.0.1 password='Wr0ng " + secret + "' dbname=db",
	"postgres:bench:" + secret + "@127.0.0.1:5432/db",
	"password=" + secret,
	// A version's "@" where a URL's user information would be.
	"postgres@bench:" + secret + "@127.0.0.1:5432/db",
	"redis@" + secret,
	"valkey@" + secret + ":none",
}

// TestParseNeverEchoesAPassword: each shape is refused with one line that
// quotes no part of the password, naming the server when it can be told.
func TestParseNeverEchoesAPassword(t *testing.T) {
	r := testRegistry()
	for _, in := range passwordShapes {
		_, err := r.Parse(in)
		if err == nil {
			t.Errorf("Parse(%q) accepted it", in)
			continue
		}
		if msg := err.Error(); strings.Contains(msg, secret) || strings.Contains(msg, "Wr0ng") || strings.Contains(msg, "\n") {
			t.Errorf("Parse(%q) error %q quotes the password or is not one line", in, msg)
		}
	}
	_, err := r.Parse("postgres://bench:Wr0ng/" + secret + "@127.0.0.1:5432/db")
	if want := "malformed URL postgres://127.0.0.1:5432/…: the password holds a character a URL reserves"; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error %v, want %q", err, want)
	}
	_, err = r.Parse("host=127.0.0.1 password=" + secret)
	if err == nil || !strings.Contains(err.Error(), "key=value connection string") {
		t.Errorf("a key=value string: %v", err)
	}
	// The same shapes given to Check, as a scenario's mapping may.
	for _, spec := range []Spec{{Store: "host=h password=" + secret}, {Store: "redis", Profile: secret + "/x"}, {Store: "redis", Name: "x " + secret}, {Store: "redis", Options: map[string]string{"password=" + secret: "x"}}} {
		if err := r.Check(spec); err == nil || strings.Contains(err.Error(), secret) {
			t.Errorf("Check(%#v) = %v", spec, err)
		}
	}
}

// TestParseChecksConnectionOptions: a bad URL parameter is bad input at
// parse time, found by the store's own driver's parser, before any work.
func TestParseChecksConnectionOptions(t *testing.T) {
	r := testRegistry()
	for in, want := range map[string]string{
		"postgres://bench:" + secret + "@127.0.0.1:5432/db?sslmode=bogus":     "bad URL postgres://127.0.0.1:5432/…: failed to configure TLS (sslmode is invalid)",
		"postgres://bench:" + secret + "@127.0.0.1:5432/db?connect_timeout=x": "bad URL postgres://127.0.0.1:5432/…: invalid connect_timeout",
		"mysql://bench:" + secret + "@127.0.0.1:3306/db?tls=bogus":            "bad URL mysql://127.0.0.1:3306/…: invalid value / unknown config name: bogus",
		"mariadb://bench:" + secret + "@127.0.0.1/db?timeout=soon":            "bad URL mariadb://127.0.0.1/…: time: invalid duration",
		"redis://:" + secret + "@127.0.0.1:6379?protocol=9":                   "bad URL redis://127.0.0.1:6379/…: parameter protocol: want 2 (RESP2) or 3 (RESP3)",
		"redis://:" + secret + "@127.0.0.1:6379/x":                            "bad URL redis://127.0.0.1:6379/…: invalid database number",
	} {
		_, err := r.Parse(in)
		if err == nil || !strings.HasPrefix(err.Error(), want) || strings.Contains(err.Error(), secret) {
			t.Errorf("Parse(%q) = %v, want %q", in, err, want)
		}
	}
	for _, in := range []string{
		"postgres://bench:" + url.PathEscape("Wr0ng/"+secret) + "@127.0.0.1:5432/db?sslmode=disable",
		"mysql://bench:" + url.PathEscape("Wr0ng#"+secret) + "@127.0.0.1:3306/db?tls=skip-verify",
		"redis://:" + url.PathEscape("Wr0ng "+secret) + "@127.0.0.1:6379/2?protocol=2",
	} {
		spec, err := r.Parse(in)
		if err != nil {
			t.Errorf("Parse(%q) = %v", in, err)
			continue
		}
		for _, out := range printed(spec) {
			if strings.Contains(out, secret) {
				t.Errorf("Parse(%q) printed as %q", in, out)
			}
		}
	}
}

func TestProbe(t *testing.T) {
	r := testRegistry()
	k, _ := r.Lookup("redis")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	if err := Probe(context.Background(), k, "redis://"+addr); err != nil {
		t.Errorf("probe of a listening port: %v", err)
	}
	l.Close()
	err = Probe(context.Background(), k, "redis://"+addr)
	if err == nil || !strings.Contains(err.Error(), addr) {
		t.Errorf("probe of a closed port: %v, want an error naming %s", err, addr)
	}
	sq, _ := r.Lookup("sqlite")
	if err := Probe(context.Background(), sq, "sqlite:///nonexistent-dir/x.db"); err == nil {
		t.Error("probe of a sqlite file in a missing directory succeeded")
	}
}

// A cluster's size is part of its label, written as Parse reads it, so two
// sizes of one store are two targets.
func TestClusterLabel(t *testing.T) {
	r := testRegistry()
	for _, in := range []string{"redis-cluster", "redis-cluster:replicas=1", "redis-cluster:aof-always,nodes=6,replicas=1", "redis-cluster@7.0:nodes=2"} {
		spec, err := r.Parse(in)
		if err != nil {
			t.Fatal(err)
		}
		if spec.Label() != in {
			t.Errorf("Parse(%q).Label() = %q", in, spec.Label())
		}
	}
	plain := Spec{Store: "redis-cluster"}
	if got := (Spec{Store: "redis-cluster", Options: map[string]string{"nodes": "3"}}).Label(); got == plain.Label() {
		t.Errorf("nodes=3 and the default share label %q", got)
	}
}

// TestSplitStoresRefusesAmbiguousLists (issue 28): a comma in a URL's
// password followed by a store's name cannot be told from the list's own;
// the refusal quotes nothing.
func TestSplitStoresRefusesAmbiguousLists(t *testing.T) {
	r := testRegistry()
	for _, list := range []string{"file://S3cr3tPw,memory@/tmp/d", "redis://u:S3cr3tPw,redis@h:1", "memory,redis://:S3cr3tPw,memory@h:6379/0", "postgres://h/db?password=,redis:S3cr3tPw", "postgres://h/db?password=S3cr3tPw,memory"} {
		if _, err := r.SplitStores(list); err == nil || strings.Contains(err.Error(), "S3cr3t") {
			t.Errorf("SplitStores(%q) = %v, want a refusal that quotes nothing", list, err)
		}
	}
	for _, list := range []string{"redis://u:pw@h:1,redis@7.0", "redis://u:pw@h:1,redis@7.0:aof-always,memory", "memory,redis", "postgres://h/db?password=x&sslmode=disable,memory", "memory,postgres://h/db?password=x"} {
		if _, err := r.SplitStores(list); err != nil {
			t.Errorf("SplitStores(%q) = %v", list, err)
		}
	}
}

// SplitList keeps a cluster's seed list and size, and a URL's password,
// together and splits the rest at every comma.
func TestSplitList(t *testing.T) {
	r := testRegistry()
	for in, want := range map[string][]string{
		"memory,redis":                                     {"memory", "redis"},
		"redis-cluster:nodes=6,replicas=1,redis":           {"redis-cluster:nodes=6,replicas=1", "redis"},
		"redis-cluster://h1:7000,h2:7001/,redis":           {"redis-cluster://h1:7000,h2:7001/", "redis"},
		"redis://h:1,redis-cluster://u:pw@h1:1,h2:2,h3:3/": {"redis://h:1", "redis-cluster://u:pw@h1:1,h2:2,h3:3/"},
		"redis-cluster,replicas=1":                         {"redis-cluster,replicas=1"},
		"redis-cluster,,memory":                            {"redis-cluster", "", "memory"},
		"redis,nodes=3":                                    {"redis", "nodes=3"},
		// A password holding commas (issue 28: "Secret" was quoted as an
		// unknown store).
		"redis://u:p@ss,Secret@127.0.0.1:6379,memory":  {"redis://u:p@ss,Secret@127.0.0.1:6379", "memory"},
		"memory,postgres://u:a,b,c@h/db,sqlite":        {"memory", "postgres://u:a,b,c@h/db", "sqlite"},
		"redis://u:x@h:1,postgres://u:y,z@h/db,memory": {"redis://u:x@h:1", "postgres://u:y,z@h/db", "memory"},
	} {
		if got := r.SplitList(in); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("SplitList(%q) = %q, want %q", in, got, want)
		}
	}
}
