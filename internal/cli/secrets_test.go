package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestURLArgumentIsSentToStores (issue 28): a store URL where a command, a
// scenario or a result is expected is refused with a hint to use --stores,
// and quoted nowhere (cobra's "unknown command" and "no such file" quoted
// it whole).
func TestURLArgumentIsSentToStores(t *testing.T) {
	const pw = "S3cr3tXyz987"
	for _, args := range [][]string{
		{"redis://:" + pw + "@h:6379"},
		{"run", "redis://:" + pw + "@h:6379"},
		{"clean", "mysql://root:" + pw + "@h/x", "--dry-run"},
		{"report", "postgres://u:" + pw + "@h/db"},
		{"compare", "sqlite://" + pw + "@/tmp/x.db", "b.json"},
	} {
		var stdout, stderr bytes.Buffer
		app := testApp()
		app.Stdout, app.Stderr = &stdout, &stderr
		code := app.Main(context.Background(), args)
		got := stdout.String() + stderr.String()
		if code != ExitUsage || !strings.Contains(got, "looks like a store URL: pass it with --stores") || strings.Contains(got, pw) {
			t.Errorf("%q: exit %d, printed %q", args[0], code, got)
		}
	}
}

// TestRedactionKeepsTheMessage: the passwords of a --stores list are found
// in each target apart, so a later target's name is not taken for one
// ("redis://u:pw@h:1,postgres@18" read as one URL made "postgres" part of
// the password, and every "postgres" printed was hidden).
func TestRedactionKeepsTheMessage(t *testing.T) {
	app := testApp()
	s := app.inputTexts([]string{"run", "kv", "--stores", "redis://u:Wr0ngPw@h:1,sqlite@3", "--keys", "10"})
	want := []string{"run", "kv", "redis://u:Wr0ngPw@h:1", "sqlite@3", "--keys", "10"}
	if strings.Join(s, " ") != strings.Join(want, " ") {
		t.Errorf("inputTexts = %q, want %q", s, want)
	}
	var stdout, stderr bytes.Buffer
	app.Stdout, app.Stderr = &stdout, &stderr
	app.Main(context.Background(), []string{"run", "kv", "--stores=redis://u:Wr0ngPw@h:1,sqlite@3"})
	if got := stderr.String(); strings.Contains(got, "Wr0ngPw") || strings.Contains(got, "xxxxx@3") {
		t.Errorf("stderr %q", got)
	}
}
