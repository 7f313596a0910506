package result

// Assertion is one threshold a run was asked to check (a CI gate) and what
// it found: Value is in the metric's unit (µs for a latency, ops/s, a
// ratio), Target, Cell and Phase say where it was measured, Measured what
// was, and Pass whether Measured met Op Value.
type Assertion struct {
	Expr     string  `json:"expr"`
	Metric   string  `json:"metric"`
	Op       string  `json:"op"`
	Value    float64 `json:"value"`
	Target   string  `json:"target"`
	Cell     string  `json:"cell"`
	Phase    string  `json:"phase"`
	Measured float64 `json:"measured"`
	Pass     bool    `json:"pass"`
	// Unit is Value's and Measured's unit as a reader writes it: "µs",
	// "ops/s", "ratio", "ops", "" for a count or a verdict (1 ok, 0 not).
	Unit string `json:"unit,omitempty"`
	// Repeat is the cell's round in a repeated run (0: none).
	Repeat int `json:"repeat,omitempty"`
	// Note says what a bare number cannot: "none (lowest tried 2,000
	// ops/s)" for a capacity none was found, "matched no cell" for an
	// assertion whose scope or metric found nothing to judge.
	Note string `json:"note,omitempty"`
}

// AssertionsFailed counts the failed verdicts of r's assertions.
func (r *Result) AssertionsFailed() int {
	n := 0
	for _, a := range r.Assertions {
		if !a.Pass {
			n++
		}
	}
	return n
}
