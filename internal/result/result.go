// Package result is the JSON document of a run: the single source of truth
// every report is rendered from. It is rewritten atomically after every cell,
// so an interrupted run keeps every finished cell and the file is always valid.
package result

import (
	"encoding/json"
	"fmt"
	"github.com/storebench/storebench/internal/doctor"
	"io"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/storebench/storebench/internal/metrics"
	"github.com/storebench/storebench/internal/result/cacheaside"
	"github.com/storebench/storebench/internal/result/capacity"
	"github.com/storebench/storebench/internal/result/durability"
	"github.com/storebench/storebench/internal/result/payments"
	"github.com/storebench/storebench/internal/result/replay"
	"github.com/storebench/storebench/internal/result/sessions"
	"github.com/storebench/storebench/internal/store"
)

// Schema names this document's version; bump it when a field changes meaning.
const Schema = "storebench.result/v1"

// Run statuses.
const (
	StatusRunning     = "running"
	StatusComplete    = "complete"
	StatusInterrupted = "interrupted"
	StatusFailed      = "failed"
)

// Cell statuses.
const (
	CellOK     = "ok"
	CellFailed = "failed"
)

// Result is one run.
type Result struct {
	Schema      string      `json:"schema"`
	ID          string      `json:"id"`
	Status      string      `json:"status"`
	StartedAt   time.Time   `json:"started_at"`
	FinishedAt  *time.Time  `json:"finished_at,omitempty"`
	Command     []string    `json:"command"`
	Suite       string      `json:"suite,omitempty"`
	Seed        uint64      `json:"seed"`
	Storebench  Build       `json:"storebench"`
	Environment Environment `json:"environment"`
	// Machine is a brief machine check (storebench doctor --brief) made
	// before a run whose verdicts judge latency against a bound (capacity
	// at an SLO): what the machine itself adds to a latency; nil otherwise.
	Machine  *doctor.Report `json:"machine,omitempty"`
	Scenario any            `json:"scenario"`
	Article  *Article       `json:"article,omitempty"`
	Quick    bool           `json:"quick,omitempty"`
	// QuickChanges says what --quick changed from the full suite, one
	// phrase each, e.g. "repeat 3→1", "duration 2h0m0s→8s".
	QuickChanges []string `json:"quick_changes,omitempty"`
	// Repeat is how many times each cell ran (--repeat), when more than
	// once: its repeats share the cell id, and tables show the median one.
	Repeat int `json:"repeat,omitempty"`
	// Shard is set when the run is one of several processes' parts of one
	// run (run --shard), or a merge of them (storebench merge).
	Shard   *Shard    `json:"shard,omitempty"`
	Targets []Target  `json:"targets"`
	Skipped []Skipped `json:"skipped,omitempty"`
	Cells   []Cell    `json:"cells"`
	Notes   []string  `json:"notes,omitempty"`
	// Assertions are the thresholds the run checked, each with what it
	// measured and whether it passed.
	Assertions []Assertion `json:"assertions,omitempty"`
}

// Build identifies the storebench binary.
type Build struct {
	Version   string `json:"version"`
	Commit    string `json:"commit"`
	GoVersion string `json:"go_version"`
}

// Environment is the machine the run measured on.
type Environment struct {
	Hostname    string `json:"hostname"`
	OS          string `json:"os"`
	Kernel      string `json:"kernel"`
	Arch        string `json:"arch"`
	CPUModel    string `json:"cpu_model"`
	Cores       int    `json:"cores"`
	MemoryBytes uint64 `json:"memory_bytes"`
	// ClientCPUs is the CPU list the client could run on; ServerCPUs that of managed servers.
	ClientCPUs string `json:"client_cpus"`
	ServerCPUs string `json:"server_cpus"`
	GoMaxProcs int    `json:"gomaxprocs"`
}

// Target is one measured store as it really was.
type Target struct {
	Name    string            `json:"name"`
	Store   string            `json:"store"`
	Profile string            `json:"profile,omitempty"`
	Managed bool              `json:"managed"`
	Options map[string]string `json:"options,omitempty"`
	store.Info
	ServerPID int `json:"server_pid,omitempty"`
	// Kept is what of the target's data the run left in place on purpose
	// (run --keep) and where, e.g. "schema sb_… at postgres://me:xxxxx@db/app";
	// storebench clean removes it.
	Kept string `json:"kept,omitempty"`
}

// Skipped is a target that a suite wanted but that cannot run here.
type Skipped struct {
	Target string `json:"target"`
	Reason string `json:"reason"`
}

