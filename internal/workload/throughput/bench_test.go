package throughput

import (
	"context"
	"strconv"
	"syscall"
	"testing"

	"github.com/storebench/storebench/internal/load"
	"github.com/storebench/storebench/internal/metrics"
	"github.com/storebench/storebench/internal/server"
	"github.com/storebench/storebench/internal/server/servertest"
	"github.com/storebench/storebench/internal/store/redis"
	"github.com/storebench/storebench/internal/store/storetest"
	"github.com/storebench/storebench/internal/workload"
)

// BenchmarkThroughput is redis-benchmark -t set,get -c 50 [-P 16] against a
// managed Redis without persistence. b.N is the op count of the phase;
// besides ns/op it reports ops/s, the client's CPU per op (the whole test
// process: engine, workload, driver) and the server's.
//
//	go test -run '^$' -bench Throughput -benchtime 200000x ./internal/workload/throughput
func BenchmarkThroughput(b *testing.B) {
	srv := servertest.Start(b, server.Redis, server.Options{Profile: "none"})
	st, err := redis.New(context.Background(), redis.Config{URL: srv.URL, Namespace: storetest.Namespace(b)})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close(context.Background()) })
	for _, depth := range []int{1, 16} {
		for _, op := range Ops {
			b.Run("P"+strconv.Itoa(depth)+"/"+op, func(b *testing.B) {
				p := Params{Operations: []string{op}, Load: workload.Load{Clients: 50, Pipeline: depth, Ops: int64(b.N)}}
				probe := &serverCPU{srv: srv}
				phases, err := Run(context.Background(), st, p, workload.Hooks{Probe: func(string) load.Probe { return probe }})
				if err != nil {
					b.Fatal(err)
				}
				ph := phases[len(phases)-1]
				if len(ph.Errors) != 0 {
					b.Fatalf("errors %v %v", ph.Errors, ph.ErrorSamples)
				}
				b.ReportMetric(ph.ThroughputOpsS, "ops/s")
				b.ReportMetric(ph.ClientCPUUsPerOp, "client-cpu-µs/op")
				b.ReportMetric(probe.usPerOp, "server-cpu-µs/op")
				b.ReportMetric(probe.userUs, "client-user-µs/op")
				b.ReportMetric(probe.sysUs, "client-sys-µs/op")
			})
		}
	}
}

// serverCPU measures a managed server's CPU over the measured part.
// and splits the client's CPU into user and system time (getrusage), as
// /usr/bin/time does for redis-benchmark.
type serverCPU struct {
	srv           *server.Server
	t0            float64
	ru0           syscall.Rusage
	usPerOp       float64
	userUs, sysUs float64
}

func (s *serverCPU) Begin() {
	if st, err := s.srv.Stats(); err == nil {
		s.t0 = st.CPUSeconds
	}
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &s.ru0)
}

func (s *serverCPU) End(p *metrics.Phase) {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	if p.Ops == 0 {
		return
	}
	us := func(a, b syscall.Timeval) float64 {
		return float64((b.Sec-a.Sec)*1e6+(b.Usec-a.Usec)) / float64(p.Ops)
	}
	s.userUs, s.sysUs = us(s.ru0.Utime, ru.Utime), us(s.ru0.Stime, ru.Stime)
	if st, err := s.srv.Stats(); err == nil {
		s.usPerOp = (st.CPUSeconds - s.t0) * 1e6 / float64(p.Ops)
	}
}
