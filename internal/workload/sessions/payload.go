package sessions

import (
	"bytes"
	"encoding/hex"

	"github.com/storebench/storebench/internal/workload"
)

// minPayload is the shortest payload: the JSON frame with an empty pad.
const minPayload = len(`{"sid":"0123456789abcdef","user":000000,"pad":""}`)

const padAlphabet = "abcdefghijklmnopqrstuvwxyz0123456789"

// appendPayload appends valid JSON of exactly size characters that names
// nonce, so a read can check it got its own session back:
//
//	{"sid":"<nonce, 16 hex>","user":<6 digits>,"pad":"<letters and digits>"}
//
// The article's random strings would be rejected by a JSONB column.
func appendPayload(dst []byte, nonce uint64, size int) []byte {
	dst = append(dst, `{"sid":"`...)
	dst = appendNonce(dst, nonce)
	dst = append(dst, `","user":`...)
	// Six digits, the first never 0: JSON refuses a number with a leading
	// zero, and PostgreSQL's json type said so for one create in ten.
	u := 100000 + nonce%900000
	for div := uint64(100000); div > 0; div /= 10 {
		dst = append(dst, byte('0'+u/div%10))
	}
	dst = append(dst, `,"pad":"`...)
	state := workload.Mix(nonce) | 1
	for n := size - minPayload; n > 0; n-- {
		dst = append(dst, padAlphabet[state%uint64(len(padAlphabet))])
		state = state*6364136223846793005 + 1442695040888963407
	}
	return append(dst, `"}`...)
}

func appendNonce(dst []byte, nonce uint64) []byte {
	var b [8]byte
	for i := range b {
		b[i] = byte(nonce >> (56 - 8*i))
	}
	return hex.AppendEncode(dst, b[:])
}

// holds reports whether payload names nonce (a JSONB column reformats the
// JSON, so the payload is not compared byte for byte).
func holds(payload []byte, nonce uint64) bool {
	var tmp [16]byte
	return bytes.Contains(payload, appendNonce(tmp[:0], nonce))
}
