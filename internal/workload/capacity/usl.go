package capacity

import (
	"math"

	schema "github.com/storebench/storebench/internal/result/capacity"
)

// Fit fits the Universal Scalability Law X(N) = λN / (1 + σ(N−1) + κN(N−1))
// through closed-loop throughput points. N/X = 1/λ + (σ/λ)(N−1) + (κ/λ)N(N−1)
// is linear in 1/λ, σ/λ and κ/λ, so it is solved by linear least squares;
// σ and κ are kept >= 0 by trying the fits that leave one or both out and
// keeping the best feasible one by its error in X. Points with N < 1 or a
// throughput that is not a positive finite number are left out. The result
// never holds NaN or ±Inf: with too little to fit, it says so in Note.
func Fit(points []schema.USLPoint) schema.USLFit {
	fit := schema.USLFit{Points: points}
	var ns, xs []float64
	for _, p := range points {
		if p.Clients >= 1 && p.OpsS > 0 && !math.IsInf(p.OpsS, 0) {
			ns = append(ns, float64(p.Clients))
			xs = append(xs, p.OpsS)
		}
	}
	if len(ns) == 0 {
		fit.Note = "no usable point: nothing fitted"
		return fit
	}
	best := math.Inf(1)
	// Columns of the design: 1 always, then N−1 and N(N−1) where used.
	for _, use := range [][2]bool{{true, true}, {true, false}, {false, true}, {false, false}} {
		cols := [][]float64{ones(len(ns))}
		var nm1, nn []float64
		for _, n := range ns {
			nm1 = append(nm1, n-1)
			nn = append(nn, n*(n-1))
		}
		if use[0] {
			cols = append(cols, nm1)
		}
		if use[1] {
			cols = append(cols, nn)
		}
		if distinct(ns) < len(cols) {
			continue // fewer distinct N than unknowns
		}
		y := make([]float64, len(ns))
		for i := range ns {
			y[i] = ns[i] / xs[i]
		}
		coef, ok := leastSquares(cols, y)
		if !ok || coef[0] <= 0 {
			continue
		}
		lambda, sigma, kappa := 1/coef[0], 0.0, 0.0
		i := 1
		if use[0] {
			sigma = coef[i] * lambda
			i++
		}
		if use[1] {
			kappa = coef[i] * lambda
		}
		if sigma < 0 || kappa < 0 || !finite(lambda, sigma, kappa) {
			continue
		}
		rmse := 0.0
		for j := range ns {
			d := usl(ns[j], lambda, sigma, kappa) - xs[j]
			rmse += d * d
		}
		rmse = math.Sqrt(rmse / float64(len(ns)))
		if rmse < best {
			best = rmse
			fit.Lambda, fit.Sigma, fit.Kappa, fit.RMSE = lambda, sigma, kappa, rmse
		}
	}
	if math.IsInf(best, 1) {
		fit.Note = "no feasible fit (λ > 0, σ >= 0, κ >= 0)"
		return fit
	}
	// The linear fit weighs the points by N/X, not X: refine it on the
	// throughput's own squared error.
	if distinct(ns) >= 3 {
		fit.Lambda, fit.Sigma, fit.Kappa, fit.RMSE = refine(ns, xs, fit.Lambda, fit.Sigma, fit.Kappa, fit.RMSE)
	}
	if distinct(ns) < 3 {
		fit.Note = "fewer than 3 client counts: σ and κ are not both fitted"
	}
	switch {
	case fit.Kappa > 0 && fit.Sigma < 1:
		n := math.Sqrt((1 - fit.Sigma) / fit.Kappa)
		fit.PeakClients = max(n, 1)
		fit.PeakOpsS = usl(fit.PeakClients, fit.Lambda, fit.Sigma, fit.Kappa)
	case fit.Sigma >= 1 || fit.Kappa > 0:
		fit.PeakClients, fit.PeakOpsS = 1, fit.Lambda // adding clients only loses
	}
	return fit
}

