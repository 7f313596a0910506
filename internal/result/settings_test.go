package result

import (
	"encoding/json"
	"testing"
)

// Settings reads what a workload recorded, as JSON gives it back: counts
// as float64, a direct cell of a network sweep with a null rtt_ms.
func TestSettingsReadsRecordedParams(t *testing.T) {
	var cells []Cell
	raw := `[{"params":{"keys":10000,"batch":100}},
		{"params":{"rtt_ms":2.5,"rtt_measured_ms":2.61,"net_mechanism":"proxy","net_proxy":"127.0.0.1:4000"}},
		{"params":{"rtt_ms":null}},
		{"params":{"stall_after":"1s","stall_for":"200ms"}},
		{"params":{"keys":1e300}}]`
	if err := json.Unmarshal([]byte(raw), &cells); err != nil {
		t.Fatal(err)
	}
	kv, net, direct, stall, absurd := cells[0].Settings(), cells[1].Settings(), cells[2].Settings(), cells[3].Settings(), cells[4].Settings()
	if kv.Keys != 10000 || kv.Batch != 100 || kv.Network || kv.Stalled {
		t.Errorf("kv %+v", kv)
	}
	if !net.Network || net.RTTms == nil || *net.RTTms != 2.5 || net.RTTMeasuredMs == nil || *net.RTTMeasuredMs != 2.61 || net.NetMechanism != "proxy" || net.NetProxy != "127.0.0.1:4000" {
		t.Errorf("network %+v", net)
	}
	if !direct.Network || direct.RTTms != nil {
		t.Errorf("direct %+v", direct)
	}
	if !stall.Stalled || stall.StallAfter != "1s" || stall.StallFor != "200ms" {
		t.Errorf("stall %+v", stall)
	}
	if absurd.Keys != 0 {
		t.Errorf("keys 1e300 read as %d", absurd.Keys)
	}
	if !cells[0].ParamIs("keys", "10000") || cells[0].ParamIs("keys", "1000") {
		t.Error("ParamIs")
	}
}
