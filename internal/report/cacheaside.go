package report

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/storebench/storebench/internal/result"
	"github.com/storebench/storebench/internal/result/cacheaside"
)

// cacheAsideOf is a cell's cache-aside summary: the one place this file
// reads it.
func cacheAsideOf(c *result.Cell) *cacheaside.Summary { return c.CacheAside }

// cacheAsideModel is the cache-aside section of every format: the verdict
// table (a row per cell), the stampede table (a row per cell and
// protection), and hit ratio and database queries over time.
type cacheAsideModel struct {
	verdict  *table
	capacity *table // nil when no cell searched its capacity
	stampede *table // nil when no cell ran a stampede
	hitRatio *lineChartSpec
	dbLoad   *lineChartSpec
	notes    []string
}

const cacheAsideTitle = "cache-aside: does the cache pay off, and what does it cost in staleness and stampedes"

// newCacheAsideModel builds the section; nil without a cache-aside cell.
// colorOf gives each target its colour on the HTML page (nil elsewhere).
func newCacheAsideModel(r *result.Result, colorOf map[string]int) *cacheAsideModel {
	cells := cellsWith(r, cacheAsideOf)
	if len(cells) == 0 {
		return nil
	}
	cols := []column{column{head: "cell", left: true}, column{head: "database", left: true}, column{head: "cache", left: true}, column{head: "policy", left: true},
		column{head: "hit ratio", m: "hit_ratio"}, column{head: "db queries/s", m: "db_queries_per_s"}, column{head: "db queries/req", m: "db_queries_per_request"},
		column{head: "db load saved", m: "db_load_saved"},
		column{head: "p99 hit µs", m: "p99_hit_us"}, column{head: "p99 miss µs", m: "p99_miss_us"}, column{head: "p99 all µs", m: "p99_all_us"},
		column{head: "stale reads", m: "stale"}, column{head: "max stale age µs", m: "max_stale_age_us"}, column{head: "monotonic broken", m: "monotonic_broken"},
		column{head: "cache CPU µs/req", m: "cache_cpu_us_per_request"}, column{head: "db CPU µs/req", m: "db_cpu_us_per_request"}}
	slos := searchedSLOs(cells)
	for i, slo := range slos {
		cols = append(cols, column{head: "capacity at " + slo + " ops/s", m: fmt.Sprintf("capacity_ops_s_%d", i+1)})
	}
	m := &cacheAsideModel{verdict: newTable("cache-aside", "per cell: the cache's hit ratio, the database load it saved, end-to-end p99 by kind of request, stale reads, server CPU per request"+capacityCaption(slos), true, cols...)}
	for _, c := range cells {
		s := cacheAsideOf(c)
		cache := s.Cache
		if !s.CacheUsed {
			cache = "— (database alone)"
		}
		m.verdict.add(textCell(c.Label()), textCell(s.Database), textCell(cache), textCell(s.Params.Policy),
			ratioCell(s.HitRatio), figureCell(whole(s.DBQueriesPerS), s.DBQueriesPerS), figureCell(fixed(s.DBQueriesPerRequest, 3), s.DBQueriesPerRequest),
			savedCell(s, cells),
			latencyCell(s.Latency.Hit.P99, s.Hits), latencyCell(s.Latency.Miss.P99, s.Misses), latencyCell(s.Latency.All.P99, s.Requests),
			countCell(s.Staleness.Stale), figureCell(us(s.Staleness.MaxAgeUs), s.Staleness.MaxAgeUs), countCell(s.Staleness.MonotonicBroken),
			cpuCell(s.CPU.CacheUsPerRequest), cpuCell(s.CPU.DatabaseUsPerRequest))
		for _, slo := range slos {
			row := &m.verdict.rows[len(m.verdict.rows)-1]
			*row = append(*row, atCapacityCell(s, slo))
		}
		for _, n := range s.Notes {
			m.notes = append(m.notes, c.Label()+": "+n)
		}
		if s.Staleness.AgesLowerBound > 0 {
			m.notes = append(m.notes, fmt.Sprintf("%s: %d stale ages are lower bounds (more newer versions committed than the tracker's ring keeps)", c.Label(), s.Staleness.AgesLowerBound))
		}
		if s.Params.Keys > s.Staleness.MonotonicSlots && s.Staleness.MonotonicSlots > 0 {
			m.notes = append(m.notes, fmt.Sprintf("%s: each client remembers %s keys for monotonic reads, fewer than the %s of the keyspace: broken monotonic reads are a lower bound", c.Label(), thousands(s.Staleness.MonotonicSlots), thousands(s.Params.Keys)))
		}
	}
	m.capacity = atCapacityTable(cells)
	m.stampede = stampedeTable(cells)
	m.hitRatio = cacheAsideChart(cells, colorOf, "hit-ratio", "Hit ratio over time", "hit ratio",
		"share of the reads the cache answered, each second of the measured part",
		func(s cacheaside.Second) float64 { return s.HitRatio }, func(v float64) string { return fixed(v, 3) })
	m.dbLoad = cacheAsideChart(cells, colorOf, "db-queries", "Database queries per second over time", "queries/s",
		"reads on a miss and writes, each second of the measured part",
		func(s cacheaside.Second) float64 { return float64(s.DBQueries) }, whole)
	return m
}

