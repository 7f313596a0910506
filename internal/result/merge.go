package result

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/storebench/storebench/internal/metrics"
)

// MergeTolerance is how far apart the shards' measured starts of one phase
// may lie before Merge warns, and how far apart their windows may lie
// before it refuses: beyond it the shards did not really run together (a
// missing --start-at, a slow server start, shards drifting apart over
// cells of counted ops), and the merged throughput, over the union of
// their windows, is lower than while all ran. Within it, a gap between
// two short windows (a counted phase of a few milliseconds) is below what
// two hosts' clocks and the barrier can promise.
const MergeTolerance = time.Second

// Shards are the results of one run's shards, each with the name it was
// read from (for messages), in any order.
type Shards struct {
	Results []*Result
	Names   []string
}

// Merge adds the shards of one run (run --shard I/N, each shard once) into
// one result: ops and errors summed, histograms added bucket by bucket and
// percentiles read from the sum, throughput over the union of the shards'
// measured windows, per-second series aligned by wall clock. Its error is
// one line naming the input at fault; the warnings are what the merged
// result's notes also say.
func Merge(in Shards) (*Result, []string, error) {
	byIndex, err := checkShards(in)
	if err != nil {
		return nil, nil, err
	}
	first := byIndex[0]
	out := *first
	out.Cells, out.Targets, out.Notes, out.Skipped = nil, slices.Clone(first.Targets), nil, slices.Clone(first.Skipped)
	out.ID = "merged-" + first.ID
	out.Command = nil
	out.Shard = &Shard{Count: len(byIndex)}
	var hosts, shardHosts []string
	for _, r := range byIndex {
		out.Shard.Merged = append(out.Shard.Merged, MergedShard{Index: r.Shard.Index, ID: r.ID, Environment: r.Environment,
			StartAt: r.Shard.StartAt, Released: r.Shard.Released, Clock: r.Shard.Clock, Status: r.Status})
		if r.StartedAt.Before(out.StartedAt) {
			out.StartedAt = r.StartedAt
		}
		if r.FinishedAt != nil && (out.FinishedAt == nil || r.FinishedAt.After(*out.FinishedAt)) {
			out.FinishedAt = r.FinishedAt
		}
		out.Status = worseStatus(out.Status, r.Status)
		shardHosts = append(shardHosts, r.Environment.Hostname)
		if !slices.Contains(hosts, r.Environment.Hostname) {
			hosts = append(hosts, r.Environment.Hostname)
		}
	}
	out.Environment.Hostname = strings.Join(hosts, ",")
	var warnings []string
	if w := clockWarning(byIndex, len(hosts)); w != "" {
		warnings = append(warnings, w)
	}
	for ci := range first.Cells {
		cells := make([]*Cell, len(byIndex))
		for i, r := range byIndex {
			cells[i] = &r.Cells[ci]
		}
		c, warn, err := mergeCells(cells, shardHosts)
		if err != nil {
			return nil, nil, err
		}
		out.Cells = append(out.Cells, c)
		warnings = append(warnings, warn...)
	}
	out.Notes = append([]string{fmt.Sprintf("merged from %d shards (storebench merge): ops, errors and histograms summed, throughput over the union of the shards' measured windows", len(byIndex))}, warnings...)
	return &out, warnings, nil
}

