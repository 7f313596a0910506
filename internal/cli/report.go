package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/storebench/storebench/internal/report"
	"github.com/storebench/storebench/internal/result"
)

// reportFormats maps --format values to renderers.
var reportFormats = map[string]func(io.Writer, *result.Result) error{
	"text":     func(w io.Writer, r *result.Result) error { report.Text(w, r); return nil },
	"html":     report.HTML,
	"md":       report.Markdown,
	"markdown": report.Markdown,
	"csv":      report.CSV,
}

// formatByExt is the format -o FILE implies when --format is not given.
var formatByExt = map[string]string{".html": "html", ".htm": "html", ".md": "md", ".markdown": "md", ".csv": "csv", ".txt": "text"}

func (a *App) reportCmd() *cobra.Command {
	var format, out string
	cmd := &cobra.Command{
		Use:   "report RESULT.json",
		Short: "Render a result file as text, HTML, Markdown or CSV",
		Long: `Report renders a result.json (or the results/<time>/ directory holding one),
and only that file, for people:

  text  the terminal summary that run prints (the default, to stdout)
  html  one self-contained page: SVG charts, each with the table of its numbers,
        environment and settings; it loads nothing from the network
  md    GitHub Markdown tables, to paste into an issue or a pull request
  csv   one row per cell × phase × metric, columns documented in the README

Without --format the format comes from -o's extension (.html, .md, .csv, .txt),
else it is text. Without -o the report goes to stdout.`,
		Example: `  storebench report results/20261122T023107Z/result.json
  storebench report results/20261122T023107Z -o report.html
  storebench report result.json --format md | xclip
  storebench report result.json --format csv -o cells.csv`,
		Args: cobraArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			render, err := pickFormat(format, out)
			if err != nil {
				return err
			}
			r, err := loadResult(args[0])
			if err != nil {
				return err
			}
			if out == "" || out == "-" {
				return render(cmd.OutOrStdout(), r)
			}
			if err := result.WriteFileAtomic(out, func(w io.Writer) error { return render(w, r) }); err != nil {
				return usagef("-o %s: %v", out, err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "report: %s\n", out)
			return nil
		},
	}
	cmd.Flags().StringVarP(&format, "format", "f", "", "text, html, md or csv (default: from -o's extension, else text)")
	cmd.Flags().StringVarP(&out, "output", "o", "", "write to `FILE` instead of stdout")
	return cmd
}

func pickFormat(format, out string) (func(io.Writer, *result.Result) error, error) {
	if format == "" && out != "" && out != "-" {
		ext := strings.ToLower(filepath.Ext(out))
		f, ok := formatByExt[ext]
		if !ok {
			return nil, usagef("-o %s: cannot tell the format from %q; say --format text, html, md or csv", out, ext)
		}
		format = f
	}
	if format == "" {
		format = "text"
	}
	render, ok := reportFormats[strings.ToLower(format)]
	if !ok {
		return nil, usagef("--format %q: unknown format (text, html, md, csv)", format)
	}
	return render, nil
}

// loadResult reads a result file, or the result.json in a directory, with
// errors that say which file and what is wrong with it, on one line.
func loadResult(path string) (*result.Result, error) {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		path = filepath.Join(path, "result.json")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			return nil, usagef("%s: %v", path, pe.Err)
		}
		return nil, usagef("%v", err)
	}
	var head struct {
		Schema string `json:"schema"`
	}
	if err := json.Unmarshal(b, &head); err != nil || head.Schema == "" {
		return nil, usagef("%s: not a storebench result (no JSON object with a schema field)", path)
	}
	r, err := result.Read(path)
	if err != nil {
		return nil, usagef("%s", strings.ReplaceAll(err.Error(), "\n", " "))
	}
	return r, nil
}
