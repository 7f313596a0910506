package metrics

import (
	"fmt"
	"math"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/storebench/storebench/internal/errclass"
	"github.com/storebench/storebench/internal/hiccup"
)

// maxPhaseSamples is how many distinct error messages a Phase keeps.
const maxPhaseSamples = 10

// Phase is the merged result of one measured phase.
//
// Ops counts every measured operation, failed ones included; Errors breaks the
// failures down by class. The latency figures and the histogram cover the
// successful operations only (Ops minus the errors).
type Phase struct {
	Name         string           `json:"name"`
	Workers      int              `json:"workers"`
	Ops          int64            `json:"ops"`
	Errors       map[string]int64 `json:"errors,omitempty"` // by errclass.Class
	ErrorSamples []string         `json:"error_samples,omitempty"`
	// DurationS is the measured time, warm-up excluded: from the common start
	// of the workers to the end of the last measured operation.
	DurationS float64 `json:"duration_s"`
	// Start is the wall-clock instant of the measured start (UTC): the
	// origin of Series' seconds, so shards of one run (run --shard) can be
	// aligned by wall clock when merged. Zero when the phase was not timed
	// by the engine.
	Start time.Time `json:"start,omitzero"`
	// OpsPerCall is how many operations one timed call carries: a pipeline
	// or multi-get of that depth. Ops and throughput count operations; the
	// latency figures and the histogram are per call. Omitted when 1.
	OpsPerCall     int     `json:"ops_per_call,omitempty"`
	ThroughputOpsS float64 `json:"throughput_ops_s"`
	LatencyUs      Latency `json:"latency_us"`
	// Histogram is the merged latency histogram in HdrHistogram's V2
	// compressed encoding, base64: values in nanoseconds (HistogramUnit),
	// 1 ns to 60 s, 3 significant digits. Decode it with DecodeHistogram (or
	// any HdrHistogram implementation's base64 compressed decoder).
	Histogram     string    `json:"histogram,omitempty"`
	HistogramUnit string    `json:"histogram_unit,omitempty"`
	Series        []Second  `json:"series,omitempty"`
	Warmup        Warmup    `json:"warmup"`
	OpenLoop      *OpenLoop `json:"open_loop,omitempty"`
	// ClientCPUS is user+system CPU of the whole client process (getrusage)
	// over the measured part: it includes the store driver, the engine and
	// anything else the process was doing, such as an in-process store.
	ClientCPUS       float64 `json:"client_cpu_s"`
	ClientCPUUsPerOp float64 `json:"client_cpu_us_per_op"`
	// ClientIO is how the phase's connections waited for the server:
	// "blocking" (each in read(2) on an OS thread of its own, as a C or PHP
	// client does) or "poller" (Go's network poller, which wakes one thread
	// for many replies); storebench picks by connections per client thread
	// (package blockio). Empty for in-process stores, connect-per-op, and
	// the sessions and payments workloads (their clients use the poller).
	ClientIO string `json:"client_io,omitempty"`
	// NoStore marks a phase whose operations touch no store (a floor, such
	// as the web workload's empty endpoint): the server counting none of
	// them is expected, not a failed reading.
	NoStore bool `json:"no_store,omitempty"`
	// MultiCall marks a phase whose operations may each make several server
	// calls (ycsb's records on Redis: an insert is HSET and ZADD, a scan a
	// call per record): the server counting more calls than operations is
	// then no sign of other clients.
	MultiCall bool     `json:"multi_call,omitempty"`
	Warnings  []string `json:"warnings,omitempty"`
	// Notes say what was done around the phase that a reader should know,
	// e.g. that the table was vacuumed before it (outside the measured time).
	Notes []string `json:"notes,omitempty"`
	// Server is what a managed server spent over the measured part; nil for
	// in-process and external targets, whose processes storebench cannot see.
	Server *ServerCost `json:"server,omitempty"`
	// Companion is the cost of the server a cell ran beside its own
	// (cache-aside: the cache in front of the database), when managed.
	Companion *ServerCost `json:"companion_server,omitempty"`
	// Placement is where the client's and a managed server's threads ran
	// over the measured part: each side's share of busy time per CPU, and
	// how often they shared a CPU. nil for in-process and external targets,
	// outside Linux, and when either side used less than a 10 ms tick.
	Placement *Placement `json:"placement,omitempty"`
	// ServerTime is the server's own account of the time it spent executing
	// the phase's operations (pg_stat_statements, Redis INFO commandstats),
	// beside the client's latency; nil when the store offers none (see the
	// warnings for why).
	ServerTime *ServerTimeSummary `json:"server_time,omitempty"`
	// ByOp breaks a phase of mixed operations (a read/write mix) down by
	// kind ("get", "set"), with the phase's own conventions: Ops counts
	// failures too, the latency and histogram cover successes, and an
	// open-loop phase times each op from its intended start. nil when the
	// workload does not report kinds.
	ByOp map[string]OpFigures `json:"by_op,omitempty"`
	// Nodes is which server of a cluster or pool (redis-cluster,
	// memcached-pool) served how many commands over the measured part,
	// managed or external: the difference of each node's own counters
	// (Redis INFO commandstats, memcached stats). nil for single servers.
	Nodes []NodeOps `json:"nodes,omitempty"`
	// Hiccup is the platform's own stalls over the measured part: how late
	// a probe thread on each CPU the run used woke from 1 ms sleeps (the
	// hiccup meter); nil when off (--no-hiccup) or not measurable here.
	Hiccup *hiccup.Window `json:"hiccup,omitempty"`
	// ReplicaLag is how far a replica set's replicas trailed their
	// primary over the measured part (postgres-replicas); nil otherwise.
	ReplicaLag *ReplicaLag `json:"replica_lag,omitempty"`
}

