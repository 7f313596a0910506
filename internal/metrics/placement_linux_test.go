package metrics

import (
	"os"
	"os/exec"
	"runtime"
	"testing"
	"time"

	"github.com/storebench/storebench/internal/testkit"
)

func TestParseTaskStat(t *testing.T) {
	// Linux 6.x, a command name with a space and parentheses.
	line := "4242 (a) b (c)) S 1 4242 4242 0 -1 4194560 3061 0 0 0 123 45 0 0 20 0 8 0 " +
		"7788 1302528000 5264 18446744073709551615 1 1 0 0 0 0 0 0 1073745150 0 0 0 17 1 0 0 0 0 0 " +
		"0 0 0 0 0 0 0 0\n"
	cpu, ticks, ok := parseTaskStat([]byte(line))
	if !ok || cpu != 1 || ticks != 168 {
		t.Errorf("got cpu %d, ticks %d, %v; want cpu 1, ticks 123+45", cpu, ticks, ok)
	}
	for _, bad := range []string{"", "4242 (x", "4242 (x) S 1 2 3\n", "4242 (x) S 1 2 3 4 5 6 7 8 9 10 x 12 13\n"} {
		if _, _, ok := parseTaskStat([]byte(bad)); ok {
			t.Errorf("parsed %q", bad)
		}
	}
}

// TestPlacementSamplerSelf samples this process, kept busy by a spinning
// goroutine, as the client and a spinning child process as the server.
func TestPlacementSamplerSelf(t *testing.T) {
	stop := make(chan struct{})
	go func() {
		x := 0
		for {
			select {
			case <-stop:
				return
			default:
				x++
			}
		}
	}()
	child := testkit.Start(t, exec.Command("sh", "-c", "while :; do :; done")).Cmd
	s := StartPlacement(func() []int { return []int{child.Process.Pid} })
	time.Sleep(3 * PlacementInterval)
	p := s.Stop()
	close(stop)
	if p == nil {
		t.Fatal("no placement from two busy processes")
	}
	if p.Samples < 2 || len(p.Client) == 0 || len(p.Server) == 0 || p.SameCPU < 0 || p.SameCPU > 1 {
		t.Errorf("placement %+v", *p)
	}
	for cpu := range p.Client {
		if cpu >= runtime.NumCPU() {
			t.Errorf("client on CPU %d of %d", cpu, runtime.NumCPU())
		}
	}
}

// BenchmarkPlacementSample is the cost of one sample, with this process's
// threads standing for both client and server.
func BenchmarkPlacementSample(b *testing.B) {
	s := &PlacementSampler{
		serverPIDs: func() []int { return []int{os.Getpid()} },
		threads:    map[int]*sampledThread{},
		stat:       make([]byte, 1024),
	}
	defer s.closeAll()
	s.list()
	b.ResetTimer()
	for range b.N {
		s.sample()
	}
	b.ReportMetric(float64(len(s.threads)), "threads/sample")
}

// BenchmarkPlacementList is the cost of listing the threads again, which a
// sampler does once a second, with the same stand-in.
func BenchmarkPlacementList(b *testing.B) {
	s := &PlacementSampler{
		serverPIDs: func() []int { return []int{os.Getpid()} },
		threads:    map[int]*sampledThread{},
		stat:       make([]byte, 1024),
	}
	defer s.closeAll()
	for range b.N {
		s.list()
	}
}
