package metrics

import (
	"reflect"
	"testing"
)

func TestPlacementAcc(t *testing.T) {
	for _, tc := range []struct {
		name      string
		intervals [][2][]float64 // client, server ticks per CPU
		want      *Placement
	}{
		{"shared", [][2][]float64{{{10}, {8}}, {{12}, {9}}},
			&Placement{Client: map[int]float64{0: 1}, Server: map[int]float64{0: 1}, SameCPU: 1, Samples: 2}},
		{"apart", [][2][]float64{{{10, 0}, {0, 8}}, {{12}, {0, 9}}},
			&Placement{Client: map[int]float64{0: 1}, Server: map[int]float64{1: 1}, SameCPU: 0, Samples: 2}},
		// Together on CPU 0 for 10 ticks, then apart for 30: shared a
		// quarter of the time.
		{"together then apart", [][2][]float64{{{10, 0}, {10, 0}}, {{30, 0}, {0, 30}}},
			&Placement{Client: map[int]float64{0: 1}, Server: map[int]float64{0: 0.25, 1: 0.75}, SameCPU: 0.25, Samples: 2}},
		// The server idle in the first interval: it says nothing about
		// sharing, but the client's ticks still count in its shares.
		{"one side idle", [][2][]float64{{{5}, nil}, {{0, 4}, {0, 6}}},
			&Placement{Client: map[int]float64{0: 0.556, 1: 0.444}, Server: map[int]float64{1: 1}, SameCPU: 1, Samples: 2}},
		// Never busy in the same interval: fall back to the totals.
		{"never together", [][2][]float64{{{1}, nil}, {nil, {0, 1}}, {nil, {1}}},
			&Placement{Client: map[int]float64{0: 1}, Server: map[int]float64{0: 0.5, 1: 0.5}, SameCPU: 0.5, Samples: 3}},
		{"server never busy", [][2][]float64{{{3}, nil}}, nil},
		{"no interval", nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var a placementAcc
			for _, iv := range tc.intervals {
				a.add(iv[0], iv[1])
			}
			if got := a.result(); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}
