// Package durability is the durability workload's part of the result
// schema (result.Cell.Durability): the data types the workload fills and
// every report reads, owned by the schema so that renaming a field of the
// workload cannot change storebench.result/v1.
package durability

// NotPowerLoss is said in every result and report: what this workload's
// crash is, and what it is not.
const NotPowerLoss = "A process crash is not a power loss: storebench SIGKILLs the process, " +
	"and whatever it had handed to the kernel (write(2) into the OS page cache) survives and reaches the disk later. " +
	"Only what the process still held in its own memory is lost. An OS crash or a power loss also loses " +
	"every write that was not fsynced; this run does not test that (see what each configuration would lose on a power loss)."

// Summary is a durability cell's own result, beside its write phases.
type Summary struct {
	// Trials is how many trials ran to the end (kill, restart, count);
	// TrialsAsked how many were asked for.
	Trials      int `json:"trials"`
	TrialsAsked int `json:"trials_asked"`
	// The parameters, for the record.
	Writers     int     `json:"writers"`
	ValueSize   int     `json:"value_size"`
	MinAcked    int64   `json:"min_acked"`
	KillWindowS float64 `json:"kill_window_s"`
	Seed        uint64  `json:"seed"`

	// Fault is what a trial did: "kill" (SIGKILL; the OS page cache
	// survives) or "power" (a power cut: unsynced writes are lost).
	Fault string `json:"fault,omitempty"`
	// Crash says what was killed, and how.
	Crash string `json:"crash"`
	// PowerCuts is what the cuts of a power-fault cell discarded.
	PowerCuts *Cuts `json:"power_cuts,omitempty"`
	// FSCost is the power-cut filesystem's own cost, measured before the
	// trials of a power-fault cell: the same store's writes on the plain
	// directory and on the mount.
	FSCost *FSCost `json:"fs_cost,omitempty"`
	// NotPowerLoss is the NotPowerLoss text.
	NotPowerLoss string `json:"not_power_loss"`
	// ProcessCrash is what this configuration is expected to lose on a
	// process crash (this test), PowerLoss what it would lose on an OS crash
	// or power loss (not tested here), from the effective settings.
	ProcessCrash string `json:"process_crash"`
	PowerLoss    string `json:"power_loss"`
	// Phases says what the cell's phases are.
	Phases string `json:"phases"`
	// Claim is the store's own account of its durability (store.Info).
	Claim string `json:"claim,omitempty"`
	// Filesystem holds the data; on tmpfs even an fsync survives no reboot.
	Filesystem string `json:"filesystem,omitempty"`

	// Acked is every acknowledged write over all trials; Lost those missing
	// after the restart and Wrong those present with another value (both
	// count as lost in LostMax and LostMean).
	Acked    int64   `json:"acked"`
	Lost     int64   `json:"lost"`
	Wrong    int64   `json:"wrong"`
	LostMax  int64   `json:"lost_max"`
	LostMean float64 `json:"lost_mean"`
	// LossTrials counts trials that lost at least one acknowledged write,
	// LostAllTrials those that lost every one.
	LossTrials    int `json:"loss_trials"`
	LostAllTrials int `json:"lost_all_trials"`
	// WindowMaxS and WindowMaxWrites are the widest loss window of any
	// trial: how long before the kill the oldest lost write was
	// acknowledged, and how many acknowledged writes came from then on.
	WindowMaxS      float64 `json:"window_max_s"`
	WindowMaxWrites int64   `json:"window_max_writes"`
	// RecoveryMeanS and RecoveryMaxS: restart → first successful read.
	RecoveryMeanS float64 `json:"recovery_mean_s"`
	RecoveryMaxS  float64 `json:"recovery_max_s"`
	// Unrecovered is set when the store did not come back after a crash
	// (it refused to start, or reported corruption): a finding, not a
	// failure of the run. The cell's trials stop there.
	Unrecovered *Unrecovered `json:"unrecovered,omitempty"`
	// LostOtherNodes sums NodeKill.LostOther over the trials: acknowledged
	// writes lost on nodes that were not killed (a finding when not 0).
	LostOtherNodes int64 `json:"lost_other_nodes,omitempty"`
	// Verdict says the outcome in one line.
	Verdict  string  `json:"verdict"`
	PerTrial []Trial `json:"per_trial"`
}

