package report

import (
	"io"
	"strconv"

	"github.com/storebench/storebench/internal/result"
)

// newReplicaLagModel builds the "replica lag" section of every format: for
// each phase of a replica set target (Phase.ReplicaLag), how far its
// replicas trailed the primary, median and worst over the phase's samples,
// so a read share moved to replicas is seen with what it costs in
// freshness. nil when no phase sampled a lag.
func newReplicaLagModel(r *result.Result) *tableSection {
	t := newTable("replica-lag", "replica lag: how far the replicas trailed the primary, the worst replica per sample", true,
		column{head: "cell", left: true}, column{head: "phase", left: true},
		column{head: "streaming", left: true}, column{head: "samples", m: "samples"},
		column{head: "replay p50 ms", m: "replay_p50_ms"}, column{head: "replay max ms", m: "replay_max_ms"},
		column{head: "flush max ms", m: "flush_max_ms"},
		column{head: "bytes p50", m: "bytes_p50"}, column{head: "bytes max", m: "bytes_max"},
		column{head: "catch-up ms", m: "catch_up_ms"})
	for c, p := range phasesInOrder(r) {
		l := p.ReplicaLag
		if l == nil {
			continue
		}
		replayP50, replayMax, flushMax := textCell("—"), textCell("—"), textCell("—")
		if l.TimedSamples > 0 {
			replayP50 = figureCell(fixed(l.ReplayMs.P50, 2), l.ReplayMs.P50)
			replayMax = figureCell(fixed(l.ReplayMs.Max, 2), l.ReplayMs.Max)
			flushMax = figureCell(fixed(l.FlushMs.Max, 2), l.FlushMs.Max)
		}
		t.add(textCell(c.Label()), textCell(p.Name),
			textCell(strconv.Itoa(l.Streaming)+" of "+strconv.Itoa(l.Replicas)), countCell(int64(l.Samples)),
			replayP50, replayMax, flushMax,
			figureCell(whole(l.Bytes.P50), l.Bytes.P50), figureCell(whole(l.Bytes.Max), l.Bytes.Max),
			figureCell(fixed(l.CatchUpMs, 1), l.CatchUpMs))
	}
	return newTableSection(t, replicaLagNote, "replica lag (how far the replicas trailed the primary over the phase, the worst replica per sample)")
}

// replicaLagNote says where the figures come from.
const replicaLagNote = "Sampled on the primary every 100 ms and at both ends of the measured part (pg_stat_replication): replay = replay_lag, how long ago the replica had replayed what the primary flushed last; flush = flush_lag; bytes = WAL the primary wrote that the replica had not replayed. Each sample counts its worst replica; streaming = the fewest replicas a sample saw streaming. Catch-up = the wait, before the phase and outside its time, for every replica to replay the earlier phases' writes. Reads and writes per node (in ops per node) are counted at the client for a replica set: PostgreSQL's own counters do not tell this store's reads from its writes."

// ReplicaLagText prints the replica lag section for the terminal; nothing
// for a run without replica sets.
func ReplicaLagText(w io.Writer, r *result.Result) { sectionText(w, r, "replica-lag") }