// ratioCell is a share in [0, 1], three decimals.
func ratioCell(v float64) cell { return figureCell(fixed(v, 3), v) }

// latencyCell is a p99 in µs; "—" when no request was of that kind.
func latencyCell(p99 float64, n int64) cell {
	if n == 0 {
		return textCell("—")
	}
	return figureCell(us(p99), p99)
}

// cpuCell is a server's CPU per request; "—" when not measured.
func cpuCell(v *float64) cell {
	if v == nil {
		return textCell("—")
	}
	return figureCell(fixed(*v, 1), *v)
}

// savedCell is the share of the database's queries per second that the
// cache saved against the database-alone cell of the same database, the
// same requests (keys, sizes, distribution, read ratio) and the same
// offered rate (open loop); "—" without one. A closed loop offers no
// fixed rate: its queries/s grow with the cache's speed, so they compare
// with nothing.
func savedCell(s *cacheaside.Summary, cells []*result.Cell) cell {
	if saved, ok := dbLoadSaved(s, cells); ok {
		return figureCell(fixed(100*saved, 1)+"%", saved)
	}
	return textCell("—")
}

// dbLoadSaved is the share of the database's queries a cached cell saved
// against the cell of the same requests on its database alone; false when
// the run has no such cell (or s used no cache, or ran a closed loop).
func dbLoadSaved(s *cacheaside.Summary, cells []*result.Cell) (float64, bool) {
	if !s.CacheUsed || s.Params.RateOpsS <= 0 {
		return 0, false
	}
	for _, c := range cells {
		a := cacheAsideOf(c)
		if !a.CacheUsed && a.Database == s.Database && sameRequests(a.Params, s.Params) && a.DBQueriesPerS > 0 {
			return 1 - s.DBQueriesPerS/a.DBQueriesPerS, true
		}
	}
	return 0, false
}

// sameRequests is whether two cells offered the same requests at the same
// rate, whatever their cache, policy and TTL.
func sameRequests(a, b cacheaside.CellParams) bool {
	return a.RateOpsS == b.RateOpsS && a.Keys == b.Keys && a.ValueSize == b.ValueSize && a.ValueSizeMax == b.ValueSizeMax &&
		a.KeyDist == b.KeyDist && a.Theta == b.Theta && a.ReadRatio == b.ReadRatio && a.Seed == b.Seed
}

// searchedSLOs are the SLOs the cells searched their capacity at, in the
// order first met: a column each in the verdict table.
func searchedSLOs(cells []*result.Cell) []string {
	var slos []string
	for _, c := range cells {
		for _, a := range cacheAsideOf(c).AtCapacity {
			if !slices.Contains(slos, a.SLO) {
				slos = append(slos, a.SLO)
			}
		}
	}
	return slos
}

