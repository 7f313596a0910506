// Package suites embeds the built-in scenarios: one per article, plus quick.
package suites

import (
	"embed"
	"io/fs"
	"sort"
	"strings"
)

//go:embed *.yaml
var files embed.FS

// Names lists the built-in suites.
func Names() []string {
	entries, _ := fs.ReadDir(files, ".")
	var n []string
	for _, e := range entries {
		n = append(n, strings.TrimSuffix(e.Name(), ".yaml"))
	}
	sort.Strings(n)
	return n
}

// Open returns a suite's YAML.
func Open(name string) ([]byte, bool) {
	b, err := files.ReadFile(name + ".yaml")
	return b, err == nil
}