// NodeOps is one node's share of a phase. A cluster's or pool's come from
// the node's own counters: they count every client's commands,
// storebench's only when no one else uses the node, and a replica counts
// the writes its primary streams to it. A PostgreSQL replica set's are
// counted at the client (its counters cannot tell reads from writes).
type NodeOps struct {
	Addr string `json:"addr"`
	Role string `json:"role"` // primary, replica, or server (a pool's)
	// Reads and Writes are its GET and SET commands (memcached: cmd_get,
	// cmd_set, a multi-get counting each key); Other any other command.
	Reads  int64 `json:"reads"`
	Writes int64 `json:"writes"`
	Other  int64 `json:"other,omitempty"`
	// Share is Reads+Writes over the sum of every node's Reads+Writes.
	Share float64 `json:"share"`
}

// OpFigures are one kind of operation's share of a phase.
type OpFigures struct {
	Ops            int64            `json:"ops"`
	Errors         map[string]int64 `json:"errors,omitempty"` // by errclass.Class
	ThroughputOpsS float64          `json:"throughput_ops_s"`
	LatencyUs      Latency          `json:"latency_us"`
	// Histogram is encoded as Phase.Histogram (nanoseconds, V2 compressed).
	Histogram string `json:"histogram,omitempty"`
}

// ServerTimeSummary is the difference of a server's cumulative statement
// counters over one phase's measured part, for any target whose store can
// read them (managed or external).
type ServerTimeSummary struct {
	// Source names the counters and what they cover (e.g. Redis counts the
	// whole server, not only storebench's keys).
	Source string `json:"source"`
	// Calls is how many operations the server executed; MeanUs their mean
	// execution time by the server's own clock.
	Calls  int64   `json:"calls"`
	MeanUs float64 `json:"mean_us"`
	// PerCallUs is the server's time per timed client call: its total over
	// the phase divided by the client's successful calls. It equals MeanUs
	// when each call is one operation and the server counted exactly the
	// client's operations; with a pipeline it covers all of the call's ops.
	PerCallUs float64 `json:"per_call_us"`
	// ClientOverheadUs is the client's mean latency minus PerCallUs: what a
	// call costs outside the server's execution, i.e. the driver (encoding,
	// decoding, its buffers and locks), the network round trip (loopback
	// included), the scheduling of client and server threads, and whatever
	// the server does outside the time it counts (see Source: PostgreSQL's
	// executor time leaves out parse, plan and the commit's WAL flush, so a
	// durable write's fsync lands here; Redis leaves out reading and writing
	// the socket).
	ClientOverheadUs float64 `json:"client_overhead_us"`
	// Ops breaks Calls and MeanUs down by operation ("get", "set", "delete", ...).
	Ops map[string]ServerOpTime `json:"ops,omitempty"`
}

