package postgres

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/storebench/storebench/internal/server"
	"github.com/storebench/storebench/internal/server/servertest"
	"github.com/storebench/storebench/internal/store/storetest"
)

// TestCheckURL: every connection option pgx reads is checked without
// connecting, and no error quotes the password, whatever the URL's shape.
func TestCheckURL(t *testing.T) {
	secret := storetest.Secret
	storetest.RunURLChecks(t, storetest.URLChecks{
		Check:    CheckURL,
		Validate: func(raw string) error { return Config{URL: raw, Namespace: "sbt_x"}.Validate() },
		Good: []string{
			"postgres://bench:" + secret + "@db:5432/app",
			"postgresql://bench:S3cr%2F3t@db/app?sslmode=disable&connect_timeout=3",
			"postgres://db/app?password=" + secret + "&sslmode=require",
		},
		Bad: map[string]string{
			"postgres://bench:" + secret + "@db:5432/app?sslmode=bogus":                        "sslmode is invalid",
			"postgres://bench:" + secret + "@db:5432/app?connect_timeout=soon":                 "connect_timeout",
			"postgres://bench:" + secret + "@db:5432/app?target_session_attrs=any-old":         "target_session_attrs",
			"postgres://bench:" + secret + "@db/app?sslmode=verify-full&sslrootcert=/nonexist": "/nonexist",
			"postgres://bench:" + secret + "@db:99999/app":                                     "invalid port",
			"postgres://db/app?password=Wr0ng%zz" + secret:                                     "percent-encode",
			"postgres://db/app?password=Wr0ng#" + secret:                                       "percent-encode",
			"host=db password=" + secret + " sslmode=bogus":                                    "sslmode is invalid",
			"host=db password='" + secret + " x":                                               "unterminated quoted string",
		},
		WithPassword: func(pw string) string { return "postgres://bench:" + pw + "@db:5432/app" },
	})
}

// TestWrongPasswordOneLine: a wrong password is reported in one line by its
// real cause, the server's refusal, not with pgx's attempt over TLS (refused
// by a server without TLS under the default sslmode=prefer) beside it.
func TestWrongPasswordOneLine(t *testing.T) {
	ctx := context.Background()
	srv := servertest.Start(t, server.Postgres, server.Options{})
	admin := sql(t, srv.URL)
	// The managed server trusts local connections: this role must give a password.
	exec(t, admin, `CREATE ROLE sbt_pw LOGIN PASSWORD 'Right-Pw-123'`)
	var hba string
	if err := admin.QueryRow(ctx, `SHOW hba_file`).Scan(&hba); err != nil {
		t.Fatal(err)
	}
	old, err := os.ReadFile(hba)
	if err != nil {
		t.Fatal(err)
	}
	rules := "host all sbt_pw 127.0.0.1/32 scram-sha-256\nhost all sbt_pw ::1/128 scram-sha-256\n"
	if err := os.WriteFile(hba, append([]byte(rules), old...), 0o600); err != nil {
		t.Fatal(err)
	}
	exec(t, admin, `SELECT pg_reload_conf()`)

	base := "postgres://sbt_pw:%s@" + srv.Addr + "/postgres"
	right, err := pgx.Connect(ctx, strings.Replace(base, "%s", "Right-Pw-123", 1))
	if err != nil {
		t.Fatalf("the right password: %v", err)
	}
	right.Close(ctx)

	_, err = New(ctx, Config{URL: strings.Replace(base, "%s", "Wr0ng-"+storetest.Secret, 1), Namespace: "sbt_pw"})
	if err == nil {
		t.Fatal("a wrong password connected")
	}
	msg := err.Error()
	t.Log(msg)
	if strings.Contains(msg, "\n") || strings.Contains(strings.ToLower(msg), "tls") ||
		!strings.Contains(msg, `password authentication failed for user "sbt_pw"`) || !strings.Contains(msg, srv.Addr) ||
		strings.Contains(msg, storetest.Secret) {
		t.Errorf("error %q: want one line naming %s and the failed password authentication, and nothing of TLS or the password", msg, srv.Addr)
	}
}