func capacityCaption(slos []string) string {
	if len(slos) == 0 {
		return ""
	}
	return ", and the capacity of the application loop within each SLO (open loop)"
}

// atCapacityCell is a cell's capacity at slo: "7,300", "≥ 7,300" (the
// client or the search's highest rate bounded it), "none" or "—" when the
// cell did not search at slo.
func atCapacityCell(s *cacheaside.Summary, slo string) cell {
	for _, a := range s.AtCapacity {
		switch {
		case a.SLO != slo:
		case !a.Found:
			return textCell("none")
		case a.AtLeast:
			return figureCell("≥ "+whole(a.OpsS), a.OpsS)
		default:
			return figureCell(whole(a.OpsS), a.OpsS)
		}
	}
	return textCell("—")
}

// atCapacityTable is a row per cell and SLO: what the cache did at the
// capacity rate (its confirming step); nil when no cell searched.
func atCapacityTable(cells []*result.Cell) *table {
	t := newTable("cache-aside-capacity", "at each SLO's capacity (the confirming step of the search): the hit ratio and the database load the application loop carried there", true,
		column{head: "cell", left: true}, column{head: "SLO", left: true}, column{head: "capacity ops/s", m: "capacity_ops_s"},
		column{head: "hit ratio", m: "hit_ratio"}, column{head: "db queries/s", m: "db_queries_per_s"}, column{head: "db queries/req", m: "db_queries_per_request"},
		column{head: "stale reads", m: "stale"})
	for _, c := range cells {
		s := cacheAsideOf(c)
		for _, a := range s.AtCapacity {
			if !a.Found {
				none := textCell("—")
				t.add(textCell(c.Label()), textCell(a.SLO), textCell("none"), none, none, none, none)
				continue
			}
			t.add(textCell(c.Label()), textCell(a.SLO), atCapacityCell(s, a.SLO), ratioCell(a.HitRatio),
				figureCell(whole(a.DBQueriesPerS), a.DBQueriesPerS), figureCell(fixed(a.DBQueriesPerRequest, 3), a.DBQueriesPerRequest), countCell(a.Stale))
		}
	}
	return t.orNil()
}

// stampedeTable is a row per cell and protection; nil without one.
func stampedeTable(cells []*result.Cell) *table {
	t := newTable("cache-aside-stampede", "one hot key expiring under every client: database queries per expiry by protection, and the p99 of the requests that met the refill", true,
		column{head: "cell", left: true}, column{head: "protection", left: true}, column{head: "expiries", m: "expiries"},
		column{head: "db queries", m: "db_queries"}, column{head: "db queries/expiry", m: "db_queries_per_expiry"}, column{head: "max/expiry", m: "max_db_queries_per_expiry"},
		column{head: "refills", m: "refills"}, column{head: "refill p99 µs", m: "refill_p99_us"}, column{head: "p99 µs", m: "p99_us"})
	for _, c := range cells {
		for _, st := range cacheAsideOf(c).Stampede {
			t.add(textCell(c.Label()), textCell(st.Protection), countCell(st.Expiries), countCell(st.DBQueries),
				figureCell(fixed(st.DBQueriesPerExpiry, 2), st.DBQueriesPerExpiry), countCell(st.MaxDBQueriesPerExpiry),
				countCell(st.Refills), latencyCell(st.RefillP99Us, st.Refills), figureCell(us(st.P99Us), st.P99Us))
		}
	}
	return t.orNil()
}

