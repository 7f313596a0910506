package ycsb

import (
	"github.com/storebench/storebench/internal/workload"
)

// Type is the ycsb workload's registration: a store keeps the records as
// YCSB's binding for it does (store.Records), else each as one value. Its default load has no ops, so that a property file's
// operationcount can give them (Params.WithDefaults).
var Type = workload.Define("ycsb",
	"YCSB's core workloads A-F (its generators, key names and properties): load the records (SQL rows, Redis hashes, else one value each), then its reads, updates, inserts, scans and read-modify-writes; figures per op kind",
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
// none: all but E, whose scans only stores of their own records run.
var DefaultWorkloads = []string{"a", "b", "c", "d", "f"}

func (s *Spec) Defaults() {
	if len(s.YCSB) == 0 {
		s.YCSB = append([]string(nil), DefaultWorkloads...)
	}
}

func (s *Spec) params(name string, l workload.Load, seed uint64) Params {
	return Params{Workload: name, Records: s.Records, Properties: s.Properties, Seed: seed, Load: l}.WithDefaults()
}

// Validate checks each core workload's cell, on every target alike; one
// that scans (E) is refused by Cells on a target that cannot scan.
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
		params, err := s.params(name, p.Load, p.Seed).ForKind(p.Kind)
		if err != nil {
			return nil, err
		}
		c := workload.RunCell(params, Run)
		c.Names = []string{"ycsb"}
		cells = append(cells, c)
	}
	return cells, nil
}