// ServerOpTime is one operation's share of a ServerTimeSummary.
type ServerOpTime struct {
	Calls  int64   `json:"calls"`
	MeanUs float64 `json:"mean_us"`
}

// ServerCost is a managed server's resource use over one phase, from /proc,
// summed over all its processes.
type ServerCost struct {
	CPUS       float64 `json:"cpu_s"`
	CPUUsPerOp float64 `json:"cpu_us_per_op"`
	// RSSBytes is the resident memory at the end of the phase (PSS where the
	// kernel offers it, so shared memory counts once); PeakRSSBytes is the
	// sum of the processes' high-water marks since they started.
	RSSBytes     uint64 `json:"rss_bytes"`
	PeakRSSBytes uint64 `json:"peak_rss_bytes"`
	// WriteBytes is what the server's processes made dirty in the page cache
	// (/proc/PID/io write_bytes): the kernel charges whole folios, so a
	// 100-byte write after an fsync can count 256 KiB. DeviceWriteBytes is
	// what the disk holding the data dir really wrote, journal included, but
	// for the whole device: other processes' writes count too.
	WriteBytes       uint64  `json:"write_bytes"`
	WritePerOp       float64 `json:"write_bytes_per_op"`
	Device           string  `json:"device,omitempty"`
	DeviceWriteBytes uint64  `json:"device_write_bytes,omitempty"`
	DeviceWritePerOp float64 `json:"device_write_bytes_per_op,omitempty"`
	CPUCoarse        bool    `json:"cpu_coarse,omitempty"`
	ReadBytes        uint64  `json:"read_bytes"`
	Processes        int     `json:"processes"`
}

// Latency holds the phase's latency figures in microseconds. Percentiles are
// HdrHistogram values (the highest value equivalent to the percentile's
// bucket, within 0.1%); min, max and mean are exact.
type Latency struct {
	P50    float64 `json:"p50"`
	P90    float64 `json:"p90"`
	P99    float64 `json:"p99"`
	P999   float64 `json:"p999"`
	Max    float64 `json:"max"`
	Mean   float64 `json:"mean"`
	Min    float64 `json:"min"`
	Stddev float64 `json:"stddev"`
}

// Warmup says what was excluded from the figures.
type Warmup struct {
	DurationS float64 `json:"duration_s"`
	Ops       int64   `json:"ops"`
}

// OpenLoop describes how well an open-loop (fixed rate) phase kept its
// schedule. Latencies are measured from each operation's intended start, so
// lateness is part of them already.
type OpenLoop struct {
	TargetOpsS float64 `json:"target_ops_s"`
	// LateOps counts operations that started more than 1 ms after their
	// intended start.
	LateOps  int64   `json:"late_ops"`
	MaxLagUs float64 `json:"max_lag_us"`
	// ClientLateOps counts the ops the client itself started more than 1 ms
	// late: after both their intended start and their worker's previous
	// reply (its CPU, the Go scheduler, the engine). The rest of LateOps
	// waited for a slow reply, or for ops queued behind one. ClientMaxLagUs
	// is the largest such delay of the client's own.
	ClientLateOps  int64   `json:"client_late_ops,omitempty"`
	ClientMaxLagUs float64 `json:"client_max_lag_us,omitempty"`
	// UnsentOps counts ops whose intended start fell inside the phase but
	// that were never sent because the phase ended first: the backlog left
	// at the end.
	UnsentOps int64 `json:"unsent_ops,omitempty"`
	// ClientSaturated says the client process kept nearly all the CPUs it
	// may use busy (the phase's saturation warning).
	ClientSaturated bool `json:"client_saturated,omitempty"`
	// WaitSpinS is the CPU time the workers spent yielding in a loop just
	// before intended starts (the end of each wait, as long as the worker's
	// naps have lately woken late, at most 100 µs, for a punctual start):
	// part of ClientCPUS that waited rather than worked. Their yields
	// counted at what one costs the thread with nothing else to run (the
	// wall time of the loops overcounts: a yield runs any other worker's
	// work), at most that wall time.
	WaitSpinS float64 `json:"wait_spin_s,omitempty"`
}

