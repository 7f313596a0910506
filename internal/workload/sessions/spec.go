package sessions

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/target"
	"github.com/storebench/storebench/internal/workload"
)

// Section is the sessions section of a scenario's workload entry
// (`sessions:` in YAML). Zero fields take Defaults' values. One entry is
// one phase; Variants (phase A) and Designs (phase B) expand into one cell
// each.
type Section struct {
	// Phase is "insert" (phase A) or "churn" (phase B).
	Phase string `yaml:"phase" json:"phase"`
	// Variants are phase A's variants (default: all of Variants). Phase A
	// runs on postgres targets only.
	Variants []string `yaml:"variants,omitempty" json:"variants,omitempty"`
	// Designs maps a store (postgres, redis, memcached, files, sqlite,
	// mariadb, or "*" for the others) to its phase B designs (default:
	// postgres naive and tuned, every other store tuned).
	Designs map[string][]string `yaml:"designs,omitempty" json:"designs,omitempty"`
	// ReplicaDesigns are the postgres designs run once more with reads on a
	// streaming replica when the run asks for one (default: tuned, and
	// tuned with an UNLOGGED table).
	ReplicaDesigns []string `yaml:"replica_designs,omitempty" json:"replica_designs,omitempty"`

	PayloadSize    int           `yaml:"payload_size,omitempty" json:"payload_size,omitempty"`
	TTL            time.Duration `yaml:"ttl,omitempty" json:"ttl,omitempty"`
	RefreshBelow   time.Duration `yaml:"refresh_below,omitempty" json:"refresh_below,omitempty"`
	KeepaliveEvery time.Duration `yaml:"keepalive_every,omitempty" json:"keepalive_every,omitempty"`
	KeepaliveChunk int           `yaml:"keepalive_chunk,omitempty" json:"keepalive_chunk,omitempty"`
	ReapEvery      time.Duration `yaml:"reap_every,omitempty" json:"reap_every,omitempty"`
	ReapBatch      int           `yaml:"reap_batch,omitempty" json:"reap_batch,omitempty"`
	// ReapMaxBatches is a pointer so that 0 (until drained) differs from unset.
	ReapMaxBatches *int          `yaml:"reap_max_batches,omitempty" json:"reap_max_batches,omitempty"`
	ActiveMean     time.Duration `yaml:"active_mean,omitempty" json:"active_mean,omitempty"`
	CreateRate     float64       `yaml:"create_rate,omitempty" json:"create_rate,omitempty"`
	CreateClients  int           `yaml:"create_clients,omitempty" json:"create_clients,omitempty"`
	// ExpiredReads is a pointer so that 0 (never read an expired session) differs from unset.
	ExpiredReads *float64      `yaml:"expired_reads,omitempty" json:"expired_reads,omitempty"`
	TimeScale    float64       `yaml:"time_scale,omitempty" json:"time_scale,omitempty"`
	ObserveEvery time.Duration `yaml:"observe_every,omitempty" json:"observe_every,omitempty"`
	// Replica (run --replica) adds the ReplicaDesigns' cells on postgres.
	Replica bool `yaml:"replica,omitempty" json:"replica,omitempty"`
}

// Cell is one cell of a Section on one store: a phase A variant, or a phase B
// design, possibly read on a replica.
type Cell struct {
	Phase   string
	Variant string // phase A
	Design  string // phase B
	Replica bool
}

// DefaultReplicaDesigns are what --replica compares: the logged tuned
// design, whose reads the replica serves, and the same with an UNLOGGED
// table, which the replica cannot read.
var DefaultReplicaDesigns = []string{"tuned", "tuned,persistence=unlogged"}

// Kind is what the spec needs to know of a store kind to expand its
// cells: the names a scenario's designs may key it by (its registry name
// and URL schemes), whether it is the article's store (store.SessionArticle:
// phase A runs there, phase B compares naive with tuned there by default)
// and whether its server can have read replicas (store.SessionReplicas).
type Kind struct {
	Names   []string
	Article bool
	Replica bool
}

// KindOf reads those facts off a store kind's prototype.
func KindOf(k target.Kind) Kind {
	return Kind{Names: append([]string{k.Name}, k.Schemes...),
		Article: workload.Supports[store.SessionArticle](k), Replica: workload.Supports[store.SessionReplicas](k)}
}

// Cells expands the spec for one store kind. Phase A has cells on the
// article's store only. With replica, a store whose server can have
// replicas gets ReplicaDesigns once more, read on a replica, after its
// other cells.
func (s Section) Cells(k Kind, replica bool) []Cell {
	var out []Cell
	switch s.Phase {
	case PhaseInsert:
		if !k.Article {
			return nil
		}
		for _, v := range workload.SliceOr(s.Variants, Variants) {
			out = append(out, Cell{Phase: PhaseInsert, Variant: v})
		}
	case PhaseChurn:
		for _, d := range s.designsFor(k) {
			out = append(out, Cell{Phase: PhaseChurn, Design: d})
		}
		if replica && k.Replica {
			for _, d := range workload.SliceOr(s.ReplicaDesigns, DefaultReplicaDesigns) {
				out = append(out, Cell{Phase: PhaseChurn, Design: d, Replica: true})
			}
		}
	}
	return out
}

func (s Section) designsFor(k Kind) []string {
	if s.Designs == nil {
		if k.Article {
			return []string{"naive", "tuned"}
		}
		return []string{"tuned"}
	}
	for name, v := range s.Designs {
		if slices.Contains(k.Names, name) {
			return v
		}
	}
	return s.Designs["*"]
}

