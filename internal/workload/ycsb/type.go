package ycsb

import (
	"github.com/storebench/storebench/internal/workload"
)

// Type is the ycsb workload's registration: every store keeps a record as
// one value. Its default load has no ops, so that a property file's
// operationcount can give them (Params.WithDefaults).
var Type = workload.Define("ycsb",
	"YCSB's core workloads A-F (its generators, key names and properties): load the records, then its reads, updates, inserts and read-modify-writes; figures per op kind",
	workload.Load{Clients: DefaultClients}, func() workload.Spec { return &Spec{} }, nil)

// Spec is a ycsb entry of a scenario: one cell per core workload.
type Spec struct {
	// YCSB are the core workloads, a to f, each a cell.
	YCSB []string `yaml:"ycsb,omitempty" json:"ycsb,omitempty"`
	// Records left out: the properties' recordcount, else 1000.
	Records    int64             `yaml:"records,omitempty" json:"records,omitempty"`
	Properties map[string]string `yaml:"properties,omitempty" json:"properties,omitempty"`
}

// DefaultWorkloads are the core workloads an entry runs when it names
// none: all but E, whose scans no store offers yet.
var DefaultWorkloads = []string{"a", "b", "c", "d", "f"}

func (s *Spec) Defaults() {
	if len(s.YCSB) == 0 {
		s.YCSB = append([]string(nil), DefaultWorkloads...)
	}
}

func (s *Spec) params(name string, l workload.Load, seed uint64) Params {
	return Params{Workload: name, Records: s.Records, Properties: s.Properties, Seed: seed, Load: l}.WithDefaults()
}

// Validate checks each core workload's cell: one that scans (E) is refused
// here, on every target alike, before any work.
func (s *Spec) Validate(l workload.Load, seed uint64) error {
	for _, name := range s.YCSB {
		if err := s.params(name, l, seed).Validate(); err != nil {
			return err
		}
	}
	return nil
}

func (s *Spec) Cells(p workload.Plan) ([]workload.Cell, error) {
	var cells []workload.Cell
	for _, name := range s.YCSB {
		c := workload.RunCell(s.params(name, p.Load, p.Seed), Run)
		c.Names = []string{"ycsb"}
		cells = append(cells, c)
	}
	return cells, nil
}