// checkShards returns the shards in index order, or why they are not the
// shards of one run.
func checkShards(in Shards) ([]*Result, error) {
	if len(in.Results) == 0 {
		return nil, errors.New("no result to merge")
	}
	name := func(i int) string { return in.Names[i] }
	first := in.Results[0]
	if first.Shard == nil || len(first.Shard.Merged) > 0 {
		return nil, fmt.Errorf("%s is not a shard of a run (run --shard I/N makes one)", name(0))
	}
	n := first.Shard.Count
	// Nothing is sized by n, which the file says: a missing shard is found
	// among the first len(in.Results)+1 indexes.
	byIndex := map[int]*Result{}
	from := map[int]string{}
	firstScenario, _ := json.Marshal(first.Scenario)
	for i, r := range in.Results {
		if r.Shard == nil || len(r.Shard.Merged) > 0 || r.Shard.Count < 1 || r.Shard.Index < 0 || r.Shard.Index >= r.Shard.Count {
			return nil, fmt.Errorf("%s is not a shard of a run (run --shard I/N makes one)", name(i))
		}
		scen, _ := json.Marshal(r.Scenario)
		switch {
		case r.Shard.Count != n:
			return nil, fmt.Errorf("%s is shard %d/%d, %s shard %d/%d: not the shards of one run", name(i), r.Shard.Index, r.Shard.Count, name(0), first.Shard.Index, n)
		case r.Storebench.Version != first.Storebench.Version || r.Storebench.Commit != first.Storebench.Commit:
			return nil, fmt.Errorf("%s was made by storebench %s (%s), %s by %s (%s): merge shards of one build", name(i), r.Storebench.Version, r.Storebench.Commit, name(0), first.Storebench.Version, first.Storebench.Commit)
		case r.Seed != first.Seed:
			return nil, fmt.Errorf("%s has seed %d, %s seed %d: not the shards of one run", name(i), r.Seed, name(0), first.Seed)
		case r.Suite != first.Suite || r.Quick != first.Quick || r.Repeat != first.Repeat || !bytes.Equal(scen, firstScenario):
			return nil, fmt.Errorf("%s ran another scenario than %s: not the shards of one run", name(i), name(0))
		case !sameInstant(r.Shard.StartAt, first.Shard.StartAt):
			return nil, fmt.Errorf("%s was started at another --start-at than %s: not the shards of one run", name(i), name(0))
		case byIndex[r.Shard.Index] != nil:
			return nil, fmt.Errorf("shard %d/%d is given twice (%s and %s)", r.Shard.Index, n, from[r.Shard.Index], name(i))
		}
		byIndex[r.Shard.Index], from[r.Shard.Index] = r, name(i)
	}
	shards := make([]*Result, 0, len(in.Results))
	for i := range n {
		r := byIndex[i]
		if r == nil {
			return nil, fmt.Errorf("shard %d/%d is missing: give all %d shards' results", i, n, n)
		}
		if len(r.Cells) != len(first.Cells) {
			return nil, fmt.Errorf("%s has %d cells, %s %d: merge finished shards of one run", from[i], len(r.Cells), from[0], len(first.Cells))
		}
		for ci, c := range r.Cells {
			if f := first.Cells[ci]; c.ID != f.ID || c.Repeat != f.Repeat {
				return nil, fmt.Errorf("%s's cell %d is %s, %s's is %s: not the shards of one run", from[i], ci+1, c.Label(), from[0], f.Label())
			}
		}
		shards = append(shards, r)
	}
	for _, c := range first.Cells {
		if c.Payments != nil || c.Sessions != nil || c.Durability != nil || c.CacheAside != nil || c.Capacity != nil {
			return nil, fmt.Errorf("cell %s has a %s summary of its own, which merge cannot add up: run that workload unsharded", c.Label(), c.Workload)
		}
	}
	for i, r := range shards {
		if err := checkFigures(r, n); err != nil {
			return nil, fmt.Errorf("%s: %v", from[i], err)
		}
	}
	return shards, nil
}

// clockWarning says when shards on several hosts had a clock no daemon
// disciplined: their seconds may then be apart by more than the barrier's
// precision, and the series' alignment with them.
func clockWarning(shards []*Result, hosts int) string {
	if hosts < 2 {
		return "" // one clock: the shards' instants compare exactly
	}
	var unsynced []string
	for _, r := range shards {
		if c := r.Shard.Clock; c == nil || !c.Synchronized {
			unsynced = append(unsynced, fmt.Sprintf("%d (%s)", r.Shard.Index, r.Environment.Hostname))
		}
	}
	if len(unsynced) == 0 {
		return ""
	}
	return fmt.Sprintf("shards on several hosts, and the clock of shard %s is not known to be synchronized (NTP): --start-at and the per-second series align only as well as the clocks agree", strings.Join(unsynced, ", "))
}

func sameInstant(a, b *time.Time) bool {
	return a == nil && b == nil || a != nil && b != nil && a.Equal(*b)
}

