package durability

// The writer process of an in-process store. Killing files or SQLite means
// killing the process that writes them, so for those stores (a kind with
// target.Kind.Reattach) the writes run
// in a child process that storebench SIGKILLs, and the journal of
// acknowledged writes stays in the parent: a write counts as acknowledged
// when its reply has reached the parent.
//
// The child is this executable started again with ChildEnv in its
// environment (and ChildArg as its argument, for a CLI that dispatches on
// it). Its main, or a test binary's TestMain, must call ChildMain first:
//
//	if durability.IsChild() {
//		os.Exit(durability.ChildMain(kinds.All()))
//	}
//
// Protocol, over the child's stdin and stdout, little-endian: the parent
// sends set requests [u16 writer][u32 key length][u32 value length][key]
// [value]; the child answers each with [u16 writer][u8 status][u32 message
// length][message], status 0 for success, 1 for an error whose message
// follows. Each writer has at most one request in flight. The child first
// sends a ready frame from writer 0xffff (status 1: it could not open the
// store, and exits). End of stdin ends the child.

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/storebench/storebench/internal/errclass"
	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/target"
)

const (
	// ChildEnv holds the child's spec (JSON); its presence makes a process
	// the writer child.
	ChildEnv = "STOREBENCH_DURABILITY_CHILD"
	// ChildArg is the child's only argument: a hidden subcommand name for a
	// CLI that prefers to dispatch on arguments.
	ChildArg = "__durability-child"

	readyWriter  = 0xffff
	childTimeout = 30 * time.Second // for the child to attach and say it is ready
	maxFrame     = 64 << 20
)

// childSpec is what the child opens: an in-process store of kind Store,
// attached to the namespace the parent's store created, which Info (the
// parent's store's own) describes.
type childSpec struct {
	Store   string     `json:"store"`
	Info    store.Info `json:"info"`
	Writers int        `json:"writers"`
	// reattach is the kind's (target.Kind.Reattach), on both sides.
	reattach *target.Reattach
}

// childSpecFor derives the child's spec from the parent's view of the store:
// its kind, and the location and effective settings it reported.
func childSpecFor(k target.Kind, info store.Info) (*childSpec, error) {
	if k.Reattach == nil {
		return nil, fmt.Errorf("durability: store %s runs in-process but has no writer process (it cannot be reopened by another)", k.Name)
	}
	if info.Location == "" || info.Namespace == "" {
		return nil, fmt.Errorf("durability: the %s store reported no location or namespace", k.Name)
	}
	return &childSpec{Store: k.Name, Info: info, reattach: k.Reattach}, nil
}

func (s *childSpec) attach(ctx context.Context) (store.Store, error) {
	return s.reattach.Attach(ctx, s.Info)
}

// IsChild reports whether this process was started as the writer child.
func IsChild() bool { return os.Getenv(ChildEnv) != "" }

// ChildMain runs the writer child on stdin and stdout and returns the exit
// code. Call it first thing in main (or TestMain) when IsChild is true,
// with the binary's store kinds: the child opens its store by the kind's
// Reattach.
func ChildMain(kinds target.Registry) int {
	if err := runChild(context.Background(), kinds, os.Getenv(ChildEnv), os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "storebench durability child:", err)
		return 1
	}
	return 0
}

// frameWriter writes whole frames, one write call each, from many goroutines.
type frameWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (f *frameWriter) reply(writer uint16, err error) error {
	var msg string
	status := byte(0)
	if err != nil {
		status, msg = 1, err.Error()
	}
	b := make([]byte, 7, 7+len(msg))
	binary.LittleEndian.PutUint16(b, writer)
	b[2] = status
	binary.LittleEndian.PutUint32(b[3:], uint32(len(msg)))
	b = append(b, msg...)
	f.mu.Lock()
	defer f.mu.Unlock()
	_, werr := f.w.Write(b)
	return werr
}

