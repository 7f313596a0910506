package durability

import (
	"fmt"
	"strconv"
	"strings"

	schema "github.com/storebench/storebench/internal/result/durability"
)

// phasesNote is Summary.Phases.
const phasesNote = "write-N is trial N's writes until the kill: latency and throughput of the writes acknowledged, " +
	"writes in flight at the kill not counted; a managed server's CPU, disk and server-side time are read just before the kill"

// addTrial counts trial t into s.
func addTrial(s *schema.Summary, t schema.Trial) {
	s.PerTrial = append(s.PerTrial, t)
	s.Trials = len(s.PerTrial)
	s.Acked += t.Acked
	s.Lost += t.Lost
	s.Wrong += t.Wrong
	bad := t.Lost + t.Wrong
	s.LostMax = max(s.LostMax, bad)
	if bad > 0 {
		s.LossTrials++
	}
	if t.LostAll {
		s.LostAllTrials++
	}
	if t.WindowS > s.WindowMaxS {
		s.WindowMaxS = t.WindowS
	}
	s.WindowMaxWrites = max(s.WindowMaxWrites, t.WindowWrites)
	s.RecoveryMaxS = max(s.RecoveryMaxS, t.RecoveryS)
	if t.NodeKill != nil {
		s.LostOtherNodes += t.NodeKill.LostOther
	}
	var lost int64
	var rec float64
	for _, x := range s.PerTrial {
		lost += x.Lost + x.Wrong
		rec += x.RecoveryS
	}
	s.LostMean = float64(lost) / float64(s.Trials)
	s.RecoveryMeanS = rec / float64(s.Trials)
	s.Verdict = verdict(s)
}

// verdict says the outcome of s in one line.
func verdict(s *schema.Summary) string {
	n := s.Trials
	if u := s.Unrecovered; u != nil {
		first, _, _ := strings.Cut(u.Error, "\n")
		if n == 0 {
			return fmt.Sprintf("did not recover after trial %d's crash: %s", u.Trial, first)
		}
		return fmt.Sprintf("did not recover after trial %d's crash (the %d trials before it lost %d of %d acknowledged writes): %s", u.Trial, n, s.Lost+s.Wrong, s.Acked, first)
	}
	if s.LostOtherNodes > 0 {
		// The nodes that were not killed never stopped: nothing excuses it.
		return fmt.Sprintf("FINDING: lost %d acknowledged writes on nodes that were NOT killed, over %d trials (%d lost in all, of %d acknowledged)",
			s.LostOtherNodes, n, s.Lost+s.Wrong, s.Acked)
	}
	switch {
	case n == 0:
		return "no trial finished"
	case s.LossTrials == 0:
		return fmt.Sprintf("lost no acknowledged write in %d of %d trials (%d writes acknowledged)", n, n, s.Acked)
	case s.LostAllTrials == n:
		return fmt.Sprintf("lost every acknowledged write in %d of %d trials (%d of %d)", n, n, s.Lost+s.Wrong, s.Acked)
	}
	return fmt.Sprintf("lost acknowledged writes in %d of %d trials: up to %d (mean %.1f), acknowledged up to %.3f s (%d writes) before the kill",
		s.LossTrials, n, s.LostMax, s.LostMean, s.WindowMaxS, s.WindowMaxWrites)
}

