package capacity

import (
	"encoding/json"
	"math"
	"testing"

	schema "github.com/storebench/storebench/internal/result/capacity"
)

func within(got, want, share float64) bool { return math.Abs(got-want) <= share*math.Abs(want) }

// Points made from known σ and κ give them back within 5%, even with ±1%
// noise on each throughput.
func TestFitRecoversKnownParameters(t *testing.T) {
	const lambda, sigma, kappa = 20000.0, 0.05, 0.002
	noise := []float64{1, 1.01, 0.99, 1.005, 0.995, 1.01, 0.99}
	for _, noisy := range []bool{false, true} {
		var pts []schema.USLPoint
		for i, n := range []int{1, 2, 4, 8, 16, 32, 64} {
			x := usl(float64(n), lambda, sigma, kappa)
			if noisy {
				x *= noise[i]
			}
			pts = append(pts, schema.USLPoint{Clients: n, OpsS: x})
		}
		f := Fit(pts)
		if !within(f.Lambda, lambda, 0.05) || !within(f.Sigma, sigma, 0.05) || !within(f.Kappa, kappa, 0.05) {
			t.Errorf("noisy %v: λ %v σ %v κ %v, want %v %v %v", noisy, f.Lambda, f.Sigma, f.Kappa, lambda, sigma, kappa)
		}
		peak := math.Sqrt((1 - sigma) / kappa)
		if !within(f.PeakClients, peak, 0.05) || !within(f.PeakOpsS, usl(peak, lambda, sigma, kappa), 0.05) {
			t.Errorf("noisy %v: peak %v clients %v ops/s, want %v", noisy, f.PeakClients, f.PeakOpsS, peak)
		}
	}
}

// Degenerate input fits what it can, says so, and never yields NaN or Inf
// (which JSON cannot even hold).
func TestFitDegenerate(t *testing.T) {
	cases := map[string][]schema.USLPoint{
		"none":       nil,
		"one point":  {{Clients: 1, OpsS: 1000}},
		"flat":       {{Clients: 1, OpsS: 1000}, {Clients: 2, OpsS: 1000}, {Clients: 4, OpsS: 1000}, {Clients: 8, OpsS: 1000}},
		"decreasing": {{Clients: 1, OpsS: 1000}, {Clients: 2, OpsS: 800}, {Clients: 4, OpsS: 500}, {Clients: 8, OpsS: 200}},
		"linear":     {{Clients: 1, OpsS: 1000}, {Clients: 2, OpsS: 2000}, {Clients: 4, OpsS: 4000}},
		"same N":     {{Clients: 4, OpsS: 1000}, {Clients: 4, OpsS: 1100}},
		"zeros":      {{Clients: 0, OpsS: 0}, {Clients: 1, OpsS: 0}, {Clients: 2, OpsS: math.NaN()}, {Clients: 3, OpsS: math.Inf(1)}},
	}
	for name, pts := range cases {
		f := Fit(pts)
		f.Points = nil // the input may hold NaN; the fit may not
		if _, err := json.Marshal(f); err != nil {
			t.Errorf("%s: %+v: %v", name, f, err)
		}
		for _, v := range []float64{f.Lambda, f.Sigma, f.Kappa, f.PeakClients, f.PeakOpsS, f.RMSE} {
			if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
				t.Errorf("%s: %+v", name, f)
			}
		}
	}
	if f := Fit(cases["one point"]); f.Lambda != 1000 || f.Note == "" {
		t.Errorf("one point: %+v", f)
	}
	if f := Fit(cases["flat"]); !within(f.Sigma, 1, 0.01) || f.Kappa != 0 {
		t.Errorf("flat: %+v, want σ 1 (serialized), κ 0", f)
	}
	if f := Fit(cases["linear"]); !within(f.Lambda, 1000, 0.01) || f.Sigma > 1e-9 || f.Kappa > 1e-9 || f.PeakClients != 0 {
		t.Errorf("linear: %+v, want λ 1000 and no peak", f)
	}
	if f := Fit(cases["decreasing"]); f.PeakClients < 1 || f.PeakClients > 1.5 {
		t.Errorf("decreasing: %+v, want the peak near 1 client", f)
	}
}
