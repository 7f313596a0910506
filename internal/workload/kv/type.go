package kv

import (
	"errors"
	"fmt"

	"github.com/storebench/storebench/internal/workload"
)

// Type is the kv workload's registration.
var Type = workload.Define("kv",
	"write N keys one by one, then read each back and check it",
	workload.Load{Clients: 1}, func() workload.Spec { return &Spec{} }, nil)

// Spec is a kv entry of a scenario: one cell per key count.
type Spec struct {
	Keys      []int64 `yaml:"keys,omitempty" json:"keys,omitempty"`
	ValueSize int     `yaml:"value_size,omitempty" json:"value_size,omitempty"`
	KeyMode   string  `yaml:"key_mode,omitempty" json:"key_mode,omitempty"`
	Batch     int     `yaml:"batch,omitempty" json:"batch,omitempty"`
}

// Defaults are the article's: 1k, 10k and 100k keys of 100 bytes, its
// random-float keys.
func (s *Spec) Defaults() {
	if len(s.Keys) == 0 {
		s.Keys = []int64{1000, 10000, 100000}
	}
	if s.ValueSize == 0 {
		s.ValueSize = 100
	}
	if s.KeyMode == "" {
		s.KeyMode = string(workload.KeyRandomFloat)
	}
}

func (s *Spec) params(keys int64, l workload.Load, seed uint64) Params {
	return Params{Keys: keys, ValueSize: s.ValueSize, KeyMode: workload.KeyMode(s.KeyMode), Seed: seed, Clients: l.Clients, WarmupOps: l.WarmupOps, Batch: s.Batch}
}

// Validate checks every key count's cell.
func (s *Spec) Validate(l workload.Load, seed uint64) error {
	if l.Ops != 0 || l.Duration != 0 || l.Rate != 0 || l.Pipeline > 1 || l.ConnectPerOp {
		return errors.New("kv: the key counts set the op counts; ops, duration, rate, pipeline and connect_per_op do not apply (use batch for bulk writes)")
	}
	for _, n := range s.Keys {
		if err := s.params(n, l, seed).Validate(); err != nil {
			return err
		}
	}
	return nil
}

// Cells makes one cell per key count.
func (s *Spec) Cells(p workload.Plan) ([]workload.Cell, error) {
	if s.Batch > 0 && !p.Kind.Batches {
		return nil, errors.New("store " + p.Kind.Name + " cannot send several ops per round trip (pipeline, batch); drop it from this workload's targets")
	}
	var cells []workload.Cell
	for _, n := range s.Keys {
		params := s.params(n, p.Load, p.Seed)
		params.Shard = p.Shard
		if _, share := params.keyRange(); share < 1 {
			return nil, fmt.Errorf("kv: %d keys cannot be split into %d shards: each shard needs a key (a chunk with batch)", n, p.Shard.Count)
		}
		c := workload.RunCell(params, Run)
		c.Names = []string{"keys"}
		cells = append(cells, c)
	}
	return cells, nil
}

// Shards: a shard writes its part of the keys (run --shard).
func (*Spec) Shards() {}