// cacheAsideChart is one figure of every cell's per-second series, with
// its table (a row per second, a column per cell).
func cacheAsideChart(cells []*result.Cell, colorOf map[string]int, id, title, yLabel, sub string, y func(cacheaside.Second) float64, format func(float64) string) *lineChartSpec {
	spec := &lineChartSpec{id: "chart-cache-aside-" + id, title: title, sub: sub + ", one line per cell",
		xLabel: "seconds since the measured start", yLabel: yLabel,
		xFmt: func(v float64) string { return trimNum(v) + " s" }, yFmt: func(v float64) string { return trimNum(v) },
		desc: fmt.Sprintf("Line chart of %s against time, per second, for %s.", strings.ToLower(title[:1])+title[1:], plural(len(cells), "cell"))}
	cols := []column{{head: "second", left: true}}
	seconds := 0
	for i, c := range cells {
		s := cacheAsideOf(c)
		cols = append(cols, column{head: c.Label(), m: strings.ReplaceAll(id, "-", "_")})
		l := line{key: c.Label(), color: colorOf[c.Target], variant: i, markers: true}
		for sec, v := range s.PerSecond {
			l.points = append(l.points, point{x: float64(sec) + 0.5, y: y(v), title: fmt.Sprintf("%s, second %d: %s", c.Label(), sec, format(y(v)))})
		}
		seconds = max(seconds, len(s.PerSecond))
		spec.lines = append(spec.lines, l)
	}
	spec.table = newTable("cache-aside-"+id, strings.ToLower(title[:1])+title[1:]+", per second of the measured part", true, cols...)
	for sec := range seconds {
		row := []cell{textCell(fmt.Sprint(sec))}
		for _, c := range cells {
			if ps := cacheAsideOf(c).PerSecond; sec < len(ps) {
				v := y(ps[sec])
				row = append(row, figureCell(format(v), v))
			} else {
				row = append(row, textCell("—"))
			}
		}
		spec.table.add(row...)
	}
	return spec
}

// cacheAsideIntro says what the verdict table's figures mean.
const cacheAsideIntro = "A read gets the key from the cache and, on a miss, reads the database row and fills the cache; a write updates the row, then invalidates or updates the cache entry. Latency is end to end per request (from its intended start in an open loop). A stale read returned an older version than the last one committed when it started; its age runs from the commit of the first newer version. Database load saved compares with the database-alone cell of the same database at the same offered rate (open loop only)."

// cacheAsideAtCapacityLede says where the at-capacity table's rates come from.
const cacheAsideAtCapacityLede = "The capacity of the application loop is capacity's search over these requests, open loop, after the phases above on the same warm cache: the highest offered rate whose steps meet the SLO and are sustained. Its knee curve, latency and CPU per request at capacity (the database's and the cache's servers together) are in the capacity section."

// cacheAsideStampedeLede says what each stampede protection does.
const cacheAsideStampedeLede = "One hot key whose cache entry expires every TTL, read by every client. none: every client that misses reads the database; lease: the client that adds the lease key refills, the others wait and re-read (no stale copy is served); xfetch: probabilistic early expiration (Vattani et al., β = 1); coalesce: the misses of one process share one database read."

// CacheAsideText prints the cache-aside verdict and stampede tables.
func CacheAsideText(w io.Writer, r *result.Result) { sectionText(w, r, "cache-aside") }

// text prints the section for the terminal.
func (m *cacheAsideModel) text(w io.Writer) {
	m.verdict.textUnder(w, cacheAsideTitle)
	m.capacity.textUnder(w, "cache-aside at capacity: what the cache did at each SLO's capacity (the capacity section has the knee curves)")
	m.stampede.textUnder(w, "cache-aside stampede: database queries per expiry of one hot key, by protection")
	for _, n := range m.notes {
		fmt.Fprintf(w, "  note: %s\n", n)
	}
}

// render writes the section to Markdown or HTML.
func (m *cacheAsideModel) render(d doc) {
	d.para(cacheAsideIntro)
	d.table(m.verdict)
	d.list(m.notes)
	subsectionTable(d, "At capacity", cacheAsideAtCapacityLede, m.capacity)
	subsectionTable(d, "Stampede", cacheAsideStampedeLede, m.stampede)
	d.heading("", "Hit ratio over time")
	d.lineChart(m.hitRatio)
	d.heading("", "Database queries over time")
	d.lineChart(m.dbLoad)
}
