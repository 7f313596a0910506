package metrics

import (
	"bytes"
	"os"
	"runtime"
	"strconv"
	"syscall"
	"time"
)

// PlacementSampler samples where this process's threads and a server's
// threads run (see Placement), from its own goroutine, until Stop.
type PlacementSampler struct {
	serverPIDs func() []int
	stop, done chan struct{}
	res        *Placement

	// Used by the sampling goroutine only.
	self     int // the sampler's own thread, left out of the client
	threads  map[int]*sampledThread
	listed   time.Time
	cli, srv []float64 // this interval's CPU ticks per CPU
	acc      placementAcc
	path     []byte
	stat     []byte
}

// sampledThread keeps its stat file open: a pread costs a third of an
// open, read and close (2 µs against 6 µs, measured).
type sampledThread struct {
	fd     int
	server bool
	ticks  uint64
	listed bool // still in its task directory at the last listing
}

// listEvery is how often the threads are listed again, which costs more
// than reading them (a directory per process, the server's process tree);
// in between, the known ones are re-read.
const listEvery = time.Second

// StartPlacement reads the threads of this process and of the processes
// serverPIDs returns, then samples them every PlacementInterval until Stop.
// It returns once the first reading is taken.
func StartPlacement(serverPIDs func() []int) *PlacementSampler {
	s := &PlacementSampler{
		serverPIDs: serverPIDs,
		stop:       make(chan struct{}),
		done:       make(chan struct{}),
		threads:    map[int]*sampledThread{},
		stat:       make([]byte, 1024),
	}
	ready := make(chan struct{})
	go s.loop(ready)
	<-ready
	return s
}

// Stop takes a last sample and returns the phase's placement: nil when
// client or server used no measurable CPU time, or /proc is unreadable.
func (s *PlacementSampler) Stop() *Placement {
	if s == nil {
		return nil
	}
	close(s.stop)
	<-s.done
	return s.res
}

func (s *PlacementSampler) loop(ready chan<- struct{}) {
	defer close(s.done)
	defer s.closeAll()
	// A thread of its own, so its reading /proc is not counted as the
	// client's work.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	s.self = syscall.Gettid()
	s.list()
	close(ready)
	t := time.NewTicker(PlacementInterval)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			s.sample()
			if time.Since(s.listed) >= listEvery {
				s.list()
			}
		case <-s.stop:
			s.sample()
			s.res = s.acc.result()
			return
		}
	}
}

// sample reads every known thread's CPU and ticks: the ticks since the
// previous read make one interval.
func (s *PlacementSampler) sample() {
	clear(s.cli)
	clear(s.srv)
	for tid, th := range s.threads {
		cpu, ticks, ok := s.readStat(th.fd)
		if !ok { // exited
			syscall.Close(th.fd)
			delete(s.threads, tid)
			continue
		}
		if ticks > th.ticks {
			perCPU := &s.cli
			if th.server {
				perCPU = &s.srv
			}
			for len(*perCPU) <= cpu {
				*perCPU = append(*perCPU, 0)
			}
			(*perCPU)[cpu] += float64(ticks - th.ticks)
		}
		th.ticks = ticks
	}
	s.acc.add(s.cli, s.srv)
}

// list finds the threads of this process and of the server's processes; a
// thread found now only sets its baseline: its time counts from the next
// sample.
func (s *PlacementSampler) list() {
	s.listed = time.Now()
	for _, th := range s.threads {
		th.listed = false
	}
	s.listTasks(-1)
	for _, pid := range s.serverPIDs() {
		s.listTasks(pid)
	}
	for tid, th := range s.threads {
		if !th.listed { // gone from its process
			syscall.Close(th.fd)
			delete(s.threads, tid)
		}
	}
}

// listTasks opens the stat file of every thread of process pid (-1: this
// one) not known yet.
func (s *PlacementSampler) listTasks(pid int) {
	s.path = append(s.path[:0], "/proc/"...)
	if pid < 0 {
		s.path = append(s.path, "self"...)
	} else {
		s.path = strconv.AppendInt(s.path, int64(pid), 10)
	}
	s.path = append(s.path, "/task/"...)
	dir := len(s.path)
	f, err := os.Open(string(s.path))
	if err != nil {
		return // exited
	}
	tids, _ := f.Readdirnames(-1)
	f.Close()
	for _, name := range tids {
		tid, err := strconv.Atoi(name)
		if err != nil || tid == s.self {
			continue
		}
		if th, ok := s.threads[tid]; ok {
			th.listed = true
			continue
		}
		s.path = append(append(s.path[:dir], name...), "/stat"...)
		fd, err := syscall.Open(string(s.path), syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err != nil {
			continue
		}
		_, ticks, ok := s.readStat(fd)
		if !ok {
			syscall.Close(fd)
			continue
		}
		s.threads[tid] = &sampledThread{fd: fd, server: pid >= 0, ticks: ticks, listed: true}
	}
}

func (s *PlacementSampler) closeAll() {
	for tid, th := range s.threads {
		syscall.Close(th.fd)
		delete(s.threads, tid)
	}
}

// readStat reads the CPU a thread last ran on and its utime+stime; reading
// from offset 0 makes the kernel write the file afresh.
func (s *PlacementSampler) readStat(fd int) (cpu int, ticks uint64, ok bool) {
	n, err := syscall.Pread(fd, s.stat, 0)
	if err != nil || n <= 0 {
		return 0, 0, false
	}
	return parseTaskStat(s.stat[:n])
}

// parseTaskStat reads utime (field 14), stime (15) and processor (39) of a
// /proc/PID/task/TID/stat line; the command name (field 2) may hold spaces
// and parentheses, so fields are counted from its closing one.
func parseTaskStat(b []byte) (cpu int, ticks uint64, ok bool) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, false
	}
	var utime, stime uint64
	field := 2 // the command
	for rest := b[i+1:]; field < 39; {
		rest = bytes.TrimLeft(rest, " ")
		end := bytes.IndexAny(rest, " \n")
		if end < 0 {
			end = len(rest)
		}
		if end == 0 {
			return 0, 0, false // short line
		}
		field++
		switch field {
		case 14, 15, 39:
			v, okNum := parseDigits(rest[:end])
			if !okNum {
				return 0, 0, false
			}
			switch field {
			case 14:
				utime = v
			case 15:
				stime = v
			default:
				if v > 1<<16 {
					return 0, 0, false
				}
				cpu = int(v)
			}
		}
		rest = rest[end:]
	}
	return cpu, utime + stime, true
}

// parseDigits parses a decimal number without the allocation of
// strconv.ParseUint(string(b)).
func parseDigits(b []byte) (uint64, bool) {
	if len(b) == 0 || len(b) > 19 {
		return 0, false
	}
	var v uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + uint64(c-'0')
	}
	return v, true
}
