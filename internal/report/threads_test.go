package report

import (
	"bytes"
	"strings"
	"testing"
)

// The client threads each cell ran with, and why, are shown where every
// format shows the run's environment: one line per choice, naming its
// targets; a result without them keeps its one GOMAXPROCS.
func TestClientThreadsPerCell(t *testing.T) {
	r := readSample(t)
	if ClientThreadsLines(r) != nil {
		t.Fatalf("the sample records no client threads per cell, yet: %v", ClientThreadsLines(r))
	}
	var old bytes.Buffer
	if err := Markdown(&old, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(old.String(), "| GOMAXPROCS |") {
		t.Errorf("markdown of an older result lacks its GOMAXPROCS row")
	}
	for i := range r.Cells {
		c := &r.Cells[i]
		switch c.Target {
		case "redis":
			c.ClientThreads, c.ClientThreadsWhy = 1, "1: redis (one-threaded) shares 2 CPUs with the client; 1 CPU is left to it"
		default:
			c.ClientThreads, c.ClientThreadsWhy = 2, "2: one per client CPU; the store runs inside storebench"
		}
	}
	r.Cells[0].ClientThreads, r.Cells[0].ClientThreadsWhy = 3, "--client-threads 3 (user)"
	redis := "redis: 1: redis (one-threaded) shares 2 CPUs with the client; 1 CPU is left to it"
	user := r.Cells[0].Target + ": 3: --client-threads 3 (user)"
	lines := ClientThreadsLines(r)
	if !containsAll(strings.Join(lines, "\n"), redis, user) {
		t.Fatalf("lines %q lack %q or %q", lines, redis, user)
	}
	var text, md, html bytes.Buffer
	Text(&text, r)
	if err := Markdown(&md, r); err != nil {
		t.Fatal(err)
	}
	if err := HTML(&html, r); err != nil {
		t.Fatal(err)
	}
	if head := strings.SplitN(text.String(), "\n\n", 2)[0]; !containsAll(head, "client threads (GOMAXPROCS) per cell:\n", "  "+redis, "  "+user) {
		t.Errorf("text head lacks the client threads:\n%s", head)
	}
	if !containsAll(md.String(), "| client threads (GOMAXPROCS) | ", redis) || strings.Contains(md.String(), "| GOMAXPROCS |") {
		t.Errorf("markdown environment: want the client threads per cell instead of one GOMAXPROCS")
	}
	if !containsAll(html.String(), "client threads (GOMAXPROCS)", "redis (one-threaded) shares 2 CPUs") {
		t.Errorf("HTML lacks the client threads per cell")
	}
}

func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}