// worseStatus is the status of a merge of runs of status a and b: complete
// only when both are.
func worseStatus(a, b string) string {
	rank := map[string]int{StatusComplete: 0, StatusRunning: 1, StatusInterrupted: 2, StatusFailed: 3}
	if rank[b] > rank[a] {
		return b
	}
	return a
}

// mergeCells merges one cell of every shard.
func mergeCells(cells []*Cell, hosts []string) (Cell, []string, error) {
	first := cells[0]
	out := *first
	out.Phases, out.Error = nil, ""
	params, err := mergeParams(cells)
	if err != nil {
		return Cell{}, nil, err
	}
	out.Params = params
	end := first.StartedAt.Add(time.Duration(first.Seconds * float64(time.Second)))
	var errs []string
	for i, c := range cells {
		if c.StartedAt.Before(out.StartedAt) {
			out.StartedAt = c.StartedAt
		}
		if e := c.StartedAt.Add(time.Duration(c.Seconds * float64(time.Second))); e.After(end) {
			end = e
		}
		if c.Status != CellOK {
			out.Status = c.Status
			errs = append(errs, fmt.Sprintf("shard %d: %s", i+1, c.Error))
		}
		if len(c.Phases) != len(first.Phases) {
			return Cell{}, nil, fmt.Errorf("cell %s: shard %d measured %d phases, shard 1 %d: merge finished shards of one run", first.Label(), i+1, len(c.Phases), len(first.Phases))
		}
	}
	out.Error = strings.Join(errs, "; ")
	out.Seconds = end.Sub(out.StartedAt).Seconds()
	var warnings []string
	for pi := range first.Phases {
		phases := make([]*metrics.Phase, len(cells))
		for i, c := range cells {
			phases[i] = &c.Phases[pi]
			if phases[i].Name != first.Phases[pi].Name {
				return Cell{}, nil, fmt.Errorf("cell %s: shard %d's phase %d is %s, shard 1's %s", first.Label(), i+1, pi+1, phases[i].Name, first.Phases[pi].Name)
			}
		}
		p, warn, err := mergePhases(phases, hosts)
		if err != nil {
			return Cell{}, nil, fmt.Errorf("cell %s, phase %s: %v", first.Label(), first.Phases[pi].Name, err)
		}
		if warn != "" {
			warnings = append(warnings, fmt.Sprintf("cell %s, phase %s: %s", first.Label(), p.Name, warn))
		}
		out.Phases = append(out.Phases, p)
	}
	return out, warnings, nil
}

// shareParams are the parameters a shard records its share of (workload.Load.Share):
// the merge records their sum, the whole run's.
var shareParams = []string{"clients", "rate", "ops", "warmup_ops"}

// mergeParams is the whole run's parameters: the shares summed, the shard
// dropped, every other parameter the same in every shard.
func mergeParams(cells []*Cell) (map[string]any, error) {
	out := map[string]any{}
	for k, v := range cells[0].Params {
		if k == "shard" {
			continue
		}
		out[k] = v
	}
	for i, c := range cells[1:] {
		for k, v := range c.Params {
			switch {
			case k == "shard":
			case slices.Contains(shareParams, k):
				a, okA := number(out[k])
				b, okB := number(v)
				if !okA || !okB {
					return nil, fmt.Errorf("cell %s: parameter %s is not a number in shard %d", c.Label(), k, i+2)
				}
				out[k] = a + b
			case fmt.Sprint(v) != fmt.Sprint(cells[0].Params[k]):
				return nil, fmt.Errorf("cell %s: parameter %s is %v in shard %d, %v in shard 1: not the shards of one run", c.Label(), k, v, i+2, cells[0].Params[k])
			}
		}
	}
	return out, nil
}

func number(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	}
	return 0, false
}

