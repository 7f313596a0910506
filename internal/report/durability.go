package report

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/storebench/storebench/internal/result"
	"github.com/storebench/storebench/internal/workload/durability"
)

// DurabilityText prints the durability workload's cells for the terminal:
// acknowledged writes lost per target when its process is SIGKILLed, over
// how many trials, the loss window and the recovery time; then, per target,
// what a process crash is expected to lose and what a power loss would
// lose, which the run does not test. It prints nothing when the result has
// no durability cell.
func DurabilityText(w io.Writer, r *result.Result) {
	var cells []*result.Cell
	for i := range r.Cells {
		if c := &r.Cells[i]; c.Workload == "durability" {
			cells = append(cells, c)
		}
	}
	if len(cells) == 0 {
		return
	}
	fmt.Fprintln(w, "\ndurability: acknowledged writes lost when the store's process is SIGKILLed and restarted (a process crash, not a power loss)")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "target\ttrials\tacked\tlost max\tlost mean\tlost per trial\tlost all\twindow max\trecovery mean\trecovery max\t")
	for _, c := range cells {
		s := c.Durability
		if s == nil {
			fmt.Fprintf(tw, "%s\t—\t—\t—\t—\t—\t—\t—\t—\t—\t\n", rowName(c))
			continue
		}
		trials := fmt.Sprintf("%d/%d", s.Trials, s.TrialsAsked)
		if s.Trials == 0 {
			fmt.Fprintf(tw, "%s\t%s\t—\t—\t—\t—\t—\t—\t—\t—\t\n", rowName(c), trials)
			continue
		}
		all := "—"
		if s.LossTrials > 0 {
			all = fmt.Sprintf("%d of %d", s.LostAllTrials, s.Trials)
		}
		window := "—"
		if s.LossTrials > 0 {
			window = fmt.Sprintf("%s s, %s writes", durSecs(s.WindowMaxS), thousands(s.WindowMaxWrites))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s s\t%s s\t\n", rowName(c), trials, thousands(s.Acked),
			thousands(s.LostMax), durMean(s.LostMean), perTrialLost(s.PerTrial), all, window, durSecs(s.RecoveryMeanS), durSecs(s.RecoveryMaxS))
	}
	tw.Flush()
	fmt.Fprintln(w, "  acked: writes acknowledged before the kills, all trials; lost: acknowledged writes missing (or holding another value) after the restart;")
	fmt.Fprintln(w, "  lost all: trials that lost every acknowledged write; window: how long before the kill the oldest lost write was acknowledged, and how many")
	fmt.Fprintln(w, "  acknowledged writes came from then on; recovery: restart (for files and SQLite: the writer's death) to the first successful read.")
	for _, c := range cells {
		if c.Status != result.CellOK && c.Error != "" {
			fmt.Fprintf(w, "  %s failed: %s\n", rowName(c), durFirstLine(c.Error))
		}
	}
	fmt.Fprintln(w, "\n"+durWrap(durability.NotPowerLoss, 110, ""))
	fmt.Fprintln(w, "\nwhat each configuration loses (measured: the verdict; expected on a process crash, and on a power loss or OS crash, which is not tested):")
	for _, c := range cells {
		s := c.Durability
		if s == nil || s.Verdict == "" && s.ProcessCrash == "" {
			continue
		}
		fmt.Fprintf(w, "  %s: %s\n", rowName(c), s.Verdict)
		fmt.Fprintf(w, "    process crash: %s\n", s.ProcessCrash)
		fmt.Fprintf(w, "    power loss:    %s\n", s.PowerLoss)
		if strings.HasPrefix(s.Filesystem, "tmpfs") {
			fmt.Fprintf(w, "    data on %s\n", s.Filesystem)
		}
	}
}

// perTrialLost lists each trial's lost writes, the first few of them.
func perTrialLost(ts []durability.Trial) string {
	const show = 6
	var parts []string
	for i, t := range ts {
		if i == show {
			parts = append(parts, "…")
			break
		}
		parts = append(parts, thousands(t.Lost+t.Wrong))
	}
	if len(parts) == 0 {
		return "—"
	}
	return strings.Join(parts, " / ")
}

func durSecs(v float64) string {
	switch {
	case v >= 10:
		return fixed(v, 1)
	case v >= 0.01:
		return fixed(v, 2)
	}
	return fixed(v, 3)
}

func durMean(v float64) string {
	if math.Abs(v) >= 100 {
		return whole(v)
	}
	return fixed(v, 1)
}

func durFirstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

// durWrap breaks text into lines of at most width characters, each after the
// first starting with indent.
func durWrap(text string, width int, indent string) string {
	var b strings.Builder
	n := 0
	for i, word := range strings.Fields(text) {
		if i > 0 && n+1+len(word) > width {
			b.WriteString("\n" + indent)
			n = len(indent)
		} else if i > 0 {
			b.WriteByte(' ')
			n++
		}
		b.WriteString(word)
		n += len(word)
	}
	return b.String()
}
