package redis

import (
	"context"
	"fmt"
	"strconv"

	"github.com/redis/rueidis"
)

// valueLimit is the server's proto-max-bulk-len, the longest string Redis
// accepts in a command (512 MiB by default): on a longer one it closes the
// connection, which the client sees as "connection reset by peer". 0 when
// CONFIG GET is not allowed, as on managed services.
type valueLimit int64

// minProtoMaxBulkLen is the least proto-max-bulk-len Redis accepts (1 MiB):
// no value up to it is refused for its length.
const minProtoMaxBulkLen = 1 << 20

// readValueLimit reads proto-max-bulk-len; a server that refuses CONFIG
// GET leaves the limit unknown (0), it is no error.
func readValueLimit(ctx context.Context, admin rueidis.Client) (valueLimit, error) {
	m, err := admin.Do(ctx, admin.B().ConfigGet().Parameter("proto-max-bulk-len").Build()).AsStrMap()
	if err != nil {
		if _, isRedis := rueidis.IsRedisErr(err); isRedis {
			return 0, nil
		}
		return 0, opErr("CONFIG GET proto-max-bulk-len", err)
	}
	n, _ := strconv.ParseInt(m["proto-max-bulk-len"], 10, 64)
	return valueLimit(n), nil
}

// check refuses a value the server would not accept, before it is sent.
func (l valueLimit) check(n int) error {
	if l > 0 && int64(n) > int64(l) {
		return fmt.Errorf("a value of %d bytes is longer than the server's proto-max-bulk-len (%d bytes), the longest string Redis accepts: it would close the connection", n, l)
	}
	return nil
}

// explain adds to the error of a failed write of a value of n bytes the
// likely cause when the limit is unknown: the connection closed by Redis.
func (l valueLimit) explain(err error, n int) error {
	if err == nil || l != 0 || n <= minProtoMaxBulkLen {
		return err
	}
	return fmt.Errorf("%w (the value was %d bytes: Redis closes the connection on a value longer than its proto-max-bulk-len, 512 MiB by default, which CONFIG GET was not allowed to read here)", err, n)
}

// longest is the length of the longest value.
func longest(vals [][]byte) int {
	n := 0
	for _, v := range vals {
		n = max(n, len(v))
	}
	return n
}
