package report

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/storebench/storebench/internal/result"
)

// reportFormats maps --format values to renderers.
var reportFormats = map[string]func(io.Writer, *result.Result) error{
	"text":     func(w io.Writer, r *result.Result) error { Text(w, r); return nil },
	"html":     HTML,
	"md":       Markdown,
	"markdown": Markdown,
	"csv":      CSV,
}

// formatByExt is the format -o FILE implies when --format is not given.
var formatByExt = map[string]string{".html": "html", ".htm": "html", ".md": "md", ".markdown": "md", ".csv": "csv", ".txt": "text"}

// ForOutput picks the renderer for --format, or from out's extension when
// no format is given (text when neither says); its errors are one line.
func ForOutput(format, out string) (func(io.Writer, *result.Result) error, error) {
	return pick(reportFormats, format, out)
}

// pick is the renderer of formats that --format names, or out's extension
// implies when no format is given (text when neither says): report's and
// history's choice, one rule.
func pick[F any](formats map[string]F, format, out string) (F, error) {
	var none F
	if format == "" && out != "" && out != "-" {
		ext := strings.ToLower(filepath.Ext(out))
		f, ok := formatByExt[ext]
		if !ok {
			return none, fmt.Errorf("-o %s: cannot tell the format from %q; say --format text, html, md or csv", out, ext)
		}
		format = f
	}
	if format == "" {
		format = "text"
	}
	render, ok := formats[strings.ToLower(format)]
	if !ok {
		return none, fmt.Errorf("--format %q: unknown format (text, html, md, csv)", format)
	}
	return render, nil
}
