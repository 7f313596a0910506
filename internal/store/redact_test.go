package store

import (
	"strings"
	"testing"
)

func TestRedactURL(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://me:secret@db:5432/app":     "postgres://me:xxxxx@db:5432/app",
		"redis://:secret@127.0.0.1:6379":       "redis://:xxxxx@127.0.0.1:6379",
		"redis://127.0.0.1:6379":               "redis://127.0.0.1:6379",
		"--stores=redis://u:secret@h:1,memory": "--stores=redis://u:xxxxx@h:1,memory",
		"postgres://u:secret@h:%zz":            "postgres://u:xxxxx@h:%zz",
		"postgres://h/db?password=secret&x=1":  "postgres://h/db?password=xxxxx&x=1",
	} {
		got := RedactURL(in)
		if got != want || strings.Contains(got, "secret") {
			t.Errorf("RedactURL(%q) = %q, want %q", in, got, want)
		}
	}
}
