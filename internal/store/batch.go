package store

import "fmt"

// BatchDst prepares GetBatch's outputs for n keys: it returns dst grown to
// n slices (keeping the ones it has, so their room is reused) and fails when
// found has fewer than n slots.
func BatchDst(dst [][]byte, found []bool, n int) ([][]byte, error) {
	if len(found) < n {
		return dst, fmt.Errorf("get batch: %d found slots for %d keys", len(found), n)
	}
	if len(dst) < n {
		if cap(dst) >= n {
			dst = dst[:n]
		} else {
			dst = append(dst[:cap(dst)], make([][]byte, n-cap(dst))...)
		}
	}
	return dst, nil
}

// CheckPairs fails when a batch's keys and values do not pair up.
func CheckPairs(keys, vals [][]byte) error {
	if len(keys) != len(vals) {
		return fmt.Errorf("batch: %d keys but %d values", len(keys), len(vals))
	}
	return nil
}
