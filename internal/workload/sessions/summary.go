package sessions

import schema "github.com/storebench/storebench/internal/result/sessions"

// cumulative are the store metrics that only grow; Figures.Deltas covers them.
var cumulative = map[string]bool{
	"n_tup_ins": true, "n_tup_upd": true, "n_tup_del": true, "n_tup_hot_upd": true, "autovacuum_count": true,
	"vacuum_count": true, "autoanalyze_count": true, "wal_records": true, "wal_fpi": true, "wal_bytes": true,
	"expired_keys": true, "evicted_keys": true, "keyspace_hits": true, "keyspace_misses": true, "expired_time_cap_reached_count": true,
	"total_items": true, "evictions": true, "reclaimed": true, "expired_unfetched": true, "evicted_unfetched": true,
	"evicted_active": true, "get_hits": true, "get_misses": true, "get_expired": true, "touch_hits": true, "touch_misses": true,
	"gat_hits": true, "gat_misses": true, "crawler_reclaimed": true,
}

// derive computes the figures over the samples with T >= 0; ops is the
// number of operations the WAL is charged to.
func derive(samples []schema.Sample, ops int64) *schema.Figures {
	var in []schema.Sample
	for _, s := range samples {
		if s.T >= 0 {
			in = append(in, s)
		}
	}
	f := &schema.Figures{Deltas: map[string]float64{}, Peaks: map[string]float64{}}
	if len(in) == 0 {
		return f
	}
	first, last := in[0], in[len(in)-1]
	f.EndRows, f.EndBytes = last.Rows, last.Bytes
	for _, s := range in {
		f.PeakRows, f.PeakExpired, f.PeakBytes = max(f.PeakRows, s.Rows), max(f.PeakExpired, s.Expired), max(f.PeakBytes, s.Bytes)
		f.LingerMaxS = max(f.LingerMaxS, s.OldestExpiredS)
		for k, v := range s.Metrics {
			if p, ok := f.Peaks[k]; !ok || v > p {
				f.Peaks[k] = v
			}
		}
	}
	for k, v := range last.Metrics {
		if a, ok := first.Metrics[k]; ok && cumulative[k] {
			f.Deltas[k] = v - a
		}
	}
	i64 := func(v float64) *int64 { n := int64(v); return &n }
	if v, ok := f.Peaks["n_dead_tup"]; ok {
		f.PeakDeadTuples = i64(v)
		if upd := f.Deltas["n_tup_upd"]; upd > 0 {
			r := f.Deltas["n_tup_hot_upd"] / upd
			f.HOTRatio = &r
		}
		f.AutovacuumRuns = i64(f.Deltas["autovacuum_count"])
		f.TableBytes, f.IndexBytes = i64(last.Metrics["table_bytes"]), i64(last.Metrics["index_bytes"])
		f.WALBytes = i64(f.Deltas["wal_bytes"])
		if ops > 0 {
			r := f.Deltas["wal_bytes"] / float64(ops)
			f.WALBytesPerOp = &r
		}
	}
	if v, ok := f.Deltas["expired_keys"]; ok {
		f.ExpiredKeys = i64(v)
	}
	if v, ok := f.Deltas["evictions"]; ok {
		f.Evictions, f.Reclaimed = i64(v), i64(f.Deltas["reclaimed"])
	}
	if v, ok := f.Peaks["walk_seconds"]; ok {
		f.WalkMaxS = &v
	}
	return f
}
