package target

import (
	"context"
	"fmt"
	"time"

	"github.com/storebench/storebench/internal/metrics"
	"github.com/storebench/storebench/internal/store"
)

// nodeProbe records which node of a cluster or pool served how many of
// the phase's commands (Phase.Nodes): each node's counters read before and
// after the measured part.
type nodeProbe struct {
	nc     store.NodeCounter
	before map[string]store.NodeCount
	err    error
}

// nodeReadTimeout bounds reading every node's counters: a dead node must
// not hold the phase's end.
const nodeReadTimeout = 5 * time.Second

func (p *nodeProbe) read() ([]store.NodeCount, error) {
	ctx, cancel := context.WithTimeout(context.Background(), nodeReadTimeout)
	defer cancel()
	return p.nc.NodeCounts(ctx)
}

func (p *nodeProbe) Begin() {
	counts, err := p.read()
	p.err = err
	p.before = map[string]store.NodeCount{}
	for _, c := range counts {
		p.before[c.Addr] = c
	}
}

func (p *nodeProbe) End(ph *metrics.Phase) {
	after, err := p.read()
	if err == nil {
		err = p.err
	}
	if err != nil {
		// A killed node: the others are still counted.
		ph.Warnings = append(ph.Warnings, fmt.Sprintf("ops per node: some nodes could not be read (%v)", err))
	}
	ph.Nodes = nodeOps(p.before, after)
}

// nodeOps is each node's counters' difference, for the nodes read both
// before and after, and each one's share of the reads and writes.
func nodeOps(before map[string]store.NodeCount, after []store.NodeCount) []metrics.NodeOps {
	var out []metrics.NodeOps
	var total int64
	for _, a := range after {
		b, ok := before[a.Addr]
		if !ok {
			continue
		}
		n := metrics.NodeOps{Addr: a.Addr, Role: a.Role, Reads: max(a.Reads-b.Reads, 0), Writes: max(a.Writes-b.Writes, 0), Other: max(a.Other-b.Other, 0)}
		total += n.Reads + n.Writes
		out = append(out, n)
	}
	for i := range out {
		if total > 0 {
			out[i].Share = float64(out[i].Reads+out[i].Writes) / float64(total)
		}
	}
	return out
}