// Check validates the spec before any work: the phase, every variant and
// design, and the parameters of one cell of each.
func (s Section) Check(seed uint64, l workload.Load) error {
	var errs []error
	switch s.Phase {
	case PhaseInsert:
		for _, v := range s.Variants {
			if _, err := VariantDesign(v); err != nil {
				errs = append(errs, fmt.Errorf("sessions: %w", err))
			}
		}
	case PhaseChurn:
		for k, ds := range s.Designs {
			for _, d := range ds {
				if _, err := ParseDesign(d); err != nil {
					errs = append(errs, fmt.Errorf("sessions: designs for %s: %w", k, err))
				}
			}
		}
		for _, d := range s.ReplicaDesigns {
			if _, err := ParseDesign(d); err != nil {
				errs = append(errs, fmt.Errorf("sessions: replica designs: %w", err))
			}
		}
	default:
		return fmt.Errorf("sessions: phase %q: want %s (phase A) or %s (phase B)", s.Phase, PhaseInsert, PhaseChurn)
	}
	// Every cell a kind can get: the article's store with replicas, and
	// any other.
	for _, k := range []Kind{{Article: true, Replica: true}, {}} {
		for _, c := range s.Cells(k, true) {
			if _, err := PlanParams(s, c, seed, l); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// PlanParams builds one cell's Params from a scenario's sessions section,
// one of its cells, the scenario's seed and the effective load. Phase A:
// ops → Inserts, warmup_ops → WarmupOps, one client. Phase B: clients →
// Clients (readers), rate → ReadRate (0: closed loop), duration →
// Duration, warmup → Warmup. Pipelines and connect-per-op do not apply.
func PlanParams(s Section, c Cell, seed uint64, l workload.Load) (Params, error) {
	p := Defaults()
	if l.Pipeline > 1 || l.ConnectPerOp {
		return p, errors.New("sessions: pipeline and connect_per_op do not apply")
	}
	p.Phase, p.Variant, p.Design, p.Replica = c.Phase, c.Variant, c.Design, c.Replica
	p.Seed = cmp.Or(seed, p.Seed)
	p.PayloadSize = cmp.Or(s.PayloadSize, p.PayloadSize)
	if c.Phase == PhaseInsert {
		if l.Clients > 1 || l.Rate != 0 {
			return p, errors.New("sessions: phase A (insert) is the article's one connection, one insert at a time: clients 1, no rate")
		}
		p.Inserts = cmp.Or(l.Ops, p.Inserts)
		p.WarmupOps = l.WarmupOps
		return p, p.Validate()
	}
	p.TTL = cmp.Or(s.TTL, p.TTL)
	p.RefreshBelow = cmp.Or(s.RefreshBelow, p.RefreshBelow)
	p.KeepaliveEvery = cmp.Or(s.KeepaliveEvery, p.KeepaliveEvery)
	p.ReapEvery = cmp.Or(s.ReapEvery, p.ReapEvery)
	p.ActiveMean = cmp.Or(s.ActiveMean, p.ActiveMean)
	p.ObserveEvery = cmp.Or(s.ObserveEvery, p.ObserveEvery)
	p.KeepaliveChunk = cmp.Or(s.KeepaliveChunk, p.KeepaliveChunk)
	p.ReapBatch = cmp.Or(s.ReapBatch, p.ReapBatch)
	p.ReapMaxBatches = workload.ValueOr(s.ReapMaxBatches, p.ReapMaxBatches)
	p.CreateRate = cmp.Or(s.CreateRate, p.CreateRate)
	p.CreateClients = cmp.Or(s.CreateClients, p.CreateClients)
	p.ExpiredReads = workload.ValueOr(s.ExpiredReads, p.ExpiredReads)
	p.TimeScale = cmp.Or(s.TimeScale, p.TimeScale)
	p.Clients = cmp.Or(l.Clients, p.Clients)
	p.ReadRate = l.Rate
	p.Duration, p.Warmup = l.Duration, l.Warmup
	return p, p.Validate()
}

// CellParams are a cell's parameters as the result records them
// (Cell.Params): what names it and what it ran with.
func CellParams(p Params) map[string]any {
	m := map[string]any{"phase": p.Phase, "payload_size": p.PayloadSize, "seed": p.Seed}
	if p.Phase == PhaseInsert {
		m["variant"], m["inserts"], m["warmup_ops"] = p.Variant, p.Inserts, p.WarmupOps
		return m
	}
	t := p.Timing()
	m["design"], m["replica"], m["time_scale"] = p.Design, p.Replica, p.TimeScale
	m["ttl"], m["refresh_below"], m["keepalive_every"], m["keepalive_chunk"] = p.TTL.String(), p.RefreshBelow.String(), p.KeepaliveEvery.String(), p.KeepaliveChunk
	m["reap_every"], m["reap_batch"], m["reap_max_batches"] = p.ReapEvery.String(), p.ReapBatch, p.ReapMaxBatches
	m["active_mean"], m["create_rate"], m["read_rate"], m["clients"], m["create_clients"] = p.ActiveMean.String(), p.CreateRate, p.ReadRate, p.Clients, p.CreateClients
	m["expired_reads"], m["duration"], m["warmup"] = p.ExpiredReads, t.Duration.String(), t.Warmup.String()
	return m
}