// Meta is what Merge cannot know from the recorders.
type Meta struct {
	Name           string
	Start          time.Time     // wall clock at the measured start
	Duration       time.Duration // measured, warm-up excluded
	WarmupDuration time.Duration
	WarmupOps      int64
	ClientCPU      time.Duration // process CPU over the measured part; <0 if unknown
	OpsPerCall     int           // operations per timed call (pipeline depth); 0 or 1 = one
}

// HistogramUnit is the unit of the values in Phase.Histogram.
const HistogramUnit = "ns"

// Merge merges the recorders of one phase: histograms are added, never
// averaged. The recorders must share one Collector (or have none) and must
// no longer be in use: call Merge after the workers have stopped. Merge marks
// them done and completes the collector's series, stopping its callback.
func Merge(recs []*Recorder, m Meta) Phase {
	p := Phase{Name: m.Name, Workers: len(recs), HistogramUnit: HistogramUnit}
	h := NewHistogram()
	var (
		sum     int64
		minNs   int64 = math.MaxInt64
		maxNs   int64
		clamped int64
		errs    [nClasses]int64
		col     *Collector
		seen    = map[string]bool{}
	)
	for _, r := range recs {
		r.Done()
		if r.col != nil && col == nil {
			col = r.col
		}
		if d := h.Merge(r.hist); d != 0 {
			// Same geometry, so nothing can be dropped; say so if it ever is.
			p.Warnings = append(p.Warnings, fmt.Sprintf("%d latencies were dropped while merging histograms", d))
		}
		p.Ops += r.ops
		sum += r.sumNs
		minNs = min(minNs, r.minNs)
		maxNs = max(maxNs, r.maxNs)
		clamped += r.clamped
		for i, n := range r.errs {
			errs[i] += n
		}
		for _, s := range r.samples {
			if len(p.ErrorSamples) < maxPhaseSamples && !seen[s] {
				seen[s] = true
				p.ErrorSamples = append(p.ErrorSamples, s)
			}
		}
	}
	for i, n := range errs {
		if n > 0 {
			if p.Errors == nil {
				p.Errors = map[string]int64{}
			}
			p.Errors[string(errclass.Classes[i])] = n
		}
	}
	if ok := h.TotalCount(); ok > 0 {
		p.LatencyUs = LatencyOf(h, minNs, maxNs, us(sum)/float64(ok))
	}
	if enc, err := EncodeHistogram(h); err == nil {
		p.Histogram = enc
	} else {
		p.Warnings = append(p.Warnings, "histogram not encoded: "+err.Error())
	}
	if clamped > 0 {
		p.Warnings = append(p.Warnings, fmt.Sprintf("%d latencies above 60 s were recorded as 60 s", clamped))
	}

	p.DurationS = m.Duration.Seconds()
	if !m.Start.IsZero() {
		p.Start = m.Start.UTC().Round(0) // the wall clock only: no monotonic reading in a result
	}
	if m.OpsPerCall > 1 {
		p.OpsPerCall = m.OpsPerCall
		p.Ops *= int64(m.OpsPerCall)
	}
	if p.DurationS > 0 {
		p.ThroughputOpsS = float64(p.Ops) / p.DurationS
	}
	p.Warmup = Warmup{DurationS: m.WarmupDuration.Seconds(), Ops: m.WarmupOps}
	if m.ClientCPU >= 0 {
		p.ClientCPUS = m.ClientCPU.Seconds()
		if p.Ops > 0 {
			p.ClientCPUUsPerOp = float64(m.ClientCPU) / 1e3 / float64(p.Ops)
		}
	}
	if col != nil {
		end := int64((m.Duration + time.Second - 1) / time.Second)
		p.Series = append([]Second(nil), col.finish(end)...)
		if m.OpsPerCall > 1 {
			for i := range p.Series {
				p.Series[i].Ops *= int64(m.OpsPerCall)
			}
		}
	}
	return p
}

