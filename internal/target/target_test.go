package target

import (
	"context"
	"net"
	"strings"
	"testing"

	"github.com/storebench/storebench/internal/server"
	"github.com/storebench/storebench/internal/store"
)

func testRegistry() Registry {
	open := func(context.Context, OpenArgs) (store.Store, error) { return nil, store.ErrUnsupported }
	return Registry{
		{Name: "memory", Workloads: []string{"kv"}, Open: open},
		{Name: "sqlite", Schemes: []string{"sqlite"}, Workloads: []string{"kv"}, Open: open},
		{Name: "postgres", Server: server.Postgres, Schemes: []string{"postgres", "postgresql"}, Workloads: []string{"kv"}, Open: open},
		{Name: "redis", Server: server.Redis, Schemes: []string{"redis"}, Workloads: []string{"kv"}, Open: open},
	}
}

func TestParse(t *testing.T) {
	r := testRegistry()
	for in, want := range map[string]Spec{
		"memory":                        {Store: "memory"},
		"redis:aof-always":              {Store: "redis", Profile: "aof-always"},
		"postgresql://u@h:5432/db":      {Store: "postgres", URL: "postgresql://u@h:5432/db"},
		"sqlite:///tmp/x.db":            {Store: "sqlite", URL: "sqlite:///tmp/x.db"},
		"  redis://127.0.0.1:6379  ":    {Store: "redis", URL: "redis://127.0.0.1:6379"},
		"postgres:async-commit":         {Store: "postgres", Profile: "async-commit"},
		"redis://:pw@127.0.0.1:6379/0 ": {Store: "redis", URL: "redis://:pw@127.0.0.1:6379/0"},
	} {
		got, err := r.Parse(in)
		if err != nil || got.Store != want.Store || got.Profile != want.Profile || got.URL != want.URL {
			t.Errorf("Parse(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for in, wantErr := range map[string]string{
		"":                     "empty target",
		"mongo":                `unknown store "mongo" (valid: memory, sqlite, postgres, redis)`,
		"redis:turbo":          `unknown profile "turbo" for redis`,
		"memory:fast":          "store memory has no profiles",
		"ftp://h/x":            `unknown URL scheme "ftp"`,
		"redis:///x":           "no host:port",
		"sqlite://":            "no path",
		"postgres://u:pw@h:%z": "malformed URL",
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