// mergePhases merges one phase of every shard; the warning, if any, says
// the shards' windows were far apart.
func mergePhases(ps []*metrics.Phase, hosts []string) (metrics.Phase, string, error) {
	first := ps[0]
	out := metrics.Phase{Name: first.Name, OpsPerCall: first.OpsPerCall, HistogramUnit: first.HistogramUnit, ClientIO: first.ClientIO, NoStore: first.NoStore}
	from, to, aligned := window(ps)
	warning := ""
	if aligned {
		if err := checkOverlap(ps); err != nil {
			return out, "", err
		}
		if spread := startSpread(ps); spread > MergeTolerance {
			warning = fmt.Sprintf("the shards' measured starts lie %v apart (more than %v): the merged throughput, over the union of their windows, is below what they reached together", spread.Round(time.Millisecond), MergeTolerance)
		}
		out.Start = from
	}
	out.DurationS = to.Sub(from).Seconds()
	samples := map[string]bool{}
	var clientCPU float64
	for i, p := range ps {
		out.Workers += p.Workers
		out.Ops += p.Ops
		out.Errors = addCounts(out.Errors, p.Errors)
		for _, s := range p.ErrorSamples {
			if len(out.ErrorSamples) < 10 && !samples[s] {
				samples[s] = true
				out.ErrorSamples = append(out.ErrorSamples, s)
			}
		}
		out.Warmup.DurationS = max(out.Warmup.DurationS, p.Warmup.DurationS)
		out.Warmup.Ops += p.Warmup.Ops
		clientCPU += p.ClientCPUS
		if p.ClientIO != out.ClientIO {
			out.ClientIO = "mixed"
		}
		for _, w := range p.Warnings {
			out.Warnings = appendNew(out.Warnings, fmt.Sprintf("shard %d: %s", i+1, w))
		}
		for _, n := range p.Notes {
			out.Notes = appendNew(out.Notes, n)
		}
		out.OpenLoop = addOpenLoop(out.OpenLoop, p.OpenLoop)
	}
	if out.DurationS > 0 {
		out.ThroughputOpsS = float64(out.Ops) / out.DurationS
	}
	out.ClientCPUS = clientCPU
	if out.Ops > 0 {
		out.ClientCPUUsPerOp = clientCPU * 1e6 / float64(out.Ops)
	}
	var err error
	if out.Histogram, out.LatencyUs, err = mergeHistograms(ps, func(p *metrics.Phase) (string, metrics.Latency) { return p.Histogram, p.LatencyUs }); err != nil {
		return out, "", err
	}
	if out.ByOp, err = mergeByOp(ps, out.DurationS); err != nil {
		return out, "", err
	}
	out.Server = mergeServerCosts(ps, hosts, func(p *metrics.Phase) *metrics.ServerCost { return p.Server }, out.Ops)
	out.Companion = mergeServerCosts(ps, hosts, func(p *metrics.Phase) *metrics.ServerCost { return p.Companion }, out.Ops)
	out.Series = mergeSeries(ps, from, aligned)
	if first.ServerTime != nil {
		out.Notes = appendNew(out.Notes, "server time not merged: a shared server's counters count every shard's ops in each shard")
	}
	if first.Nodes != nil {
		out.Notes = appendNew(out.Notes, "ops per node not merged: a node's counters count every shard's ops in each shard")
	}
	if first.ReplicaLag != nil {
		out.Notes = appendNew(out.Notes, "replica lag not merged: each shard sampled the same replicas, under every shard's writes")
	}
	if first.Placement != nil {
		out.Notes = appendNew(out.Notes, "placement not merged: each shard's machine has its own CPUs")
	}
	if first.Hiccup != nil {
		out.Notes = appendNew(out.Notes, "platform stalls (hiccup) not merged: each shard's machine stalls on its own; see the shards' results")
	}
	return out, warning, nil
}