// refine runs Levenberg–Marquardt on Σ(X(N) − x)², keeping σ, κ >= 0 and
// λ > 0, from a feasible start whose error is rmse; it returns the start
// unless it finds better.
func refine(ns, xs []float64, lambda, sigma, kappa, rmse float64) (float64, float64, float64, float64) {
	sse := func(l, s, k float64) float64 {
		var e float64
		for i := range ns {
			d := usl(ns[i], l, s, k) - xs[i]
			e += d * d
		}
		return e
	}
	cur := rmse * rmse * float64(len(ns))
	mu := 1e-3
	for range 200 {
		var jtj [3][4]float64 // normal equations, augmented with Jᵀr
		for i, n := range ns {
			d := 1 + sigma*(n-1) + kappa*n*(n-1)
			x := lambda * n / d
			j := [3]float64{n / d, -x * (n - 1) / d, -x * n * (n - 1) / d}
			r := xs[i] - x
			for a := range 3 {
				for b := range 3 {
					jtj[a][b] += j[a] * j[b]
				}
				jtj[a][3] += j[a] * r
			}
		}
		cols := make([][]float64, 3)
		for a := range 3 {
			cols[a] = []float64{jtj[a][0], jtj[a][1], jtj[a][2]}
			cols[a][a] *= 1 + mu
		}
		delta, ok := solve3(cols, [3]float64{jtj[0][3], jtj[1][3], jtj[2][3]})
		if !ok {
			break
		}
		l, s, k := lambda+delta[0], max(sigma+delta[1], 0), max(kappa+delta[2], 0)
		if e := sse(l, s, k); l > 0 && finite(l, s, k, e) && e < cur {
			improved := cur - e
			lambda, sigma, kappa, cur = l, s, k, e
			mu = max(mu/10, 1e-12)
			if improved < 1e-12*cur {
				break
			}
		} else {
			mu *= 10
			if mu > 1e12 {
				break
			}
		}
	}
	return lambda, sigma, kappa, math.Sqrt(cur / float64(len(ns)))
}

// solve3 solves the 3×3 system m·x = b (m given by columns) by Cramer's rule.
func solve3(m [][]float64, b [3]float64) ([3]float64, bool) {
	det := func(c0, c1, c2 [3]float64) float64 {
		return c0[0]*(c1[1]*c2[2]-c2[1]*c1[2]) - c1[0]*(c0[1]*c2[2]-c2[1]*c0[2]) + c2[0]*(c0[1]*c1[2]-c1[1]*c0[2])
	}
	c := [3][3]float64{{m[0][0], m[0][1], m[0][2]}, {m[1][0], m[1][1], m[1][2]}, {m[2][0], m[2][1], m[2][2]}}
	d := det(c[0], c[1], c[2])
	if d == 0 || !finite(d) {
		return [3]float64{}, false
	}
	x := [3]float64{det(b, c[1], c[2]) / d, det(c[0], b, c[2]) / d, det(c[0], c[1], b) / d}
	return x, finite(x[0], x[1], x[2])
}

func usl(n, lambda, sigma, kappa float64) float64 {
	return lambda * n / (1 + sigma*(n-1) + kappa*n*(n-1))
}

func ones(n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = 1
	}
	return v
}

func distinct(v []float64) int {
	seen := map[float64]bool{}
	for _, x := range v {
		seen[x] = true
	}
	return len(seen)
}

func finite(v ...float64) bool {
	for _, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
}

// leastSquares solves min ‖Σ cols[j]·c[j] − y‖ by the normal equations
// (at most 3 unknowns here), by Gaussian elimination with partial pivoting;
// false when they are singular.
func leastSquares(cols [][]float64, y []float64) ([]float64, bool) {
	k := len(cols)
	a := make([][]float64, k)
	for i := range a {
		a[i] = make([]float64, k+1)
		for j := range k {
			a[i][j] = dot(cols[i], cols[j])
		}
		a[i][k] = dot(cols[i], y)
	}
	for c := range k {
		p := c
		for r := c + 1; r < k; r++ {
			if math.Abs(a[r][c]) > math.Abs(a[p][c]) {
				p = r
			}
		}
		if math.Abs(a[p][c]) < 1e-300 {
			return nil, false
		}
		a[c], a[p] = a[p], a[c]
		for r := range k {
			if r == c {
				continue
			}
			f := a[r][c] / a[c][c]
			for j := c; j <= k; j++ {
				a[r][j] -= f * a[c][j]
			}
		}
	}
	coef := make([]float64, k)
	for i := range k {
		coef[i] = a[i][k] / a[i][i]
	}
	return coef, finite(coef...)
}

func dot(a, b []float64) (s float64) {
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}
