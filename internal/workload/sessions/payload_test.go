package sessions

import (
	"encoding/json"
	"testing"
)

// Every payload is valid JSON of exactly its size, whatever the nonce: a
// user number of 000159 (a leading zero) made PostgreSQL's json column
// refuse about one create in ten.
func TestPayloadIsValidJSON(t *testing.T) {
	for _, size := range []int{minPayload, 250, 1000} {
		for nonce := uint64(0); nonce < 300000; nonce += 997 {
			p := appendPayload(nil, nonce, size)
			if len(p) != size || !json.Valid(p) || !holds(p, nonce) {
				t.Fatalf("nonce %d size %d: %q (%d bytes): want valid JSON of %d bytes naming its nonce", nonce, size, p, len(p), size)
			}
		}
	}
}