// Trial is one crash.
type Trial struct {
	Trial int `json:"trial"`
	// Acked is how many writes were acknowledged before the kill (all
	// writers); Lost how many of them were missing after the restart, Wrong
	// how many held another value.
	Acked   int64 `json:"acked"`
	Lost    int64 `json:"lost"`
	Wrong   int64 `json:"wrong"`
	LostAll bool  `json:"lost_all"`
	// InFlight counts writes sent and not acknowledged when the kill came;
	// InFlightPresent those of them found after the restart. Either outcome
	// is correct for them.
	InFlight        int `json:"in_flight"`
	InFlightPresent int `json:"in_flight_present"`
	// KillAfterS is the time from the start of the trial's writes to the kill;
	// KillDelayS its seeded random part, after MinAcked acknowledgements.
	KillAfterS float64 `json:"kill_after_s"`
	KillDelayS float64 `json:"kill_delay_s"`
	// WindowS is how long before the kill the oldest lost write was
	// acknowledged (±1 ms), WindowWrites how many acknowledged writes of all
	// writers came from then to the kill; both 0 when nothing was lost.
	WindowS      float64 `json:"window_s"`
	WindowWrites int64   `json:"window_writes"`
	// OldestLost is the key of the oldest lost write.
	OldestLost string `json:"oldest_lost,omitempty"`
	// RestartS is the server's restart until it answered its readiness
	// probe (crash recovery included); 0 for an in-process store.
	RestartS float64 `json:"restart_s"`
	// RecoveryS is the time from the restart (for an in-process store: from
	// the writer's death) to the first successful read; for a node kill,
	// from the kill to the first successful write to a key of the killed
	// node.
	RecoveryS float64 `json:"recovery_s"`
	// NodeKill is what killing one node of a cluster did; nil when the
	// whole store was killed.
	NodeKill *NodeKill `json:"node_kill,omitempty"`
}

// NodeKill is one trial's kill of one node of a cluster or pool, while the
// writers went on writing through the other nodes.
type NodeKill struct {
	Node string `json:"node"` // host:port
	Role string `json:"role"` // at the kill: primary, or server (a pool's)
	// Recovered says how its keys came back: "failover" (a replica took
	// over) or "restart" (storebench restarted the node after OutageS).
	Recovered string  `json:"recovered"`
	OutageS   float64 `json:"outage_s,omitempty"` // kill → storebench's restart
	// OutageErrors are the writers' failed writes from the kill to the
	// recovery, by errclass class.
	OutageErrors map[string]int64 `json:"outage_errors,omitempty"`
	// AckedKilled and LostKilled are the acknowledged writes on keys the
	// killed node held and those missing or wrong after the recovery;
	// AckedOther and LostOther the same on every other node's keys, where
	// a loss is a finding: those nodes never stopped.
	AckedKilled int64 `json:"acked_killed"`
	LostKilled  int64 `json:"lost_killed"`
	// AckedKilledBeforeKill are the AckedKilled acknowledged before the
	// killed node's processes were gone (the rest came after the
	// recovery): all a memcached server that comes back empty can lose.
	AckedKilledBeforeKill int64 `json:"acked_killed_before_kill"`
	AckedOther            int64 `json:"acked_other"`
	LostOther             int64 `json:"lost_other"`
}

// Cuts sums what the power cuts of a cell discarded, over its trials.
type Cuts struct {
	Cuts int `json:"cuts"`
	// FilesRolledBack: surviving files whose content went back to their
	// last fsync; BytesDiscarded: bytes written since their file's last
	// fsync; NamesUndone: names created, removed or renamed since their
	// directory's last fsync, taken back; WritesRefused: writes refused
	// because their undo would not fit in memory.
	FilesRolledBack int64 `json:"files_rolled_back"`
	BytesDiscarded  int64 `json:"bytes_discarded"`
	NamesUndone     int64 `json:"names_undone"`
	WritesRefused   int64 `json:"writes_refused,omitempty"`
}

// FSCost compares one writer's write latency, in microseconds, through the
// store on its plain directory (Plain) and on the power-cut filesystem
// (Mount): the difference is the filesystem's (the FUSE round trip and
// its undo log), not the store's. Its phases are the cell's "fs-plain" and
// "fs-powercut".
type FSCost struct {
	Writes int64   `json:"writes"` // on each side
	Plain  Latency `json:"plain_us"`
	Mount  Latency `json:"mount_us"`
}

// Latency is a write phase's latency summary, in microseconds.
type Latency struct {
	P50  float64 `json:"p50"`
	P99  float64 `json:"p99"`
	Mean float64 `json:"mean"`
}

// Unrecovered is how a store failed to recover after trial Trial's crash:
// its error and the last lines of its server's log ("" for files and
// SQLite, whose error is all they say).
type Unrecovered struct {
	Trial   int    `json:"trial"`
	Error   string `json:"error"`
	LogTail string `json:"log_tail,omitempty"`
}
