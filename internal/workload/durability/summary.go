package durability

import (
	"fmt"
	"strings"

	schema "github.com/storebench/storebench/internal/result/durability"
	"github.com/storebench/storebench/internal/target"
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

// expectations says what a store of kind k loses on a process crash and on
// a power loss under its effective settings (store.Info merged with the
// managed server's, as the target records them): the kind's CrashLoss.
func expectations(k target.Kind, set map[string]string) (processCrash, powerLoss string) {
	if k.CrashLoss == nil {
		return "unknown", "unknown"
	}
	return k.CrashLoss(set)
}
