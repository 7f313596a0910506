package cli

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/storebench/storebench/internal/kinds"
	"github.com/storebench/storebench/internal/workload/all"
)

// numericFlags are the run command's numeric flags the fuzz target varies,
// in the order of its arguments.
var numericFlags = []string{"rate", "clients", "pipeline", "keys", "value-size", "batch", "ops", "duration", "warmup", "warmup-ops", "repeat", "client-threads", "read-ratio", "time-scale"}

// fuzzRuns are what the fuzz target runs: every workload, on in-process
// stores only, so that checking a plan touches no server. sessions,
// payments and durability are the suites, whose sections they need.
var fuzzRuns = []struct{ name, stores string }{
	{"kv", "memory"}, {"throughput", "memory"}, {"mix", "memory"}, {"hotkey", "memory"}, {"web", "memory"},
	{"sessions", "sqlite"}, {"payments", "sqlite"}, {"durability", "sqlite"}, {"quick", "memory"},
}

// testApp is the binary's command line: its store kinds (internal/kinds)
// and workloads; planning a run opens no store.
func testApp() *App {
	return &App{Registry: kinds.All(), Workloads: all.Types(), Version: "test", Commit: "test"}
}

// checkRunFlags parses args as the run command does and plans the run
// without starting it; the error is what a run would stop with.
func checkRunFlags(name string, args []string) error {
	cmd := &cobra.Command{}
	cmd.SetContext(context.Background())
	f := new(runFlags)
	f.bind(cmd)
	if err := cmd.ParseFlags(args); err != nil {
		return &UsageError{Err: err} // as the root command's flag error func makes it
	}
	_, err := testApp().planRun(cmd, name, *f)
	return err
}

// FuzzNumericFlags gives the numeric flags of `storebench run` any values
// through the checks a run makes before any work (planRun): nothing panics,
// and a refusal is a usage error (exit 2) of one line.
func FuzzNumericFlags(f *testing.F) {
	seed := func(run uint8, quick bool, flags map[string]string) {
		v := func(i int) string { return flags[numericFlags[i]] }
		f.Add(run, quick, v(0), v(1), v(2), v(3), v(4), v(5), v(6), v(7), v(8), v(9), v(10), v(11), v(12), v(13))
	}
	// Issue 15's cases, then each flag's edges.
	seed(0, false, map[string]string{"value-size": "9223372036854775807"})
	seed(1, false, map[string]string{"rate": "1e300", "duration": "1s"})
	seed(1, false, map[string]string{"rate": "1e-9", "duration": "1s"})
	seed(1, false, map[string]string{"rate": "1e-9", "ops": "10"})
	seed(1, false, map[string]string{"clients": "1000000"})
	seed(1, false, map[string]string{"pipeline": "100000000"})
	seed(0, false, map[string]string{"keys": "1000000000000"})
	seed(0, false, map[string]string{"keys": "10000000000000M"})
	seed(0, false, map[string]string{"keys": "1000000000", "value-size": "536870912"})
	seed(0, false, map[string]string{"value-size": "1000000000"})
	seed(1, false, map[string]string{"clients": "10000", "pipeline": "10000", "value-size": "536870912"})
	seed(0, false, map[string]string{"keys": "-5", "clients": "-1", "value-size": "-1", "batch": "-1"})
	seed(2, false, map[string]string{"rate": "NaN", "duration": "1s"})
	seed(2, false, map[string]string{"rate": "+Inf", "read-ratio": "NaN"})
	seed(3, false, map[string]string{"duration": "2562047h47m16.854775807s", "warmup": "-1s"})
	seed(3, false, map[string]string{"ops": "9223372036854775807", "warmup-ops": "9223372036854775807"})
	seed(4, false, map[string]string{"ops": "1000", "rate": "0.001"})
	seed(5, true, map[string]string{"time-scale": "NaN", "rate": "1e-300", "clients": "5"})
	seed(5, false, map[string]string{"time-scale": "1e300", "duration": "1000h"})
	seed(6, true, map[string]string{"clients": "100000", "ops": "1"})
	seed(7, false, map[string]string{"clients": "5000"})
	seed(8, true, map[string]string{"repeat": "101", "client-threads": "100000"})
	seed(8, false, map[string]string{"repeat": "0", "client-threads": "-1", "batch": "0", "pipeline": "0"})
	seed(0, false, map[string]string{"keys": "1000", "batch": "1000", "warmup-ops": "10"})
	// Issue 28's: a zero where zero is no value, a fraction, a value twice.
	seed(1, false, map[string]string{"duration": "0s"})
	seed(2, true, map[string]string{"duration": "0s", "warmup": "1s", "rate": "100"})
	seed(1, false, map[string]string{"repeat": "0"})
	seed(8, true, map[string]string{"client-threads": "0", "clients": "0", "ops": "0"})
	seed(0, false, map[string]string{"value-size": "1.5", "keys": "10.5"})
	seed(0, false, map[string]string{"keys": "100,100"})
	seed(0, false, map[string]string{"keys": "1k,1000", "value-size": "0"})
	f.Fuzz(func(t *testing.T, run uint8, quick bool, rate, clients, pipeline, keys, valueSize, batch, ops, duration, warmup, warmupOps, repeat, clientThreads, readRatio, timeScale string) {
		r := fuzzRuns[int(run)%len(fuzzRuns)]
		args := []string{"--stores", r.stores}
		if quick {
			args = append(args, "--quick")
		}
		for i, v := range []string{rate, clients, pipeline, keys, valueSize, batch, ops, duration, warmup, warmupOps, repeat, clientThreads, readRatio, timeScale} {
			if v != "" {
				args = append(args, "--"+numericFlags[i]+"="+v)
			}
		}
		err := checkRunFlags(r.name, args)
		if err == nil {
			return
		}
		var ue *UsageError
		if !errors.As(err, &ue) {
			t.Fatalf("run %s %q: %v is not a usage error (exit 2)", r.name, args, err)
		}
		if strings.ContainsAny(err.Error(), "\n\r") {
			t.Fatalf("run %s %q: the error is not one line:\n%s", r.name, args, err)
		}
	})
}
