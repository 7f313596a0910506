// Package cli holds storebench's commands; each is a thin layer over the
// packages that do the work.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/target"
	"github.com/storebench/storebench/internal/workload"
)

// Exit codes.
const (
	ExitOK     = 0
	ExitFailed = 1 // a run failed or was interrupted
	ExitUsage  = 2 // bad usage or bad input, found before any work started
	ExitAssert = 3 // the run measured, and an assertion (--assert, compare --fail-on) failed
)

// App is what the commands share.
type App struct {
	Registry  target.Registry
	Workloads workload.Registry
	Stdout    io.Writer
	Stderr    io.Writer
	Version   string
	Commit    string

	secrets *store.Secrets // the passwords of this command's input, for what it prints and records
	args    []string       // this command's arguments, as Main got them
}

// redacting writes what it is given with every password of its Secrets
// redacted.
type redacting struct {
	w io.Writer
	s *store.Secrets
}

func (r redacting) Write(p []byte) (int, error) {
	if _, err := io.WriteString(r.w, r.s.Redact(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Fd is the file's under it, so that a terminal is still seen as one.
func (r redacting) Fd() uintptr {
	if f, ok := r.w.(interface{ Fd() uintptr }); ok {
		return f.Fd()
	}
	return ^uintptr(0)
}

func orStd(w, std io.Writer) io.Writer {
	if w == nil {
		return std
	}
	return w
}

// inputTexts are the texts of args in which passwords are looked for, each
// apart: a --stores list split into its targets, so that a URL's user
// information is not read as running to the '@' of a later target
// ("redis://u:pw@h:1,postgres@18" would make "postgres" a password).
func (a *App) inputTexts(args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		list, ok := strings.CutPrefix(args[i], "--stores=")
		if !ok && args[i] == "--stores" && i+1 < len(args) {
			list, ok = args[i+1], true
			i++
		}
		if !ok {
			out = append(out, args[i])
			continue
		}
		targets, err := a.Registry.SplitStores(list)
		if err != nil { // refused unquoted; should anything print it, all of it is hidden
			targets = []string{list}
		}
		out = append(out, targets...)
	}
	return out
}

// errURLArgument answers a store URL given where a command, a scenario or
// a result is expected: forgetting --stores is an easy mistake, and the
// URL is quoted nowhere.
var errURLArgument = errors.New("this looks like a store URL: pass it with --stores (storebench run kv --stores 'URL'; storebench clean --stores 'URL')")

// looksLikeURL says whether an argument is a URL ("scheme://…").
func looksLikeURL(arg string) bool {
	scheme, _, ok := strings.Cut(arg, "://")
	return ok && scheme != "" && !strings.ContainsAny(scheme, "/. ")
}

// command is the command line as the result records it, passwords redacted.
func (a *App) command() []string {
	out := []string{"storebench"}
	for _, arg := range a.args {
		out = append(out, a.redact(arg))
	}
	return out
}

// redact is the one redaction of what this command prints or records.
func (a *App) redact(text string) string {
	if a.secrets == nil { // an App whose commands tests call without Main
		return store.RedactURL(text)
	}
	return a.secrets.Redact(text)
}

// addSecrets adds the passwords of a scenario's targets to what this
// command redacts.
func (a *App) addSecrets(texts ...string) {
	if a.secrets != nil {
		a.secrets.Add(texts...)
	}
}

// UsageError is bad input: exit code 2.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

func usagef(format string, a ...any) error {
	return &UsageError{Err: fmt.Errorf(format, a...)}
}

// FailedError means the run happened but something in it failed: exit code 1.
type FailedError struct{ Err error }

func (e *FailedError) Error() string { return e.Err.Error() }
func (e *FailedError) Unwrap() error { return e.Err }

// AssertError means the run measured everything and a threshold failed:
// exit code 3.
type AssertError struct{ Err error }

func (e *AssertError) Error() string { return e.Err.Error() }
func (e *AssertError) Unwrap() error { return e.Err }

// Main runs the command line and returns the process exit code.
func (a *App) Main(ctx context.Context, args []string) int {
	// Whatever this command prints goes through the one redaction of the
	// passwords its arguments (and, once read, its scenario's targets) hold:
	// a message that quotes a misread URL, or a piece of one, quotes none.
	inv := *a
	inv.secrets = new(store.Secrets)
	inv.secrets.Add(a.inputTexts(args)...)
	inv.args = args
	inv.Stdout = redacting{orStd(a.Stdout, os.Stdout), inv.secrets}
	inv.Stderr = redacting{orStd(a.Stderr, os.Stderr), inv.secrets}
	return inv.main(ctx, args)
}

func (a *App) main(ctx context.Context, args []string) int {
	if len(args) > 0 && looksLikeURL(args[0]) {
		fmt.Fprintln(a.Stderr, "storebench: "+errURLArgument.Error())
		return ExitUsage
	}
	root := a.root()
	root.SetArgs(args)
	root.SetOut(a.Stdout)
	root.SetErr(a.Stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return ExitOK
	}
	fmt.Fprintln(a.Stderr, "storebench: "+err.Error())
	var fe *FailedError
	if errors.As(err, &fe) {
		return ExitFailed
	}
	if _, ok := errors.AsType[*AssertError](err); ok {
		return ExitAssert
	}
	// Everything else found before work started: usage errors, flag errors.
	return ExitUsage
}

func (a *App) root() *cobra.Command {
	root := &cobra.Command{
		Use:   "storebench",
		Short: "Measure which data store a cache, session or payments workload needs",
		Long: "storebench runs the same workload against every data store it knows (" + strings.Join(a.Registry.Names(), ", ") + ")\n" +
			"and reports what each choice costs in latency, throughput and durability, with versions and settings\n" +
			"recorded. `storebench list` says which can run here.",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &UsageError{Err: err} })
	root.AddCommand(a.runCmd(), a.listCmd(), a.reportCmd(), a.compareCmd(), a.historyCmd(), a.mergeCmd(), a.cleanCmd(), a.doctorCmd(), a.versionCmd())
	return root
}

// cobraArgs wraps cobra's argument validators so their errors count as
// usage errors; a store URL given as an argument is told to go to --stores.
func cobraArgs(v cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		for _, arg := range args {
			if looksLikeURL(arg) {
				return &UsageError{Err: errURLArgument}
			}
		}
		if err := v(cmd, args); err != nil {
			return &UsageError{Err: err}
		}
		return nil
	}
}
