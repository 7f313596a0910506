package scenario

import (
	"strings"
	"testing"
)

// A value listed twice in a list that expands into cells made two cells
// with one id (issue 28): refused, one line, naming the repeated value.
func TestRepeatedCellValuesAreRefused(t *testing.T) {
	const head = "name: t\ntargets: [postgres, redis, memcached]\nworkloads:\n"
	for _, c := range []struct{ wl, want string }{
		{"{type: kv, keys: [100, 1000, 100]}", "t.yaml:4: kv on postgres: keys=100 twice"},
		{"{type: cache-aside, targets: [postgres], cache_aside: {caches: [none, none]}}", "t.yaml:4: cache-aside on postgres: cache=none twice"},
		{"{type: cache-aside, targets: [postgres], cache_aside: {caches: [redis, memcached, redis]}}", "cache=redis twice"},
		{"{type: sessions, sessions: {phase: insert, variants: [logged, tx, logged]}}", "sessions on postgres: variant=logged twice"},
		{"{type: sessions, sessions: {phase: churn, designs: {redis: [tuned, tuned]}}}", "sessions on redis: design=tuned/replica=false twice"},
		{"{type: payments, targets: [postgres], payments: {durability: [strict, strict]}}", "payments on postgres: durability=strict/mode=routine twice"},
	} {
		err := parseAndValidate(head + "  - " + c.wl + "\n")
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s:\n error %v\n want one line with %q", c.wl, err, c.want)
		}
	}
}