// expectations says what a configuration loses on a process crash and on a
// power loss, from the kind the store reports (store.Info.Kind: the
// protocol it speaks, so Valkey, reached through the redis store, is
// "redis") and its effective settings (store.Info merged with the managed
// server's, as the target records them).
func expectations(kind string, set map[string]string) (processCrash, powerLoss string) {
	get := func(k string) string { return strings.ToLower(strings.TrimSpace(set[k])) }
	switch kind {
	case "redis":
		switch {
		case get("appendonly") == "yes" && get("appendfsync") == "always":
			return "nothing acknowledged: the AOF is written and fsynced before the reply",
				"nothing acknowledged (fsync before every reply), if the disk honours fsync"
		case get("appendonly") == "yes" && get("appendfsync") == "everysec":
			return "almost nothing: Redis write()s the AOF before replying, so the page cache keeps it; only a write delayed behind a slow background fsync can be lost",
				"up to ~1-2 s of acknowledged writes (the AOF is fsynced once a second)"
		case get("appendonly") == "yes":
			return "almost nothing: the AOF is written before the reply and left to the OS",
				"whatever the OS had not flushed, typically up to ~30 s"
		case get("save") != "":
			return "every write since the last RDB snapshot (save " + set["save"] + ")",
				"every write since the last RDB snapshot that reached the disk"
		}
		return "everything: memory only, nothing is written", "everything"
	case "memcached":
		return "everything: memory only", "everything"
	case "memcached-pool":
		return "every write on the killed server's keys (memory only); nothing on the other servers' keys",
			"everything"
	case "redis-cluster":
		if n, _ := strconv.Atoi(set["cluster_replicas_per_primary"]); n > 0 {
			return "the writes the killed primary acknowledged but had not yet sent to its replica (replication is asynchronous); nothing on the other nodes' keys",
				"as each primary's own persistence, plus the writes not yet replicated"
		}
		node, _ := expectations("redis", set)
		return "on the killed primary's keys, what a single redis loses with these settings (" + node + "); nothing on the other nodes' keys",
			"as each primary's own persistence"

	case "postgres":
		switch {
		case get("design") == "unlogged" || get("table_persistence") == "unlogged":
			return "the whole table: crash recovery truncates UNLOGGED tables",
				"the whole table (truncated by crash recovery)"
		case get("fsync") == "off":
			return "nothing acknowledged: the WAL reaches the page cache at commit (fsync off only matters to the OS)",
				"anything, and the database may be corrupt (fsync off)"
		case get("synchronous_commit") == "off":
			return "the commits still in the WAL buffers (shared memory, gone with the processes): up to 3 × wal_writer_delay",
				"up to 3 × wal_writer_delay of commits (" + set["wal_writer_delay"] + " each); never corrupt"
		}
		return "nothing committed: the WAL is fsynced at every commit",
			"nothing committed (WAL fsynced at every commit), if the disk honours fsync"
	case "mysql":
		switch get("innodb_flush_log_at_trx_commit") {
		case "1":
			return "nothing committed: the redo log is written and fsynced at every commit",
				"nothing committed, if the disk honours fsync"
		case "2":
			return "nothing committed: the redo log is written to the OS at every commit (the page cache survives a killed process)",
				"up to ~1 s of commits (the redo log is fsynced once a second)"
		case "0":
			return "up to ~1 s of commits: the redo log stays in InnoDB's buffer until the once-a-second write",
				"up to ~1 s of commits"
		}
		return "unknown (innodb_flush_log_at_trx_commit=" + set["innodb_flush_log_at_trx_commit"] + ")", "unknown"
	case "sqlite":
		j, sync := strings.ToUpper(set["journal_mode"]), strings.ToUpper(set["synchronous"])
		switch {
		case j == "OFF" || j == "MEMORY":
			return "nothing committed, but a kill in the middle of a commit can corrupt the database (journal " + j + ")",
				"recent commits, and the database may be corrupt (journal " + j + ")"
		case sync == "OFF":
			return "nothing committed: every commit is written to the OS before it returns",
				"recent commits, and the database may be corrupt (no fsync at all)"
		case j == "WAL" && sync == "NORMAL":
			return "nothing committed: the WAL is written to the OS at every commit",
				"the commits since the last checkpoint's fsync (WAL, synchronous=NORMAL); never corrupt"
		case j == "DELETE" && sync != "EXTRA":
			// Measured through power cuts: the journal's unlink is the
			// commit, and a name change needs its directory's fsync.
			return "nothing committed",
				"the last commit: it ends by unlinking the journal, and only synchronous=EXTRA fsyncs the directory after that, so the journal can come back and roll it back"
		}
		return "nothing committed", "nothing committed (fsync at every commit), if the disk honours fsync"
	case "files":
		switch get("fsync") {
		case "true":
			return "nothing acknowledged", "nothing acknowledged (file and directory fsynced before the write returns), if the disk honours fsync"
		case "file":
			return "nothing acknowledged", "recent writes: each file's bytes are fsynced, its new name (the rename) is not until its directory is"
		}
		return "nothing acknowledged: each write is in the OS page cache before it returns",
			"recent writes (no fsync); a file renamed before its data reached the disk may come back empty"
	}
	return "unknown", "unknown"
}
