package cli

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/storebench/storebench/internal/scenario"
	"github.com/storebench/storebench/internal/server"
	"github.com/storebench/storebench/internal/target"
	"github.com/storebench/storebench/suites"
)

func (a *App) listCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List stores (and whether they can run here), workloads and suites",
		Example: `  storebench list
  storebench list | grep missing`,
		Args: cobraArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
			fmt.Fprintln(w, "STORE\tRUNS AS\tHERE\tPROFILES\tURL SCHEMES")
			for _, k := range a.Registry {
				runsAs, here, profiles := "in-process", "ready", "-"
				if k.Server != "" {
					runsAs = "managed server or URL"
					if len(k.Schemes) == 0 { // valkey: a URL to it is a redis:// URL
						runsAs = "managed server"
					}
					profiles = strings.Join(server.Profiles(k.Server), ", ")
					if _, err := server.Locate(k.Server); err != nil {
						here = "missing: " + server.InstallHint(k.Server) + " (or give a URL)"
					} else {
						here = "ready"
					}
				}
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", k.Name, runsAs, here, profiles, strings.Join(k.Schemes, ", "))
			}
			w.Flush()
			listVersions(cmd.OutOrStdout(), a.Registry)

			fmt.Fprintln(cmd.OutOrStdout(), "\nWORKLOADS")
			for _, wl := range a.Workloads {
				var stores []string
				for _, k := range a.Registry {
					if wl.Supports(k) == nil {
						stores = append(stores, k.Name)
					}
				}
				sort.Strings(stores)
				fmt.Fprintf(cmd.OutOrStdout(), "  %-12s %s (stores: %s)\n", wl.Name(), wl.Help(), strings.Join(stores, ", "))
			}
			fmt.Fprintln(cmd.OutOrStdout(), "\nSUITES")
			width := 12
			for _, name := range suites.Names() {
				width = max(width, len(name))
			}
			for _, name := range suites.Names() {
				desc := ""
				if b, ok := suites.Open(name); ok {
					if s, err := scenario.Parse(name, strings.NewReader(string(b))); err == nil {
						desc = s.Description
					}
				}
				fmt.Fprintf(cmd.OutOrStdout(), "  %-*s %s\n", width, name, desc)
			}
			return nil
		},
	}
}

// listVersions prints every installed version of each managed server and
// where it was found, the default (what a target without @version runs)
// marked.
func listVersions(out io.Writer, reg target.Registry) {
	fmt.Fprintln(out, "\nSERVER VERSIONS (a target picks one with store@version, e.g. postgres@18; make deps installs Valkey 9.1 and PostgreSQL 18)")
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	for _, k := range reg {
		if k.Server == "" || k.Cluster { // a cluster runs its server kind's binaries, listed under that kind
			continue
		}
		all := server.Installed(k.Server)
		if len(all) == 0 {
			fmt.Fprintf(w, "  %s\t-\tnone found: %s\n", k.Name, server.InstallHint(k.Server))
		}
		def, _ := server.Locate(k.Server)
		for _, in := range all {
			found := in.Source
			if in.Binaries == def {
				found += ", default"
			}
			fmt.Fprintf(w, "  %s\t%s\t%s (%s)\n", k.Name, in.Version, in.Dir(), found)
		}
	}
	w.Flush()
}
