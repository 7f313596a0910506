package owner

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strconv"
	"time"
)

// timeLayout is the UTC time in a namespace: lower case, as SQL folds it.
const timeLayout = "20060102t150405"

// Namespace names what a run made at t owns inside every store (a schema, a
// database, a key prefix, a directory): "sb_" + t + this process's host tag,
// pid and start ticks + 4 random hex digits, so that storebench clean can
// tell whether the run still runs. At most 48 characters of [a-z0-9_]
// (store.ValidNamespace): a 7-digit pid and 7 base-36 digits of ticks
// (24 years of uptime) fill it.
func Namespace(t time.Time) string {
	p := Self()
	var b [2]byte
	_, _ = rand.Read(b[:])
	return "sb_" + t.UTC().Format(timeLayout) + "_" + hostTag(p.Host) + "_" + strconv.Itoa(p.PID) + "_" +
		strconv.FormatUint(p.Start, 36) + "_" + hex.EncodeToString(b[:])
}

// hostTag is a short fixed-length stand-in for a host name: namespaces have
// no room for the name itself.
func hostTag(host string) string {
	h := sha256.Sum256([]byte(host))
	return hex.EncodeToString(h[:4])
}

// NamespaceOwner is what a namespace's name says about the run that made it.
type NamespaceOwner struct {
	Made    time.Time
	hostTag string // "" for the names of older storebench versions
	pid     int
	start   uint64
}

// namespaceRE matches a namespace: the current form, or the older
// sb_<time>_<6 hex> that recorded no process.
var namespaceRE = regexp.MustCompile(`^sb_(\d{8}t\d{6})_(?:([0-9a-f]{8})_(\d{1,10})_([0-9a-z]{1,13})_[0-9a-f]{4}|[0-9a-f]{6})`)

// ParseNamespace reads a namespace made by storebench's Namespace (or by an
// older storebench, which recorded only the time).
func ParseNamespace(ns string) (NamespaceOwner, bool) {
	m := namespaceRE.FindStringSubmatch(ns)
	if m == nil || len(m[0]) != len(ns) {
		return NamespaceOwner{}, false
	}
	return parsed(m)
}

func parsed(m []string) (NamespaceOwner, bool) {
	made, err := time.Parse(timeLayout, m[1])
	if err != nil {
		return NamespaceOwner{}, false
	}
	o := NamespaceOwner{Made: made}
	if m[2] == "" {
		return o, true
	}
	pid, err1 := strconv.Atoi(m[3])
	start, err2 := strconv.ParseUint(m[4], 36, 64)
	if err1 != nil || err2 != nil || pid <= 0 {
		return NamespaceOwner{}, false
	}
	o.hostTag, o.pid, o.start = m[2], pid, start
	return o, true
}

// State tells whether the run that made the namespace still runs.
func (o NamespaceOwner) State() (State, string) {
	switch {
	case o.hostTag == "":
		return Unknown, "made by an older storebench, which did not record its process"
	case o.hostTag != hostTag(Self().Host):
		return Unknown, "made on another host"
	}
	return pidState(o.pid, o.start)
}
