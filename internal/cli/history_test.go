package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/storebench/storebench/internal/result"
)

// historyDir holds two results of the report's sample, one directory per
// run (as CI keeps one per commit), the second a day later.
func historyDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for i, day := range []string{"run-a", "run-b"} {
		r, err := result.Read("../report/testdata/sample-result.json")
		if err != nil {
			t.Fatal(err)
		}
		r.StartedAt = r.StartedAt.AddDate(0, 0, i)
		r.ID = day
		if _, err := result.WriteNew(filepath.Join(dir, "commits", day), r); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestHistoryCommand: history finds the results below a directory and
// writes the page in the format -o's extension names; bad input (a path
// with no result, a corrupt file, fewer than two results, an unknown
// format) is one line and exit 2, before anything is written.
func TestHistoryCommand(t *testing.T) {
	dir := historyDir(t)
	var buf bytes.Buffer
	page := filepath.Join(t.TempDir(), "history.md")
	if code := netApp(&buf).Main(context.Background(), []string{"history", dir, "-o", page}); code != ExitOK {
		t.Fatalf("exit %d\n%s", code, buf.String())
	}
	md, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(md), "# storebench history · kv · 2 runs") || !strings.Contains(string(md), "## redis/kv/keys=1000") {
		t.Errorf("the page:\n%s", md)
	}

	empty := t.TempDir()
	corrupt := filepath.Join(t.TempDir(), "result.json")
	if err := os.WriteFile(corrupt, []byte(`{"schema": "storebench.result/v1", "cells": [`), 0o644); err != nil {
		t.Fatal(err)
	}
	one := filepath.Join(dir, "commits", "run-a")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"history", empty}, empty + ": no result.json or result.json.gz in it or below"},
		{[]string{"history", filepath.Join(empty, "missing")}, "missing: no such file or directory"},
		{[]string{"history", dir, corrupt}, corrupt + ": truncated"},
		{[]string{"history", one}, "history needs at least 2 results, found 1"},
		{[]string{"history", one, one + "/result.json"}, "history needs at least 2 results, found 1"},
		{[]string{"history", dir, "--format", "pdf"}, `--format "pdf": unknown format`},
		{[]string{"history", dir, "-o", "history.pdf"}, `cannot tell the format from ".pdf"`},
		{[]string{"history"}, "requires at least 1 arg"},
	} {
		buf.Reset()
		code := netApp(&buf).Main(context.Background(), c.args)
		if code != ExitUsage || !strings.Contains(buf.String(), c.want) || strings.Count(strings.TrimSpace(buf.String()), "\n") != 0 {
			t.Errorf("%v: exit %d, %q; want exit 2 and one line saying %q", c.args, code, buf.String(), c.want)
		}
	}
	if _, err := os.Stat("history.pdf"); err == nil {
		t.Error("history.pdf written")
	}
}