// window is the union of the shards' measured windows, or, when a shard
// recorded no wall-clock start, the longest of them from the zero instant
// (aligned false: the series then line up by their own seconds).
func window(ps []*metrics.Phase) (from, to time.Time, aligned bool) {
	aligned = true
	for _, p := range ps {
		if p.Start.IsZero() {
			aligned = false
		}
	}
	if !aligned {
		var longest float64
		for _, p := range ps {
			longest = max(longest, p.DurationS)
		}
		return time.Time{}, time.Time{}.Add(seconds(longest)), false
	}
	from, to = ps[0].Start, ps[0].Start.Add(seconds(ps[0].DurationS))
	for _, p := range ps[1:] {
		if p.Start.Before(from) {
			from = p.Start
		}
		if end := p.Start.Add(seconds(p.DurationS)); end.After(to) {
			to = end
		}
	}
	return from, to, true
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// checkOverlap refuses shards whose measured windows lie more than
// MergeTolerance apart: they did not run together, so their sum is no
// run's figure.
func checkOverlap(ps []*metrics.Phase) error {
	latestStart, earliestEnd := ps[0].Start, ps[0].Start.Add(seconds(ps[0].DurationS))
	for _, p := range ps[1:] {
		if p.Start.After(latestStart) {
			latestStart = p.Start
		}
		if end := p.Start.Add(seconds(p.DurationS)); end.Before(earliestEnd) {
			earliestEnd = end
		}
	}
	if latestStart.Sub(earliestEnd) > MergeTolerance {
		return fmt.Errorf("the shards' measured windows do not overlap (one ended %s, another began %s, more than %v later): start the shards together, with one --start-at", earliestEnd.Format(time.RFC3339Nano), latestStart.Format(time.RFC3339Nano), MergeTolerance)
	}
	return nil
}

func startSpread(ps []*metrics.Phase) time.Duration {
	lo, hi := ps[0].Start, ps[0].Start
	for _, p := range ps[1:] {
		if p.Start.Before(lo) {
			lo = p.Start
		}
		if p.Start.After(hi) {
			hi = p.Start
		}
	}
	return hi.Sub(lo)
}

// mergeHistograms adds the shards' histograms (those of phases with
// successes) and reads the latency figures from the sum; min and max are
// the shards' extremes and the mean their count-weighted mean, exact as
// the shards' own were.
func mergeHistograms(ps []*metrics.Phase, of func(*metrics.Phase) (string, metrics.Latency)) (string, metrics.Latency, error) {
	sum := metrics.NewHistogram()
	var (
		minNs   int64 = math.MaxInt64
		maxNs   int64
		meanSum float64
		counted bool
	)
	for i, p := range ps {
		enc, lat := of(p)
		if enc == "" {
			continue
		}
		h, err := metrics.DecodeHistogram(enc)
		if err != nil {
			return "", metrics.Latency{}, fmt.Errorf("shard %d: %v", i+1, err)
		}
		if dropped := sum.Merge(h); dropped != 0 {
			return "", metrics.Latency{}, fmt.Errorf("shard %d: %d latencies outside the histogram's range (another geometry?)", i+1, dropped)
		}
		if h.TotalCount() == 0 {
			continue
		}
		counted = true
		minNs = min(minNs, nanos(lat.Min))
		maxNs = max(maxNs, nanos(lat.Max))
		meanSum += lat.Mean * float64(h.TotalCount())
	}
	enc, err := metrics.EncodeHistogram(sum)
	if err != nil {
		return "", metrics.Latency{}, fmt.Errorf("encode the merged histogram: %v", err)
	}
	if !counted {
		return enc, metrics.Latency{}, nil
	}
	return enc, metrics.LatencyOf(sum, minNs, maxNs, meanSum/float64(sum.TotalCount())), nil
}

func nanos(us float64) int64 { return int64(math.Round(us * 1e3)) }

// mergeByOp merges the per-kind figures of the shards.
func mergeByOp(ps []*metrics.Phase, durationS float64) (map[string]metrics.OpFigures, error) {
	if ps[0].ByOp == nil {
		return nil, nil
	}
	out := map[string]metrics.OpFigures{}
	for kind := range ps[0].ByOp {
		var f metrics.OpFigures
		for _, p := range ps {
			k := p.ByOp[kind]
			f.Ops += k.Ops
			f.Errors = addCounts(f.Errors, k.Errors)
		}
		var err error
		f.Histogram, f.LatencyUs, err = mergeHistograms(ps, func(p *metrics.Phase) (string, metrics.Latency) {
			return p.ByOp[kind].Histogram, p.ByOp[kind].LatencyUs
		})
		if err != nil {
			return nil, fmt.Errorf("%s: %v", kind, err)
		}
		if durationS > 0 {
			f.ThroughputOpsS = float64(f.Ops) / durationS
		}
		out[kind] = f
	}
	return out, nil
}

func addCounts(dst, src map[string]int64) map[string]int64 {
	for k, n := range src {
		if dst == nil {
			dst = map[string]int64{}
		}
		dst[k] += n
	}
	return dst
}

func appendNew(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

// addOpenLoop adds one shard's schedule keeping to the sum: the target
// rates and late counts add up, the lags are the worst shard's.
func addOpenLoop(sum, o *metrics.OpenLoop) *metrics.OpenLoop {
	if o == nil {
		return sum
	}
	if sum == nil {
		sum = &metrics.OpenLoop{}
	}
	sum.TargetOpsS += o.TargetOpsS
	sum.LateOps += o.LateOps
	sum.MaxLagUs = max(sum.MaxLagUs, o.MaxLagUs)
	sum.ClientLateOps += o.ClientLateOps
	sum.ClientMaxLagUs = max(sum.ClientMaxLagUs, o.ClientMaxLagUs)
	sum.UnsentOps += o.UnsentOps
	sum.ClientSaturated = sum.ClientSaturated || o.ClientSaturated
	sum.WaitSpinS += o.WaitSpinS
	return sum
}

// mergeServerCosts sums what the shards' managed servers spent: every
// shard starts servers of its own, so their processes add up. A device's
// writes are the whole device's, so shards reading one device of one host
// count it once (the largest reading), summed over hosts.
func mergeServerCosts(ps []*metrics.Phase, hosts []string, of func(*metrics.Phase) *metrics.ServerCost, ops int64) *metrics.ServerCost {
	var sum *metrics.ServerCost
	devices := map[[2]string]uint64{}
	for i, p := range ps {
		c := of(p)
		if c == nil {
			continue
		}
		if sum == nil {
			sum = &metrics.ServerCost{Device: c.Device}
		}
		sum.CPUS += c.CPUS
		sum.RSSBytes += c.RSSBytes
		sum.PeakRSSBytes += c.PeakRSSBytes
		sum.WriteBytes += c.WriteBytes
		sum.ReadBytes += c.ReadBytes
		sum.Processes += c.Processes
		sum.CPUCoarse = sum.CPUCoarse || c.CPUCoarse
		if c.Device != sum.Device {
			sum.Device = "several"
		}
		dev := [2]string{hosts[i], c.Device}
		devices[dev] = max(devices[dev], c.DeviceWriteBytes)
	}
	if sum == nil {
		return nil
	}
	for _, n := range devices {
		sum.DeviceWriteBytes += n
	}
	if ops > 0 {
		sum.CPUUsPerOp = sum.CPUS * 1e6 / float64(ops)
		sum.WritePerOp = float64(sum.WriteBytes) / float64(ops)
		sum.DeviceWritePerOp = float64(sum.DeviceWriteBytes) / float64(ops)
	}
	return sum
}

// mergeSeries lines the shards' seconds up by wall clock: a shard's second
// T covers [start+T, start+T+1), and goes to the merged second its start
// falls in (so within a second of the truth, the shards' starts being
// apart by a fraction of one). Ops, errors and backlogs add up, the mean
// is weighted by successes, the max is the highest; the series keep no
// histograms, so p50 and p99 are the highest shard's, an upper bound of
// the merged second's (a quantile of a mixture is at most its parts').
func mergeSeries(ps []*metrics.Phase, from time.Time, aligned bool) []metrics.Second {
	bySecond := map[int64]*metrics.Second{}
	weights := map[int64]float64{}
	for _, p := range ps {
		var offset time.Duration
		if aligned {
			offset = p.Start.Sub(from)
		}
		for _, s := range p.Series {
			t := int64((offset + time.Duration(s.T)*time.Second) / time.Second)
			m := bySecond[t]
			if m == nil {
				m = &metrics.Second{T: t}
				bySecond[t] = m
			}
			m.Ops += s.Ops
			m.Errors += s.Errors
			m.Backlog += s.Backlog
			m.P50, m.P99, m.Max = max(m.P50, s.P50), max(m.P99, s.P99), max(m.Max, s.Max)
			ok := float64(s.Ops - s.Errors)
			m.Mean += s.Mean * ok
			weights[t] += ok
		}
	}
	out := make([]metrics.Second, 0, len(bySecond))
	for t, m := range bySecond {
		if weights[t] > 0 {
			m.Mean /= weights[t]
		}
		out = append(out, *m)
	}
	slices.SortFunc(out, func(a, b metrics.Second) int { return int(a.T - b.T) })
	return out
}
