package powercut

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// answerWait bounds every request to the server, whatever the caller's
// context: a rollback of MaxUndoBytes of undo and a big attic is the
// slowest, far below it.
const answerWait = 5 * time.Minute

// exitWait is how long a server told to stop (stdin closed) or killed may
// take to exit before it is killed, or given up on.
const exitWait = 10 * time.Second

// child is the parent's side of a serving process.
type child struct {
	cmd     *exec.Cmd
	pid     int
	in      *os.File // its stdin: closing it ends the server
	enc     *json.Encoder
	answers chan response // closed at its stdout's EOF
	exited  chan struct{} // closed when it has exited and its stderr is read
	waitErr error         // how it exited, once exited is closed
	stderr  tail
}

// startChild starts this executable again as a server (see init).
func startChild() (*child, error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("powercut: start the server: %w", err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW)
		return nil, fmt.Errorf("powercut: start the server: %w", err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW, outR, outW)
		return nil, fmt.Errorf("powercut: start the server: %w", err)
	}
	c := &child{
		// /proc/self/exe: this very executable even if its file was
		// replaced or removed since it started.
		cmd:     &exec.Cmd{Path: "/proc/self/exe", Args: []string{"storebench-powercut-server"}},
		in:      inW,
		enc:     json.NewEncoder(inW),
		answers: make(chan response, 1), // a late answer to a call given up on: no reader blocks
		exited:  make(chan struct{}),
		stderr:  tail{done: make(chan struct{})},
	}
	c.cmd.Env = append(os.Environ(), serveEnv+"="+strconv.Itoa(os.Getpid()))
	c.cmd.Stdin, c.cmd.Stdout, c.cmd.Stderr = inR, outW, errW
	c.cmd.Dir = "/" // it pins no directory; every path it is given is absolute
	// A group of its own: a terminal's Ctrl-C is storebench's to handle,
	// which ends the server by closing its stdin. Pdeathsig: should
	// storebench die without closing it, SIGTERM unmounts and ends it.
	c.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}

	// Pdeathsig fires when the thread that forked the child exits, and a
	// Go thread exits when a goroutine locked to it ends (other packages
	// do that on purpose): the fork happens on a thread locked here for
	// as long as the server lives.
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := c.cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		err := c.cmd.Wait()
		c.stderr.wait()
		c.waitErr = err
		close(c.exited)
	}()
	err = <-started
	closeAll(inR, outW, errW) // the child's ends
	if err != nil {
		closeAll(inW, outR, errR)
		return nil, fmt.Errorf("powercut: start the server: %w", err)
	}
	c.pid = c.cmd.Process.Pid
	go c.stderr.read(errR)
	go func() {
		defer close(c.answers)
		defer outR.Close()
		dec := json.NewDecoder(bufio.NewReader(outR))
		for {
			var r response
			if err := dec.Decode(&r); err != nil {
				return
			}
			c.answers <- r
		}
	}()
	return c, nil
}

func closeAll(fs ...*os.File) {
	for _, f := range fs {
		f.Close()
	}
}

// errServerGone is what every error of a server that exited or stopped
// answering is (errors.Is); the mount went with it (unmounted by whoever
// noticed).
var errServerGone = errors.New("the serving process is gone")

// goneError is such an error, worded on its own.
type goneError struct{ msg string }

func (e *goneError) Error() string        { return e.msg }
func (e *goneError) Is(target error) bool { return target == errServerGone }

func gone(format string, args ...any) error {
	return &goneError{fmt.Sprintf(format, args...)}
}

// call sends req and waits for its answer, at most until ctx is done or
// answerWait has passed: then the server is killed. A server that exits
// meanwhile is an error with what it last wrote on stderr.
func (c *child) call(ctx context.Context, req request) (response, error) {
	ctx, cancel := context.WithTimeout(ctx, answerWait)
	defer cancel()
	if req.Wait == 0 {
		// The server's own waits end a little before ours.
		d, _ := ctx.Deadline()
		req.Wait = time.Until(d) * 9 / 10
	}
	if err := c.enc.Encode(req); err != nil {
		return response{}, c.goneErr(req.Op, err)
	}
	select {
	case r, ok := <-c.answers:
		if !ok {
			return response{}, c.goneErr(req.Op, nil)
		}
		return r, nil
	case <-ctx.Done():
		c.kill()
		return response{}, gone("powercut: %s: the serving process (pid %d) did not answer (%v): killed it%s",
			req.Op, c.pid, ctx.Err(), c.stderr.says())
	}
}

// goneErr is the error of a request the server did not answer because it
// exited; err is what writing the request met, if anything.
func (c *child) goneErr(op string, err error) error {
	select {
	case <-c.exited:
	case <-time.After(exitWait):
		c.kill()
	}
	how := "stopped answering and does not exit"
	select {
	case <-c.exited:
		how = "exited"
		if c.waitErr != nil {
			how = "ended: " + c.waitErr.Error() // "exit status 3", "signal: killed"
		}
	default:
	}
	if err != nil && !errors.Is(err, syscall.EPIPE) {
		how += " (" + err.Error() + ")"
	}
	return gone("powercut: %s: the serving process (pid %d) %s%s", op, c.pid, how, c.stderr.says())
}

// kill ends the server now and waits for it, a while.
func (c *child) kill() {
	_ = c.cmd.Process.Kill()
	select {
	case <-c.exited:
	case <-time.After(exitWait):
	}
}

// stop ends the server as it asks (stdin's EOF), or kills it if it takes
// too long. It says how the server ended if that was not cleanly.
func (c *child) stop() error {
	c.in.Close()
	select {
	case <-c.exited:
	case <-time.After(exitWait):
		c.kill()
		return fmt.Errorf("powercut: the serving process (pid %d) did not exit when told: killed it%s", c.pid, c.stderr.says())
	}
	if c.waitErr != nil {
		return fmt.Errorf("powercut: the serving process (pid %d) ended: %w%s", c.pid, c.waitErr, c.stderr.says())
	}
	return nil
}

// tail passes the server's stderr through to ours and keeps its last
// lines for errors.
type tail struct {
	mu   sync.Mutex
	buf  []byte
	done chan struct{} // closed at EOF
}

const tailBytes = 2048

func (t *tail) read(r io.ReadCloser) {
	defer close(t.done)
	defer r.Close()
	b := make([]byte, 4096)
	for {
		n, err := r.Read(b)
		if n > 0 {
			_, _ = os.Stderr.Write(b[:n])
			t.mu.Lock()
			t.buf = append(t.buf, b[:n]...)
			if len(t.buf) > tailBytes {
				t.buf = t.buf[len(t.buf)-tailBytes:]
			}
			t.mu.Unlock()
		}
		if err != nil {
			return
		}
	}
}

// wait waits a little for the stderr to be read to its end.
func (t *tail) wait() {
	select {
	case <-t.done:
	case <-time.After(time.Second):
	}
}

// says is "; its stderr ends: …" with the last lines on one line, or "".
func (t *tail) says() string {
	t.mu.Lock()
	text := strings.TrimSpace(string(t.buf))
	t.mu.Unlock()
	if text == "" {
		return ""
	}
	lines := strings.Split(text, "\n")
	if len(lines) > 10 {
		lines = lines[len(lines)-10:]
	}
	return "; its stderr ends: " + strings.Join(lines, " | ")
}
