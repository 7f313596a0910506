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

// GetBatch is the frame of a store's GetBatch: dst prepared for keys
// (BatchDst, whose error opErr makes the store's), nothing to do for no
// keys, else fill sets the slots of dst and found.
func GetBatch(keys, dst [][]byte, found []bool, opErr func(op string, err error) error, fill func(dst [][]byte) error) ([][]byte, error) {
	dst, err := BatchDst(dst, found, len(keys))
	if err != nil {
		return dst, opErr("get batch", err)
	}
	if len(keys) == 0 {
		return dst, nil
	}
	return dst, fill(dst)
}

// CheckPairs fails when a batch's keys and values do not pair up.
func CheckPairs(keys, vals [][]byte) error {
	if len(keys) != len(vals) {
		return fmt.Errorf("batch: %d keys but %d values", len(keys), len(vals))
	}
	return nil
}
