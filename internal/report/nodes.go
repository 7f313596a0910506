package report

import (
	"io"

	"github.com/storebench/storebench/internal/result"
)

// newNodesModel builds the "ops per node" section of every format: for
// each phase of a cluster or pool target (Phase.Nodes), a row per node with
// the reads and writes its own counters saw and its share, so an uneven
// spread of keys over slots or servers shows. nil when no phase counted
// nodes.
func newNodesModel(r *result.Result) *tableSection {
	t := newTable("nodes", "ops per node: the commands each node served (a cluster's or pool's by its own counters, a replica set's counted at the client)", true,
		column{head: "cell", left: true}, column{head: "phase", left: true}, column{head: "node", left: true}, column{head: "role", left: true},
		column{head: "reads", m: "reads"}, column{head: "writes", m: "writes"}, column{head: "other", m: "other"}, column{head: "share", m: "share"})
	for c, p := range phasesInOrder(r) {
		for _, n := range p.Nodes {
			t.add(textCell(c.Label()), textCell(p.Name), textCell(n.Addr), textCell(n.Role),
				countCell(n.Reads), countCell(n.Writes), countCell(n.Other), figureCell(fixed(100*n.Share, 1)+"%", n.Share))
		}
	}
	return newTableSection(t, nodesNote, "ops per node (the commands each node served: a cluster's or pool's by the node's own counters, a replica set's counted at the client)")
}

// nodesNote says what the counts are.
const nodesNote = "Each node's own counters (Redis INFO commandstats: GET, SET; memcached stats: cmd_get, cmd_set) before and after the measured part: they count every client of the node, and a replica the writes its primary streams to it; a PostgreSQL replica set's are counted at the client instead (storebench's reads and writes per node only); share = the node's reads and writes over all nodes'."

// NodesText prints the ops-per-node section for the terminal; nothing for a
// run without clusters or pools.
func NodesText(w io.Writer, r *result.Result) { sectionText(w, r, "nodes") }
