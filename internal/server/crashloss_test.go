package server

import "testing"

// Every profile of every kind says what a crash and a power cut lose under
// its own settings: a profile the durability summary would call "unknown"
// is a profile whose meaning was never written.
func TestCrashLossPerProfile(t *testing.T) {
	for _, k := range Kinds() {
		d, err := driverFor(k)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range d.profiles() {
			crash, power := k.CrashLoss(p.settings)
			if crash == "" || power == "" || crash == "unknown" || power == "unknown" {
				t.Errorf("%s/%s: process crash %q, power loss %q", k, p.name, crash, power)
			}
		}
	}
	if c, p := Kind("nosuch").CrashLoss(nil); c != "unknown" || p != "unknown" {
		t.Errorf("an unknown kind: %q, %q", c, p)
	}
}
