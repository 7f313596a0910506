package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// `storebench --help` names every store kind of its registry (it once
// listed six and left out MariaDB and Valkey).
func TestHelpNamesEveryStore(t *testing.T) {
	var buf bytes.Buffer
	app := netApp(&buf)
	if code := app.Main(context.Background(), []string{"--help"}); code != ExitOK {
		t.Fatalf("exit %d\n%s", code, buf.String())
	}
	for _, name := range app.Registry.Names() {
		if !strings.Contains(buf.String(), name) {
			t.Errorf("--help does not name %s:\n%s", name, buf.String())
		}
	}
}
