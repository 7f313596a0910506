package report

import (
	"cmp"
	"encoding/csv"
	"fmt"
	"github.com/storebench/storebench/internal/doctor"
	"github.com/storebench/storebench/internal/hiccup"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/storebench/storebench/internal/metrics"
	"github.com/storebench/storebench/internal/result"
	"github.com/storebench/storebench/internal/result/capacity"
	"github.com/storebench/storebench/internal/result/durability"
)

// CSVColumns are the CSV report's columns, in order. They are stable: new
// figures become new metric names (new rows), never new columns.
//
//	run_id       the run's id (results/<run_id>/result.json)
//	cell_id      the cell's id: target/workload/param=value…, the key compare matches on
//	target       the target's name: store[:profile] or its label
//	store        the store kind (memory, files, sqlite, postgres, redis, memcached, …)
//	workload     the workload type: kv, web, …
//	entry        the scenario's name for the workload entry (the type unless named)
//	params       the cell's parameters, "name=value" separated by spaces, sorted by name
//	cell_status  ok or failed
//	phase        the phase (write, read, …); empty for cell-level metrics
//	metric       the figure's name, see below
//	value        the figure, a plain decimal number (no exponent, no thousands separator)
//	unit         count, s, ms, ops/s, us, us/op, bytes, bytes/op, cores, fraction (0 to 1), bool (1 or 0)
//
// Metrics of every phase: ops, errors, duration_s, throughput_ops_s,
// latency_p50_us, latency_p90_us, latency_p99_us, latency_p999_us,
// latency_max_us, latency_mean_us, latency_min_us, latency_stddev_us,
// workers, warmup_duration_s, warmup_ops, client_cpu_s, client_cpu_us_per_op.
// Only where they apply: errors_<class> (timeout, conflict, unavailable,
// mismatch, other) when non-zero; server_cpu_s, server_cpu_us_per_op,
// server_rss_bytes, server_peak_rss_bytes, server_write_bytes,
// server_write_bytes_per_op, server_read_bytes for managed servers;
// open_loop_target_ops_s, open_loop_late_ops, open_loop_max_lag_us for
// open-loop phases; for phases of mixed operations (mix), per kind <op>
// (get, set): op_<op>_ops, op_<op>_errors, op_<op>_throughput_ops_s,
// op_<op>_latency_p50_us, _p90_us, _p95_us (from its histogram), _p99_us, _p999_us, _max_us and _mean_us
// (the op's own figures, same conventions as the phase's); placement_same_cpu, placement_samples and, per CPU N,
// placement_client_cpuN_share and placement_server_cpuN_share where the
// phase recorded where client and server ran; server_time_calls, server_time_mean_us,
// server_time_per_call_us, server_time_client_overhead_us and, per operation,
// server_time_<op>_calls and server_time_<op>_mean_us where the store reports
// its own execution time; node_<host:port>_reads, _writes and _share per
// node of a cluster or pool (redis-cluster, memcached-pool). Every cell also has cell_seconds (phase empty): the wall
// time of the whole cell, preparation included.
//
// Cell-level figures of the workloads with sections of their own (phase
// empty): payments_committed, payments_committed_per_s, payments_steady_per_s,
// payments_steady_cv, payments_declined and payments_declined_<reason>,
// payments_retries, payments_errors, payments_deletes, payments_invariants_ok
// (1 or 0); durability_trials, durability_trials_asked, durability_acked,
// durability_lost_max, durability_lost_mean, durability_loss_trials,
// durability_lost_all_trials, durability_window_max_s,
// durability_window_max_writes, durability_recovery_mean_s,
// durability_recovery_max_s (and for a cell that killed one node of a
// cluster per trial durability_node_lost_killed, durability_node_lost_other,
// durability_node_outage_errors: over its trials; for a power-cut cell durability_fs_writes,
// durability_fs_{plain,mount}_{p50,p99,mean}_us: the filesystem's own
// cost); cache_aside_hit_ratio,
// cache_aside_db_queries_per_s, cache_aside_db_queries_per_request,
// cache_aside_stale and, per SLO the cell found a capacity at (e.g.
// _at_p99<=10ms), cache_aside_capacity_ops_s_at_<slo>,
// cache_aside_capacity_at_least_at_<slo> (1 or 0),
// cache_aside_capacity_hit_ratio_at_<slo> and
// cache_aside_capacity_db_queries_per_request_at_<slo>; for a cell that
// searched its capacity (capacity, cache-aside with an slo), per SLO
// capacity_found_at_<slo> (1 or 0) and, when found, capacity_ops_s_at_<slo>,
// capacity_at_least_at_<slo> (1 or 0), over a trace capacity_speed_at_<slo>
// (the rate as a speed factor of the trace), capacity_p50_us_at_<slo>,
// capacity_p99_us_at_<slo>, capacity_client_cpu_us_per_op_at_<slo>,
// capacity_server_cpu_us_per_op_at_<slo> (a managed server's) and with a
// needed rate capacity_need_ops_s_at_<slo>,
// capacity_cores_needed_extrapolated_at_<slo> (an extrapolation) and
// capacity_need_beyond_capacity_at_<slo> (1 or 0), or when none was found
// capacity_lowest_tried_ops_s_at_<slo> and capacity_passed_once_ops_s_at_<slo>
// (when a step passed but no confirmation did); with a USL fit (a model, not
// a measurement) usl_lambda_ops_s, usl_sigma, usl_kappa, usl_peak_clients,
// usl_peak_ops_s (when it peaks) and usl_rmse_ops_s; for a sessions phase B cell sessions_stale,
// sessions_lost, sessions_linger_max_s, sessions_end_rows, sessions_end_bytes
// and, for PostgreSQL, sessions_peak_dead_tuples, sessions_hot_ratio and
// sessions_autovacuum_runs.
var CSVColumns = []string{"run_id", "cell_id", "target", "store", "workload", "entry", "params", "cell_status", "phase", "metric", "value", "unit"}

