package netem

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"time"
)

// Mechanism is how the delay is applied, as recorded in a cell.
type Mechanism struct {
	// Name is what the result records, e.g. "proxy (kernel has no netem qdisc)".
	Name string
	// KernelNetem says whether the kernel accepted a netem qdisc.
	KernelNetem bool
	// Detail is what the check saw (tc's answer, or why it could not run).
	Detail string
}

// detectTimeout bounds the netem check.
const detectTimeout = 5 * time.Second

// Detect checks whether the kernel has the netem qdisc: in a throwaway,
// anonymous network namespace (unshare --net, gone when tc exits: nothing
// named, nothing to remove) it adds a netem qdisc on that namespace's
// loopback. Either way the mechanism is the in-process proxy: the veth +
// netns + netem path is not implemented (no kernel here has netem to test
// it on), and the name says why the proxy was used.
func Detect(ctx context.Context) Mechanism {
	ctx, cancel := context.WithTimeout(ctx, detectTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, "unshare", "--net", "tc", "qdisc", "add", "dev", "lo", "root", "netem", "delay", "1ms").CombinedOutput()
	detail := strings.TrimSpace(string(out))
	var ee *exec.ExitError
	switch {
	case err == nil:
		return Mechanism{Name: "proxy (kernel has netem; the veth/netns path is not implemented)", KernelNetem: true, Detail: "tc accepted a netem qdisc"}
	case strings.Contains(detail, "qdisc kind is unknown"):
		return Mechanism{Name: "proxy (kernel has no netem qdisc)", Detail: detail}
	case errors.As(err, &ee):
		if detail == "" {
			detail = err.Error()
		}
		return Mechanism{Name: "proxy (netem not usable: " + firstLine(detail) + ")", Detail: detail}
	default: // unshare or tc missing
		return Mechanism{Name: "proxy (netem not checked: " + err.Error() + ")", Detail: err.Error()}
	}
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return strings.TrimPrefix(strings.TrimSpace(s), "Error: ")
}