// MergeByOp merges the per-kind recorders of one phase: recs[k] holds the
// recorders of kind names[k], one per worker that reported kinds. It
// returns nil when no worker did. m is the phase's Meta: the kinds share its
// duration and pipeline depth.
func MergeByOp(names []string, recs [][]*Recorder, m Meta) map[string]OpFigures {
	if len(recs) == 0 || len(recs[0]) == 0 {
		return nil
	}
	out := make(map[string]OpFigures, len(names))
	for k, name := range names {
		p := Merge(recs[k], Meta{Name: name, Duration: m.Duration, ClientCPU: -1, OpsPerCall: m.OpsPerCall})
		out[name] = OpFigures{Ops: p.Ops, Errors: p.Errors, ThroughputOpsS: p.ThroughputOpsS, LatencyUs: p.LatencyUs, Histogram: p.Histogram}
	}
	return out
}

// LatencyOf is the latency figures of a non-empty histogram of
// nanoseconds, given its exact min and max (ns) and mean (µs), which a
// histogram only approximates.
func LatencyOf(h *hdr.Histogram, minNs, maxNs int64, meanUs float64) Latency {
	// A percentile is its bucket's highest equivalent value, which can lie
	// above the exact max (or below the exact min): clamp so no table
	// shows a p99.9 greater than the max.
	q := func(pct float64) float64 { return us(min(max(h.ValueAtQuantile(pct), minNs), maxNs)) }
	return Latency{
		P50: q(50), P90: q(90), P99: q(99), P999: q(99.9),
		Max: us(maxNs), Mean: meanUs, Min: us(minNs), Stddev: h.StdDev() / 1e3,
	}
}

// EncodeHistogram encodes a histogram as Phase.Histogram is.
func EncodeHistogram(h *hdr.Histogram) (string, error) {
	enc, err := h.Encode(hdr.V2CompressedEncodingCookieBase)
	return string(enc), err
}

// DecodeHistogram decodes Phase.Histogram. Values are in nanoseconds.
func DecodeHistogram(s string) (*hdr.Histogram, error) {
	if s == "" {
		return nil, fmt.Errorf("metrics: empty histogram")
	}
	h, err := hdr.Decode([]byte(s))
	if err != nil {
		return nil, fmt.Errorf("metrics: decode histogram: %w", err)
	}
	return h, nil
}

// DecodeHistogram decodes the phase's histogram. Values are in nanoseconds.
func (p *Phase) DecodeHistogram() (*hdr.Histogram, error) { return DecodeHistogram(p.Histogram) }

// SlowerThan counts the ops (calls, with a pipeline) in the phase's
// histogram that took d or longer.
func (p *Phase) SlowerThan(d time.Duration) (int64, error) {
	h, err := p.DecodeHistogram()
	if err != nil {
		return 0, err
	}
	var n int64
	for _, b := range h.Distribution() {
		if b.From >= d.Nanoseconds() {
			n += b.Count
		}
	}
	return n, nil
}

// ErrorTotal is the number of failed operations of a phase's (or an op
// kind's) errors by class.
func ErrorTotal(errs map[string]int64) int64 {
	var n int64
	for _, v := range errs {
		n += v
	}
	return n
}