// Cell is one target × workload × parameters.
type Cell struct {
	ID       string         `json:"id"`
	Target   string         `json:"target"`
	Workload string         `json:"workload"`
	Name     string         `json:"name,omitempty"` // the scenario's name for the workload entry, when not its type
	Params   map[string]any `json:"params"`
	// Repeat is the round of a run with --repeat this cell belongs to,
	// 1 to Result.Repeat; 0 when the run repeats nothing.
	Repeat int    `json:"repeat,omitempty"`
	Status string `json:"status"`
	Error  string `json:"error,omitempty"`
	// ServerLog is the tail of a managed server's log when it died in the cell.
	ServerLog string    `json:"server_log,omitempty"`
	StartedAt time.Time `json:"started_at"`
	Seconds   float64   `json:"seconds"`
	// ClientThreads is the client's GOMAXPROCS during the cell, and
	// ClientThreadsWhy how it was chosen ("--client-threads 2 (user)", or
	// what the server's thread model and the CPUs led to); 0 and "" in
	// results older than the choice per cell (Environment.GoMaxProcs).
	ClientThreads    int             `json:"client_threads,omitempty"`
	ClientThreadsWhy string          `json:"client_threads_why,omitempty"`
	Phases           []metrics.Phase `json:"phases"`
	// Payments is the payments workload's own result: committed
	// transfers per second over time, declines, retries, durability as
	// mapped to the engine, server statistics and the invariants.
	Payments *payments.Summary `json:"payments,omitempty"`
	// Sessions is the sessions workload's own result: the design read back
	// from the store, correctness counters (stale reads, lost sessions),
	// observations over time (dead tuples, HOT updates, expired keys, …).
	Sessions *sessions.Summary `json:"sessions,omitempty"`
	// Durability is the durability workload's own result: acknowledged
	// writes lost per crash trial, the loss window, the recovery time, and
	// what a process crash (what it tests) and a power loss (what it does
	// not) mean for the configuration.
	Durability *durability.Summary `json:"durability,omitempty"`
	// CacheAside is the cache-aside workload's own result: hit ratio,
	// database load, latency of hits and misses, staleness, stampedes.
	CacheAside *cacheaside.Summary `json:"cache_aside,omitempty"`
	// Capacity is the capacity workload's own result: every step of the
	// search (the knee curve), the capacity at each SLO, its cost, and the
	// scalability fit.
	Capacity *capacity.Summary `json:"capacity,omitempty"`
	// Replay is the replay workload's own result: the trace's requests,
	// those replayed and those no store has (by command), hits and
	// misses, the sends' lateness, and the trace's own rate over time.
	Replay *replay.Summary `json:"replay,omitempty"`
}

// Phase returns the cell's phase of that name.
func (c *Cell) Phase(name string) (metrics.Phase, bool) {
	for _, p := range c.Phases {
		if p.Name == name {
			return p, true
		}
	}
	return metrics.Phase{}, false
}

// Writer keeps a result file up to date on disk.
type Writer struct {
	mu   sync.Mutex
	path string
	r    *Result
}

// Create makes a new directory for the run under out, named by r.ID (with
// -2, -3, … added when a run that started in the same second has that name:
// r.ID then says which), and writes the first version of the result, so a
// directory that cannot be written fails before any work starts. It never
// writes into a directory it did not create.
func Create(out string, r *Result) (*Writer, error) {
	name, err := mkdirUnique(out, r.ID)
	if err != nil {
		return nil, err
	}
	r.ID = name
	w := &Writer{path: filepath.Join(out, name, "result.json"), r: r}
	if err := w.flush(); err != nil {
		return nil, err
	}
	return w, nil
}

// Path is the result file's path.
func (w *Writer) Path() string { return w.path }

// Update changes the result under the writer's lock and writes it out.
func (w *Writer) Update(f func(r *Result)) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	f(w.r)
	return w.flush()
}

// AddCell appends a finished cell and writes the file.
func (w *Writer) AddCell(c Cell) error {
	return w.Update(func(r *Result) { r.Cells = append(r.Cells, c) })
}

// Finish sets the final status and writes the file.
func (w *Writer) Finish(status string) error {
	return w.Update(func(r *Result) {
		now := time.Now().UTC()
		r.Status = status
		r.FinishedAt = &now
	})
}

// flush rewrites the file atomically, so readers never see half a file.
func (w *Writer) flush() error {
	b, err := json.MarshalIndent(w.r, "", "  ")
	if err != nil {
		return fmt.Errorf("encode result: %w", err)
	}
	err = WriteFileAtomic(w.path, func(f io.Writer) error {
		_, err := f.Write(append(b, '\n'))
		return err
	})
	if err != nil {
		return fmt.Errorf("write %s: %w", w.path, err)
	}
	return nil
}

// Label is the cell's id for a reader: with its round in a repeated run
// ("redis/kv/keys=1000 #2"), since repeats share the id.
func (c *Cell) Label() string { return c.ID + RepeatSuffix(c.Repeat) }

// RepeatSuffix is how a name shows the round of a repeated cell: " #2";
// "" for a cell of a run that repeats nothing (round 0).
func RepeatSuffix(round int) string {
	if round <= 0 {
		return ""
	}
	return " #" + strconv.Itoa(round)
}
