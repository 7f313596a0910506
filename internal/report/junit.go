package report

import (
	"cmp"
	"encoding/xml"
	"io"
	"strconv"
	"strings"

	"github.com/storebench/storebench/internal/assert"
	"github.com/storebench/storebench/internal/result"
)

// JUnit writes the run's verdicts as JUnit XML, the format CI systems
// render: a test case per cell × assertion verdict (failed with the
// measured value), one per assertion that judged nothing (failed), and one
// per failed cell (an error: the run could not measure it).
func JUnit(w io.Writer, r *result.Result) error {
	seconds := map[string]float64{}
	for _, c := range r.Cells {
		seconds[c.Label()] = c.Seconds
	}
	s := junitSuite{Name: "storebench " + cmp.Or(r.Suite, "run") + " " + r.ID, Timestamp: r.StartedAt.Format("2006-01-02T15:04:05Z"),
		Properties: []junitProperty{{"cpu_model", r.Environment.CPUModel}, {"cores", strconv.Itoa(r.Environment.Cores)},
			{"kernel", r.Environment.Kernel}, {"storebench", r.Storebench.Version + " " + r.Storebench.Commit}, {"status", r.Status}}}
	// A test case per cell × assertion: the phases (or SLOs) it judged
	// there are its parts, and any that failed make it fail.
	type key struct{ cell, expr string }
	index := map[key]int{}
	for _, v := range r.Assertions {
		label := v.Cell + result.RepeatSuffix(v.Repeat)
		k := key{label, v.Expr}
		i, ok := index[k]
		if !ok {
			tc := junitCase{ClassName: cmp.Or(v.Target, "storebench"), Name: v.Expr}
			if v.Cell != "" {
				tc.Name, tc.Time = label+": "+v.Expr, seconds[label]
			}
			s.Cases = append(s.Cases, tc)
			i = len(s.Cases) - 1
			index[k] = i
		}
		if v.Pass {
			continue
		}
		tc := &s.Cases[i]
		if tc.Failure == nil {
			tc.Failure = &junitProblem{Type: "assertion", Message: "want " + v.Expr + ", measured"}
			s.Failures++
		} else {
			tc.Failure.Message += ";"
			tc.Failure.Text += "\n"
		}
		tc.Failure.Message += " " + strings.TrimSpace(phaseSuffix(v.Phase)+" "+assert.Measured(v))
		tc.Failure.Text += assert.Line(v)
	}
	for _, c := range r.Cells {
		if c.Status == result.CellOK {
			continue
		}
		s.Cases = append(s.Cases, junitCase{ClassName: c.Target, Name: c.Label() + ": ran", Time: c.Seconds,
			Error: &junitProblem{Type: "cell failed", Message: c.Error, Text: c.Error}})
		s.Errors++
	}
	s.Tests = len(s.Cases)
	for _, tc := range s.Cases {
		s.Time += tc.Time
	}
	doc := junitSuites{Name: "storebench", Tests: s.Tests, Failures: s.Failures, Errors: s.Errors, Time: s.Time, Suites: []junitSuite{s}}
	return writeJUnitDoc(w, doc)
}

func phaseSuffix(phase string) string {
	if phase == "" {
		return ""
	}
	return " " + phase
}

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Time     float64      `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr,omitempty"`
	Time       float64         `xml:"time,attr"`
	Timestamp  string          `xml:"timestamp,attr,omitempty"`
	Properties []junitProperty `xml:"properties>property"`
	Cases      []junitCase     `xml:"testcase"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	ClassName string        `xml:"classname,attr"`
	Name      string        `xml:"name,attr"`
	Time      float64       `xml:"time,attr"`
	Failure   *junitProblem `xml:"failure,omitempty"`
	Error     *junitProblem `xml:"error,omitempty"`
	Skipped   *junitSkip    `xml:"skipped,omitempty"`
}

type junitSkip struct {
	Message string `xml:"message,attr"`
}

type junitProblem struct {
	Type    string `xml:"type,attr"`
	Message string `xml:"message,attr"`
	Text    string `xml:",chardata"`
}
