package result

// Article is the published experiment a suite reproduces: its figures, to be
// printed beside ours in the same units, and how its method differs.
type Article struct {
	Title string `yaml:"title" json:"title"`
	URL   string `yaml:"url,omitempty" json:"url,omitempty"`
	// Setup is the article's machine, versions and settings, as it states them.
	Setup string `yaml:"setup" json:"setup"`
	// Differences lists how the article's method differs from storebench's,
	// so a reader knows which gaps between the figures are expected.
	Differences []string       `yaml:"differences" json:"differences"`
	Tables      []ArticleTable `yaml:"tables" json:"tables"`
}

// ArticleTable is one of the article's tables.
type ArticleTable struct {
	Title string `yaml:"title" json:"title"`
	// Metric is how our figure is computed from a cell's phase: total_ms
	// (measured phase time), ops_s (throughput), mean_us, p50_us, p99_us.
	Metric string `yaml:"metric" json:"metric"`
	Unit   string `yaml:"unit" json:"unit"`
	// Workload is the name of the scenario's workload entry the cells come from.
	Workload string `yaml:"workload" json:"workload"`
	Phase    string `yaml:"phase" json:"phase"`
	// Param names the cell parameter that varies along the columns ("keys");
	// empty for a table with one column.
	Param   string       `yaml:"param,omitempty" json:"param,omitempty"`
	Columns []string     `yaml:"columns" json:"columns"`
	Rows    []ArticleRow `yaml:"rows" json:"rows"`
	Notes   []string     `yaml:"notes,omitempty" json:"notes,omitempty"`
}

// ArticleRow is one row of an article table: the article's label and figures,
// and which of our targets it is compared with.
type ArticleRow struct {
	Label  string `yaml:"label" json:"label"`
	Target string `yaml:"target" json:"target"`
	// Phase overrides the table's phase for this row (e.g. the empty endpoint).
	Phase string `yaml:"phase,omitempty" json:"phase,omitempty"`
	// Values are the article's figures, one per column; null where it has none.
	Values []*float64 `yaml:"values" json:"values"`
	// Ratios are the article's own ratios of each column's figure to the
	// first column's, where it publishes them: rounded its way, so not
	// recomputed from Values. A workload's section prints them beside ours.
	Ratios []*float64 `yaml:"ratios,omitempty" json:"ratios,omitempty"`
}
