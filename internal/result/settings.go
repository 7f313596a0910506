package result

import (
	"fmt"
	"math"
)

// Settings are the recorded parameters of a cell that reports read, typed:
// the one place a cell's parameters are read back by name (a workload
// records them by name in Params; old results hold the same names).
type Settings struct {
	// Keys is a kv cell's key count, Batch its keys per write (0: one by
	// one).
	Keys, Batch int64
	// Network says the cell's workload swept a network (an rtt_ms
	// parameter, empty for its direct cells); RTTms is the asked round
	// trip (nil: direct), RTTMeasuredMs the one measured through the path
	// (nil: not measured); NetMechanism and NetProxy how it was made.
	Network       bool
	RTTms         *float64
	RTTMeasuredMs *float64
	NetMechanism  string
	NetProxy      string
	// Stalled says the cell stalled its server (stall_for); StallAfter and
	// StallFor are when and how long, as written (a Go duration).
	Stalled              bool
	StallAfter, StallFor string
}

// Settings reads the cell's typed parameters.
func (c *Cell) Settings() Settings {
	p := c.Params
	s := Settings{Keys: paramCount(p["keys"]), Batch: paramCount(p["batch"])}
	_, s.Network = p["rtt_ms"]
	if v, ok := p["rtt_ms"].(float64); ok {
		s.RTTms = &v
	}
	if v, ok := p["rtt_measured_ms"].(float64); ok {
		s.RTTMeasuredMs = &v
	}
	s.NetMechanism, _ = p["net_mechanism"].(string)
	s.NetProxy, _ = p["net_proxy"].(string)
	s.StallFor, s.Stalled = p["stall_for"].(string)
	s.StallAfter, _ = p["stall_after"].(string)
	return s
}

// ParamIs says whether the cell's parameter name is col as a table writes
// it: a count as a whole number, anything else as Go prints it (an
// article's table names its columns by a parameter's values).
func (c *Cell) ParamIs(name, col string) bool {
	v := c.Params[name]
	return fmt.Sprint(paramCount(v)) == col || fmt.Sprint(v) == col
}

// paramCount is a recorded count as an int64 (JSON gives float64), 0 when
// it is none or out of range.
func paramCount(v any) int64 {
	switch v := v.(type) {
	case float64:
		if !(v >= math.MinInt64 && v < math.MaxInt64) {
			return 0
		}
		return int64(v)
	case int64:
		return v
	case int:
		return int64(v)
	}
	return 0
}