func runChild(ctx context.Context, kinds target.Registry, rawSpec string, in io.Reader, out io.Writer) error {
	fw := &frameWriter{w: out}
	var spec childSpec
	if err := json.Unmarshal([]byte(rawSpec), &spec); err != nil {
		err = fmt.Errorf("bad %s: %w", ChildEnv, err)
		_ = fw.reply(readyWriter, err)
		return err
	}
	if spec.Writers <= 0 || spec.Writers > maxWriters {
		err := fmt.Errorf("bad writer count %d", spec.Writers)
		_ = fw.reply(readyWriter, err)
		return err
	}
	if k, ok := kinds.Lookup(spec.Store); ok && k.Reattach != nil {
		spec.reattach = k.Reattach
	} else {
		err := fmt.Errorf("cannot open store %q: not a kind another process can reopen", spec.Store)
		_ = fw.reply(readyWriter, err)
		return err
	}
	st, err := spec.attach(ctx)
	if err != nil {
		_ = fw.reply(readyWriter, err)
		return err
	}
	defer st.Close(context.WithoutCancel(ctx))
	type request struct{ key, val []byte }
	chans := make([]chan request, spec.Writers)
	var wg sync.WaitGroup
	defer wg.Wait()
	for i := range chans {
		c, err := st.Open(ctx)
		if err != nil {
			_ = fw.reply(readyWriter, err)
			for _, ch := range chans[:i] {
				close(ch)
			}
			return err
		}
		kv, ok := c.(store.KV)
		if !ok {
			c.Close()
			for _, ch := range chans[:i] {
				close(ch)
			}
			_ = fw.reply(readyWriter, store.ErrUnsupported)
			return store.ErrUnsupported
		}
		ch := make(chan request, 1)
		chans[i] = ch
		wg.Go(func() {
			defer c.Close()
			for r := range ch {
				if err := fw.reply(uint16(i), kv.Set(ctx, r.key, r.val, 0)); err != nil {
					return // the parent is gone
				}
			}
		})
	}
	defer func() {
		for _, ch := range chans {
			close(ch)
		}
	}()
	if err := fw.reply(readyWriter, nil); err != nil {
		return err
	}
	// Each writer has one request in flight at most, so its buffers can be
	// reused once it has answered: two per writer, alternating.
	bufs := make([][2][]byte, spec.Writers)
	turn := make([]int, spec.Writers)
	r := bufio.NewReaderSize(in, 64<<10)
	var hdr [10]byte
	for {
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("read request: %w", err)
		}
		w := int(binary.LittleEndian.Uint16(hdr[:]))
		kl, vl := binary.LittleEndian.Uint32(hdr[2:]), binary.LittleEndian.Uint32(hdr[6:])
		if w >= spec.Writers || uint64(kl)+uint64(vl) > maxFrame {
			return fmt.Errorf("bad request: writer %d, %d+%d bytes", w, kl, vl)
		}
		b := &bufs[w][turn[w]]
		turn[w] ^= 1
		if cap(*b) < int(kl+vl) {
			*b = make([]byte, kl+vl)
		}
		*b = (*b)[:kl+vl]
		if _, err := io.ReadFull(r, *b); err != nil {
			return fmt.Errorf("read request: %w", err)
		}
		chans[w] <- request{key: (*b)[:kl], val: (*b)[kl:]}
	}
}

// childProc is the parent's handle on a running child.
type childProc struct {
	cmd     *exec.Cmd
	mu      sync.Mutex // serializes frames on stdin
	stdin   io.WriteCloser
	replies []chan error  // one per writer, buffered
	dead    chan struct{} // closed when the child's stdout ends
	stderr  *tailBuffer
	killed  bool
	readErr error // why the reader stopped, valid after dead
}

// errChildGone is what a write in flight gets when the child died.
var errChildGone = errclass.WithClass(errclass.ClassUnavailable, errors.New("durability: the writer process is gone"))