// CSV writes one row per cell × phase × metric, with the header CSVColumns.
func CSV(w io.Writer, r *result.Result) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(CSVColumns); err != nil {
		return err
	}
	storeOf := map[string]string{}
	for _, t := range r.Targets {
		storeOf[t.Name] = t.Store
	}
	// The machine check's figures are the run's, in rows of no cell.
	for _, m := range machineMetrics(r.Machine) {
		if err := cw.Write([]string{r.ID, "", "", "", "", "", "", "", "", m.name, m.value, m.unit}); err != nil {
			return err
		}
	}
	for _, v := range r.Assertions {
		if v.Cell != "" {
			continue // in its cell's rows
		}
		for _, m := range assertMetrics(v) {
			if err := cw.Write([]string{r.ID, "", "", "", "", "", "", "", "", m.name, m.value, m.unit}); err != nil {
				return err
			}
		}
	}
	for i := range r.Cells {
		c := &r.Cells[i]
		params := paramsText(c.Params)
		if c.Repeat > 0 { // repeats share cell_id: their round tells their rows apart
			params = strings.TrimSpace(params + " repeat=" + strconv.Itoa(c.Repeat))
		}
		row := func(phase, metric string, value, unit string) error {
			return cw.Write([]string{r.ID, c.ID, c.Target, storeOf[c.Target], c.Workload, entryName(c), params, c.Status, phase, metric, value, unit})
		}
		if err := row("", "cell_seconds", exact(c.Seconds), "s"); err != nil {
			return err
		}
		for _, m := range cellMetrics(c, r) {
			if err := row("", m.name, m.value, m.unit); err != nil {
				return err
			}
		}
		for _, v := range r.Assertions {
			if v.Cell != c.ID || v.Repeat != c.Repeat {
				continue
			}
			for _, m := range assertMetrics(v) {
				if err := row(v.Phase, m.name, m.value, m.unit); err != nil {
					return err
				}
			}
		}
		for j := range c.Phases {
			for _, m := range phaseMetrics(&c.Phases[j]) {
				if err := row(c.Phases[j].Name, m.name, m.value, m.unit); err != nil {
					return err
				}
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

type csvMetric struct{ name, value, unit string }

// csvLatency are the latency figures a phase and each of its ops have:
// pre+latency_p50_us, _p90_us, _p99_us, _p999_us, _max_us and _mean_us.
func csvLatency(pre string, l metrics.Latency) []csvMetric {
	f := floatMetric
	return []csvMetric{
		f(pre+"latency_p50_us", l.P50, "us"),
		f(pre+"latency_p90_us", l.P90, "us"),
		f(pre+"latency_p99_us", l.P99, "us"),
		f(pre+"latency_p999_us", l.P999, "us"),
		f(pre+"latency_max_us", l.Max, "us"),
		f(pre+"latency_mean_us", l.Mean, "us"),
	}
}

func floatMetric(name string, v float64, unit string) csvMetric {
	return csvMetric{name, exact(v), unit}
}

func intMetric(name string, v int64, unit string) csvMetric {
	return csvMetric{name, strconv.FormatInt(v, 10), unit}
}

// boolMetric is a yes or no as 1 or 0, unit bool.
func boolMetric(name string, v bool) csvMetric {
	if v {
		return csvMetric{name, "1", "bool"}
	}
	return csvMetric{name, "0", "bool"}
}

// phaseMetrics lists a phase's figures in the CSV's order.
func phaseMetrics(p *metrics.Phase) []csvMetric {
	f, i := floatMetric, intMetric
	u := func(name string, v uint64, unit string) csvMetric {
		return csvMetric{name, strconv.FormatUint(v, 10), unit}
	}
	l := p.LatencyUs
	out := []csvMetric{
		i("ops", p.Ops, "count"),
		i("errors", errorCount(p), "count"),
	}
	for _, class := range sortedKeys(p.Errors) {
		if p.Errors[class] > 0 {
			out = append(out, i("errors_"+class, p.Errors[class], "count"))
		}
	}
	out = append(out,
		f("duration_s", p.DurationS, "s"),
		f("throughput_ops_s", p.ThroughputOpsS, "ops/s"),
	)
	out = append(out, csvLatency("", l)...)
	out = append(out,
		f("latency_min_us", l.Min, "us"),
		f("latency_stddev_us", l.Stddev, "us"),
		i("workers", int64(p.Workers), "count"),
		f("warmup_duration_s", p.Warmup.DurationS, "s"),
		i("warmup_ops", p.Warmup.Ops, "count"),
		f("client_cpu_s", p.ClientCPUS, "s"),
		f("client_cpu_us_per_op", p.ClientCPUUsPerOp, "us/op"),
	)
	if p.ClientIO != "" { // 1: blocked in read(2), a thread per connection; 0: Go's poller or mixed
		out = append(out, boolMetric("client_io_blocking", p.ClientIO == "blocking"))
	}
	out = append(out, byOpMetrics(p)...)
	if s := p.Server; s != nil {
		out = append(out,
			f("server_cpu_s", s.CPUS, "s"),
			f("server_cpu_us_per_op", s.CPUUsPerOp, "us/op"),
			u("server_rss_bytes", s.RSSBytes, "bytes"),
			u("server_peak_rss_bytes", s.PeakRSSBytes, "bytes"),
			u("server_write_bytes", s.WriteBytes, "bytes"),
			f("server_write_bytes_per_op", s.WritePerOp, "bytes/op"),
			u("server_read_bytes", s.ReadBytes, "bytes"),
		)
	}
	if st := p.ServerTime; st != nil {
		out = append(out,
			i("server_time_calls", st.Calls, "count"),
			f("server_time_mean_us", st.MeanUs, "us"),
			f("server_time_per_call_us", st.PerCallUs, "us"),
			f("server_time_client_overhead_us", st.ClientOverheadUs, "us"),
		)
		for _, op := range sortedKeys(st.Ops) {
			out = append(out,
				i("server_time_"+op+"_calls", st.Ops[op].Calls, "count"),
				f("server_time_"+op+"_mean_us", st.Ops[op].MeanUs, "us"),
			)
		}
	}
	for _, n := range p.Nodes { // a cluster's or pool's nodes: node_<host:port>_reads …
		out = append(out,
			i("node_"+n.Addr+"_reads", n.Reads, "count"),
			i("node_"+n.Addr+"_writes", n.Writes, "count"),
			f("node_"+n.Addr+"_share", n.Share, "fraction"))
	}
	if l := p.ReplicaLag; l != nil { // a replica set's lag over the phase's samples
		out = append(out,
			i("replica_lag_samples", int64(l.Samples), "count"),
			i("replica_lag_streaming", int64(l.Streaming), "count"),
			f("replica_lag_bytes_p50", l.Bytes.P50, "bytes"),
			f("replica_lag_bytes_max", l.Bytes.Max, "bytes"),
			f("replica_lag_catch_up_ms", l.CatchUpMs, "ms"))
		if l.TimedSamples > 0 {
			out = append(out,
				f("replica_lag_replay_p50_ms", l.ReplayMs.P50, "ms"),
				f("replica_lag_replay_max_ms", l.ReplayMs.Max, "ms"),
				f("replica_lag_flush_max_ms", l.FlushMs.Max, "ms"))
		}
	}
	return append(out, scheduleMetrics(p)...)
}

// assertMetrics are an assertion verdict's rows: assert[EXPR]_measured
// (in the assertion's unit) and assert[EXPR]_pass; a verdict of no cell
// (an assertion that judged nothing) has only _pass.
func assertMetrics(v result.Assertion) []csvMetric {
	name := "assert[" + v.Expr + "]"
	pass := boolMetric(name+"_pass", v.Pass)
	if v.Cell == "" {
		return []csvMetric{pass}
	}
	return []csvMetric{floatMetric(name+"_measured", v.Measured, strings.ReplaceAll(cmp.Or(v.Unit, "count"), "µ", "u")), pass}
}

// machineMetrics are the brief machine check's figures (the machine
// section's table), none without one.
func machineMetrics(m *doctor.Report) []csvMetric {
	if m == nil {
		return nil
	}
	f := floatMetric
	var out []csvMetric
	for _, w := range []struct {
		name string
		f    hiccup.Figures
	}{{"machine_idle_wake", m.IdleWake}, {"machine_tick_wake", m.TickWake}} {
		if w.f.Wakes > 0 {
			out = append(out, f(w.name+"_p50_us", w.f.P50, "us"), f(w.name+"_p99_us", w.f.P99, "us"), f(w.name+"_max_us", w.f.Max, "us"))
		}
	}
	for _, rt := range []struct {
		name string
		r    *doctor.RoundTrips
	}{{"machine_rtt_same_cpu", m.RTTSameCPU}, {"machine_rtt_across_cpus", m.RTTAcrossCPUs}} {
		if rt.r != nil && rt.r.Error == "" {
			out = append(out, f(rt.name+"_p50_us", rt.r.P50, "us"), f(rt.name+"_p99_us", rt.r.P99, "us"), f(rt.name+"_max_us", rt.r.Max, "us"))
		}
	}
	return append(out, f("machine_steal_pct", m.StealPct, "percent"))
}

// scheduleMetrics are an open-loop phase's lateness and where client and
// server ran.
func scheduleMetrics(p *metrics.Phase) []csvMetric {
	f, i := floatMetric, intMetric
	var out []csvMetric
	if o := p.OpenLoop; o != nil {
		out = append(out,
			f("open_loop_target_ops_s", o.TargetOpsS, "ops/s"),
			i("open_loop_late_ops", o.LateOps, "count"),
			f("open_loop_max_lag_us", o.MaxLagUs, "us"),
		)
	}
	if h := p.Hiccup; h != nil && h.All.Wakes > 0 { // the platform's stalls over the phase
		out = append(out,
			i("hiccup_cpus", int64(len(h.PerCPU)), "count"),
			i("hiccup_wakes", h.All.Wakes, "count"),
			f("hiccup_p50_us", h.All.P50, "us"),
			f("hiccup_p99_us", h.All.P99, "us"),
			f("hiccup_p99_9_us", h.All.P999, "us"),
			f("hiccup_max_us", h.All.Max, "us"),
			f("hiccup_stalled_ms", h.All.StalledMs, "ms"),
			f("hiccup_burst_ms", h.All.BurstMs, "ms"),
			f("hiccup_probe_cpu_s", h.ProbeCPUS, "s"))
		if h.All.SpeedNs > 0 {
			out = append(out, f("hiccup_speed_ns", h.All.SpeedNs, "ns"))
		}
	}
	if pl := p.Placement; pl != nil {
		out = append(out,
			f("placement_same_cpu", pl.SameCPU, "fraction"),
			i("placement_samples", int64(pl.Samples), "count"))
		for _, side := range []struct {
			name   string
			shares map[int]float64
		}{{"client", pl.Client}, {"server", pl.Server}} {
			for _, cpu := range slices.Sorted(maps.Keys(side.shares)) {
				out = append(out, f(fmt.Sprintf("placement_%s_cpu%d_share", side.name, cpu), side.shares[cpu], "fraction"))
			}
		}
	}
	return out
}

// nodeKillMetrics sums a node-kill cell's trials; none for a whole-store kill.
func nodeKillMetrics(s *durability.Summary) []csvMetric {
	var killed, other, errs int64
	killedSome := false
	for _, t := range s.PerTrial {
		if k := t.NodeKill; k != nil {
			killedSome = true
			killed += k.LostKilled
			other += k.LostOther
			for _, n := range k.OutageErrors {
				errs += n
			}
		}
	}
	if !killedSome {
		return nil
	}
	return []csvMetric{intMetric("durability_node_lost_killed", killed, "count"), intMetric("durability_node_lost_other", other, "count"),
		intMetric("durability_node_outage_errors", errs, "count")}
}

// capacityMetrics are the capacity section's figures of a cell that
// searched its capacity (capacity, cache-aside with an slo): per SLO the
// capacity table's row, and the USL fit.
func capacityMetrics(c *result.Cell) []csvMetric {
	s := capacityOf(c)
	if s == nil {
		return nil
	}
	f := floatMetric
	var out []csvMetric
	for _, cp := range s.Capacity {
		at := "_at_" + sloText(s, cp.SLO)
		out = append(out, boolMetric("capacity_found"+at, cp.Found))
		if !cp.Found {
			out = append(out, f("capacity_lowest_tried_ops_s"+at, cp.LowestTriedOpsS, "ops/s"))
			if cp.PassedOnceOpsS > 0 {
				out = append(out, f("capacity_passed_once_ops_s"+at, cp.PassedOnceOpsS, "ops/s"))
			}
			continue
		}
		out = append(out, f("capacity_ops_s"+at, cp.OpsS, "ops/s"), boolMetric("capacity_at_least"+at, cp.AtLeast),
			f("capacity_p50_us"+at, cp.P50Us, "us"), f("capacity_p99_us"+at, cp.P99Us, "us"),
			f("capacity_client_cpu_us_per_op"+at, cp.ClientCPUUs, "us/op"))
		if cp.Speed > 0 {
			out = append(out, f("capacity_speed"+at, cp.Speed, "x"))
		}
		if cp.ServerCPUUs > 0 { // -1: not measured (an external or in-process store)
			out = append(out, f("capacity_server_cpu_us_per_op"+at, cp.ServerCPUUs, "us/op"))
		}
		if k := cp.Cost; k != nil {
			out = append(out, f("capacity_need_ops_s"+at, k.NeedOpsS, "ops/s"),
				f("capacity_cores_needed_extrapolated"+at, k.CoresNeededExtrapolated, "cores"),
				boolMetric("capacity_need_beyond_capacity"+at, k.BeyondCapacity))
		}
	}
	ps := kneePercentiles(s)
	for n, st := range s.Steps { // the knee curve's table: a row per step
		p := "capacity_step" + strconv.Itoa(n+1) + "_"
		out = append(out, f(p+"offered_ops_s", st.OfferedOpsS, "ops/s"), f(p+"achieved_ops_s", st.AchievedOpsS, "ops/s"),
			f(p+"duration_s", st.DurationS, "s"), f(p+"backlog_slope", st.BacklogSlope, "ops/s"), boolMetric(p+"passed", st.Passed))
		if st.MachineCPUs > 0 {
			out = append(out, f(p+"machine_busy_cpus", st.MachineBusyCPUs, "cores"), intMetric(p+"machine_cpus", int64(st.MachineCPUs), "count"))
		}
		for _, pc := range ps {
			if v, ok := stepPercentile(st, pc); ok {
				out = append(out, f(p+pctName(pc)+"_us", v.ValueUs, "us"))
			}
		}
	}
	if u := s.USL; u != nil {
		out = append(out, f("usl_lambda_ops_s", u.Lambda, "ops/s"), f("usl_sigma", u.Sigma, "fraction"), f("usl_kappa", u.Kappa, "fraction"))
		if u.PeakClients > 0 {
			out = append(out, f("usl_peak_clients", u.PeakClients, "count"), f("usl_peak_ops_s", u.PeakOpsS, "ops/s"))
		}
		out = append(out, f("usl_rmse_ops_s", u.RMSE, "ops/s"))
	}
	return out
}

// cellMetrics are the cell-level figures of a payments, durability or
// sessions cell, the rows of their sections' tables (r: the run's other
// cells, which a cache-aside cell's saved load is measured against).
func cellMetrics(c *result.Cell, r *result.Result) []csvMetric {
	f := floatMetric
	i := func(name string, v int64) csvMetric { return intMetric(name, v, "count") }
	var out []csvMetric
	if s := paymentsOf(c); s != nil {
		out = append(out, i("payments_committed", s.Committed), f("payments_committed_per_s", s.CommittedPerS, "ops/s"),
			f("payments_steady_per_s", s.Steady.MeanPerS, "ops/s"), f("payments_steady_cv", s.Steady.CV, "fraction"), i("payments_declined", s.Declined))
		for _, reason := range sortedKeys(s.DeclinedBy) {
			out = append(out, i("payments_declined_"+reason, s.DeclinedBy[reason]))
		}
		out = append(out, i("payments_retries", s.Retries), i("payments_errors", s.Errors), i("payments_deletes", s.Deletes),
			boolMetric("payments_invariants_ok", s.Invariants.OK))
	}
	if s := durabilityOf(c); s != nil {
		out = append(out, i("durability_trials", int64(s.Trials)), i("durability_trials_asked", int64(s.TrialsAsked)), i("durability_acked", s.Acked),
			i("durability_lost_max", s.LostMax), f("durability_lost_mean", s.LostMean, "count"), i("durability_loss_trials", int64(s.LossTrials)),
			i("durability_lost_all_trials", int64(s.LostAllTrials)), f("durability_window_max_s", s.WindowMaxS, "s"),
			i("durability_window_max_writes", s.WindowMaxWrites), f("durability_recovery_mean_s", s.RecoveryMeanS, "s"), f("durability_recovery_max_s", s.RecoveryMaxS, "s"))
		out = append(out, nodeKillMetrics(s)...)
		if c := s.FSCost; c != nil {
			out = append(out, i("durability_fs_writes", c.Writes),
				f("durability_fs_plain_p50_us", c.Plain.P50, "us"), f("durability_fs_mount_p50_us", c.Mount.P50, "us"),
				f("durability_fs_plain_p99_us", c.Plain.P99, "us"), f("durability_fs_mount_p99_us", c.Mount.P99, "us"),
				f("durability_fs_plain_mean_us", c.Plain.Mean, "us"), f("durability_fs_mount_mean_us", c.Mount.Mean, "us"))
		}
	}
	if s := cacheAsideOf(c); s != nil {
		out = append(out, f("cache_aside_hit_ratio", s.HitRatio, "fraction"), f("cache_aside_db_queries_per_s", s.DBQueriesPerS, "ops/s"),
			f("cache_aside_db_queries_per_request", s.DBQueriesPerRequest, "count"), i("cache_aside_stale", s.Staleness.Stale),
			f("cache_aside_max_stale_age_us", s.Staleness.MaxAgeUs, "us"))
		if saved, ok := dbLoadSaved(s, cellsWith(r, cacheAsideOf)); ok {
			out = append(out, f("cache_aside_db_load_saved", saved, "fraction"))
		}
		for _, st := range s.Stampede { // a row per protection of the stampede table
			p := "cache_aside_stampede_" + st.Protection + "_"
			out = append(out, i(p+"expiries", st.Expiries), i(p+"db_queries", st.DBQueries),
				f(p+"db_queries_per_expiry", st.DBQueriesPerExpiry, "count"), i(p+"max_db_queries_per_expiry", st.MaxDBQueriesPerExpiry),
				i(p+"refills", st.Refills), f(p+"p99_us", st.P99Us, "us"))
			if st.Refills > 0 {
				out = append(out, f(p+"refill_p99_us", st.RefillP99Us, "us"))
			}
		}
		for _, a := range s.AtCapacity {
			if a.Found { // the verdict table's "capacity at SLO" column
				at := "_at_" + a.SLO
				out = append(out, f("cache_aside_capacity_ops_s"+at, a.OpsS, "ops/s"),
					boolMetric("cache_aside_capacity_at_least"+at, a.AtLeast),
					f("cache_aside_capacity_hit_ratio"+at, a.HitRatio, "fraction"), f("cache_aside_capacity_db_queries_per_request"+at, a.DBQueriesPerRequest, "count"))
			}
		}
	}
	out = append(out, capacityMetrics(c)...)
	if c.Repeat == 1 { // the spread over the repeats, on the first one's rows
		for _, sp := range capacitySpreads(cellsWith(r, capacityOf)) {
			if sp.cell != c.ID {
				continue
			}
			at := "_at_" + sp.slo
			out = append(out, i("capacity_repeats"+at, int64(len(sp.repeats))), f("capacity_median_ops_s"+at, sp.median, "ops/s"),
				f("capacity_low_ops_s"+at, sp.low, "ops/s"), f("capacity_high_ops_s"+at, sp.high, "ops/s"),
				f("capacity_range_confidence"+at, sp.confidence, "fraction"), boolMetric("capacity_unstable"+at, sp.unstable()))
			if !math.IsInf(sp.spread, 0) {
				out = append(out, f("capacity_spread"+at, sp.spread, "fraction"))
			}
			// What the platform did at the repeats' bounding steps, the
			// verdict's figures.
			out = append(out, boolMetric("capacity_platform_limited"+at, sp.unstable() && len(sp.platformCauses()) > 0))
			if v, ok := sp.boundingFigure(func(s *capacity.Step) float64 {
				if !s.Placed() {
					return 0
				}
				return min(s.ClientMainCPU, s.ServerMainCPU)
			}, true); ok {
				out = append(out, f("capacity_bounding_main_cpu_min"+at, v, "fraction"))
			}
			if v, ok := sp.boundingFigure(func(s *capacity.Step) float64 { return s.HiccupP99Us }, false); ok {
				out = append(out, f("capacity_bounding_stall_p99_max_us"+at, v, "us"))
			}
			if v, ok := sp.boundingFigure(func(s *capacity.Step) float64 { return s.HiccupBurstMs }, false); ok {
				out = append(out, f("capacity_bounding_stall_burst_max_ms"+at, v, "ms"))
			}
			speed := func(s *capacity.Step) float64 { return s.HiccupSpeedNs }
			if lo, ok := sp.boundingFigure(speed, true); ok {
				hi, _ := sp.boundingFigure(speed, false)
				out = append(out, f("capacity_bounding_speed_ns_min"+at, lo, "ns"), f("capacity_bounding_speed_ns_max"+at, hi, "ns"))
			}
			if v := sp.clientCeiling(); v > 0 {
				out = append(out, f("capacity_client_ceiling_ops_s"+at, v, "ops/s"))
			}
			if v, ok := sp.boundingFigure(func(s *capacity.Step) float64 { return s.OtherLoadCPUs }, false); ok {
				out = append(out, f("capacity_bounding_other_load_max"+at, v, "cores"))
			}
			if v, ok := sp.boundingFigure(func(s *capacity.Step) float64 { return s.MachineBusyCPUs }, true); ok {
				out = append(out, f("capacity_bounding_machine_busy_min"+at, v, "cores"))
			}
		}
	}
	out = append(out, replayMetrics(c)...)
	if s := sessionsOf(c); s != nil && s.Counters != nil && s.Figures != nil {
		k, g := s.Counters, s.Figures
		out = append(out, i("sessions_stale", k.Stale), i("sessions_lost", k.Lost), f("sessions_linger_max_s", g.LingerMaxS, "s"),
			i("sessions_end_rows", g.EndRows), i("sessions_end_bytes", g.EndBytes))
		if g.PeakDeadTuples != nil {
			out = append(out, i("sessions_peak_dead_tuples", *g.PeakDeadTuples))
		}
		if g.HOTRatio != nil {
			out = append(out, f("sessions_hot_ratio", *g.HOTRatio, "fraction"))
		}
		if g.AutovacuumRuns != nil {
			out = append(out, i("sessions_autovacuum_runs", *g.AutovacuumRuns))
		}
	}
	return out
}
