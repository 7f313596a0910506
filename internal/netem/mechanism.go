package netem

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"
)

// Mechanism is how the delay is applied, as recorded in a cell.
type Mechanism struct {
	// Name is what the result records: KernelName, or the proxy and why,
	// e.g. "proxy (kernel has no netem qdisc)".
	Name string
	// KernelNetem selects the kernel path (StartPath): the kernel accepted
	// a netem qdisc and a network namespace could be made.
	KernelNetem bool
	// Detail is what the check saw (tc's answer, or why it could not run).
	Detail string
}

// KernelName is the kernel path's Mechanism.Name.
const KernelName = "netem (veth + netns)"

// detectTimeout bounds the netem check.
const detectTimeout = 5 * time.Second

// Detect checks whether the kernel path can run here: in a throwaway,
// anonymous network namespace (unshare --net, gone when the command exits:
// nothing named, nothing to remove) it adds a netem qdisc on that
// namespace's loopback, then a veth pair; then it adds and deletes a named
// namespace, as StartKernel does. When all work, the mechanism is the
// kernel's; otherwise it is the proxy, and its name says why.
func Detect(ctx context.Context) Mechanism {
	ctx, cancel := context.WithTimeout(ctx, detectTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, "unshare", "--net", "tc", "qdisc", "add", "dev", "lo", "root", "netem", "delay", "1ms").CombinedOutput()
	detail := strings.TrimSpace(string(out))
	var ee *exec.ExitError
	switch {
	case err == nil:
		if err := checkNamespaces(ctx); err != nil {
			return Mechanism{Name: "proxy (netem present, but no veth pair or network namespace: " + firstLine(err.Error()) + ")",
				Detail: "tc accepted a netem qdisc; " + err.Error()}
		}
		return Mechanism{Name: KernelName, KernelNetem: true, Detail: "tc accepted a netem qdisc; ip made a veth pair and a network namespace"}
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

// checkNamespaces makes what StartKernel needs besides netem: a veth pair
// (in a throwaway namespace) and a named namespace, deleted at once.
func checkNamespaces(ctx context.Context) error {
	out, err := exec.CommandContext(ctx, "unshare", "--net", "ip", "link", "add", "sbcheck0", "type", "veth", "peer", "name", "sbcheck1").CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip link add type veth: %w: %s", err, strings.TrimSpace(string(out)))
	}
	name, err := nextName()
	if err != nil {
		return err
	}
	if err := run("ip", "netns", "add", name); err != nil {
		return err
	}
	return run("ip", "netns", "del", name)
}

// Choose is the mechanism a run asks for: "auto" (or "") is Detect's;
// "proxy" is the proxy, unchecked; "netem" is the kernel path, an error
// when Detect finds it cannot run here.
func Choose(ctx context.Context, want string) (Mechanism, error) {
	switch want {
	case "", "auto":
		return Detect(ctx), nil
	case "proxy":
		return Mechanism{Name: "proxy (asked for)", Detail: "netem not checked: the proxy was asked for"}, nil
	case "netem":
		m := Detect(ctx)
		if !m.KernelNetem {
			why := strings.TrimSuffix(strings.TrimPrefix(m.Name, "proxy ("), ")")
			return m, fmt.Errorf("the kernel netem path cannot run here (%s): %s", why, m.Detail)
		}
		return m, nil
	}
	return Mechanism{}, fmt.Errorf("network mechanism %q: want auto, netem or proxy", want)
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return strings.TrimPrefix(strings.TrimSpace(s), "Error: ")
}
