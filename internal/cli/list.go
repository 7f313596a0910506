package cli

import (
	"fmt"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/storebench/storebench/internal/scenario"
	"github.com/storebench/storebench/internal/server"
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
