package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/storebench/storebench/internal/doctor"
)

// TestDoctorCommand: `doctor --brief --json` prints the checks as JSON with
// measured figures; an argument is bad input.
func TestDoctorCommand(t *testing.T) {
	var buf bytes.Buffer
	if code := netApp(&buf).Main(context.Background(), []string{"doctor", "--brief", "--json"}); code != ExitOK {
		t.Fatalf("exit %d\n%s", code, buf.String())
	}
	var r doctor.Report
	if err := json.Unmarshal(buf.Bytes(), &r); err != nil {
		t.Fatalf("%v\n%s", err, buf.String())
	}
	if len(r.Checks) < 8 || r.TickWake.Wakes == 0 || r.RTTSameCPU == nil || r.RTTSameCPU.N == 0 {
		t.Errorf("report %+v", r)
	}
	buf.Reset()
	if code := netApp(&buf).Main(context.Background(), []string{"doctor", "now"}); code != ExitUsage {
		t.Errorf("doctor now: exit %d, %s", code, buf.String())
	}
}
