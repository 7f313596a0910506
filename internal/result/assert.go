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
}