// startChild starts the child for spec and waits until it is ready.
func startChild(ctx context.Context, argv []string, spec *childSpec) (_ *childProc, err error) {
	raw, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	if len(argv) == 0 {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("durability: find this executable to start the writer process: %w", err)
		}
		argv = []string{exe, ChildArg}
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), ChildEnv+"="+string(raw))
	cmd.SysProcAttr = childSysProcAttr()
	p := &childProc{cmd: cmd, dead: make(chan struct{}), stderr: &tailBuffer{max: 4 << 10}}
	cmd.Stderr = p.stderr
	if p.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("durability: start the writer process %s: %w", argv[0], err)
	}
	defer func() {
		if err != nil {
			p.kill()
		}
	}()
	p.replies = make([]chan error, spec.Writers)
	for i := range p.replies {
		p.replies[i] = make(chan error, 1)
	}
	ready := make(chan error, 1)
	go p.read(bufio.NewReaderSize(stdout, 64<<10), ready)
	t := time.NewTimer(childTimeout)
	defer t.Stop()
	select {
	case err = <-ready:
	case <-p.dead:
		err = errChildGone
	case <-t.C:
		err = fmt.Errorf("not ready after %v", childTimeout)
	case <-ctx.Done():
		err = ctx.Err()
	}
	if err != nil {
		return nil, fmt.Errorf("durability: writer process %s: %w%s", strings.Join(argv, " "), err, p.stderrNote())
	}
	return p, nil
}

func (p *childProc) stderrNote() string {
	if s := strings.TrimSpace(p.stderr.String()); s != "" {
		return "\nits stderr:\n" + s
	}
	return ""
}

// read dispatches the child's replies until its stdout ends.
func (p *childProc) read(r *bufio.Reader, ready chan<- error) {
	defer close(p.dead)
	var hdr [7]byte
	for {
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			p.readErr = err
			return
		}
		w := binary.LittleEndian.Uint16(hdr[:])
		n := binary.LittleEndian.Uint32(hdr[3:])
		if n > maxFrame {
			p.readErr = fmt.Errorf("bad reply: %d bytes", n)
			return
		}
		var err error
		if hdr[2] != 0 {
			msg := make([]byte, n)
			if _, rerr := io.ReadFull(r, msg); rerr != nil {
				p.readErr = rerr
				return
			}
			err = errors.New(string(msg))
		} else if _, rerr := r.Discard(int(n)); rerr != nil {
			p.readErr = rerr
			return
		}
		switch {
		case w == readyWriter:
			ready <- err
		case int(w) < len(p.replies):
			select {
			case p.replies[w] <- err:
			default:
				p.readErr = fmt.Errorf("writer %d answered twice", w)
				return
			}
		default:
			p.readErr = fmt.Errorf("reply for unknown writer %d", w)
			return
		}
	}
}

// kill SIGKILLs the child, as a crash would, and waits until it is reaped.
// Calling it again does nothing.
func (p *childProc) kill() error {
	p.mu.Lock()
	if p.killed {
		p.mu.Unlock()
		return nil
	}
	p.killed = true
	p.mu.Unlock()
	err := p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.dead // the child's end of the pipe closes when it dies
	_ = p.cmd.Wait()
	_ = p.stdin.Close()
	if err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("durability: kill the writer process: %w", err)
	}
	return nil
}

// kv is writer w's handle: store.KV over the child. Only Set is supported.
func (p *childProc) kv(w int) *childKV {
	return &childKV{p: p, w: uint16(w)}
}

type childKV struct {
	p     *childProc
	w     uint16
	frame []byte
}

var _ store.KV = (*childKV)(nil)

func (c *childKV) Close() error { return nil }

// Set sends the write to the child and waits for its reply.
func (c *childKV) Set(ctx context.Context, key, val []byte, ttl time.Duration) error {
	if ttl != 0 {
		return fmt.Errorf("durability: writer process: ttl: %w", store.ErrUnsupported)
	}
	b := c.frame[:0]
	b = binary.LittleEndian.AppendUint16(b, c.w)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(key)))
	b = binary.LittleEndian.AppendUint32(b, uint32(len(val)))
	b = append(append(b, key...), val...)
	c.frame = b
	c.p.mu.Lock()
	_, err := c.p.stdin.Write(b)
	c.p.mu.Unlock()
	if err != nil {
		return errChildGone
	}
	select {
	case err := <-c.p.replies[c.w]:
		return err
	case <-c.p.dead:
		// A reply read just before the end still counts.
		select {
		case err := <-c.p.replies[c.w]:
			return err
		default:
			return errChildGone
		}
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Get is not offered: the parent reads through its own store.
func (c *childKV) Get(context.Context, []byte, []byte) ([]byte, bool, error) {
	return nil, false, store.ErrUnsupported
}

// Delete is not offered.
func (c *childKV) Delete(context.Context, []byte) error { return store.ErrUnsupported }

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append(t.b[:0], t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}
