package redis

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/redis/rueidis"

	"github.com/storebench/storebench/internal/store"
)

// Records (the ycsb workload) are kept as YCSB's Redis binding keeps them:
// a hash per record under the record's key (prefixed, as every key of the
// store), and the record's key in a sorted set, recordsIndex, scored by
// the key's hash (Java's String.hashCode, YCSB's hash()). A read is
// HGETALL (HMGET of the field when one is asked), an update HSET of the
// field(s), an insert HSET then ZADD, a scan ZRANGEBYSCORE from the start
// key's score, LIMIT 0 n, then HGETALL of each key: one round trip each,
// as the binding makes them. So a scan reads in the index's order (the
// keys' hashes), not the keys'. Every key has the namespace's prefix, so
// Reset, Close and clean remove the records and the index as the rest.

var _ store.Records = (*Store)(nil)

// recordsIndex is the sorted set's name after the prefix: YCSB's.
const recordsIndex = "_indices"

// RecordsLayout says the layout in the result's words.
const RecordsLayout = "a hash per record (HSET of its fields), its key in the sorted set " + recordsIndex + " scored by the key's Java hashCode (YCSB's Redis binding); a scan is ZRANGEBYSCORE from the start key's score LIMIT 0 n, then HGETALL of each key, in the hashes' order"

// RecordsSetup removes what the namespace holds (a run's records and
// index among it) and remembers the fields for RecordsOpen.
func (s *Store) RecordsSetup(ctx context.Context, fields []string) (string, error) {
	if len(fields) == 0 {
		return "", errors.New("redis: records: no fields")
	}
	if err := s.Reset(ctx); err != nil {
		return "", err
	}
	s.mu.Lock()
	s.recordFields = append([]string(nil), fields...)
	s.mu.Unlock()
	return RecordsLayout, nil
}

// RecordsOpen connects a worker's client (Open's) for the records.
func (s *Store) RecordsOpen(ctx context.Context) (store.RecordsConn, error) {
	s.mu.Lock()
	fields := s.recordFields
	s.mu.Unlock()
	if fields == nil {
		return nil, errors.New("redis: records: RecordsSetup was not called")
	}
	c, err := s.Open(ctx)
	if err != nil {
		return nil, err
	}
	return &recordsConn{Client: c.(*Client), fields: fields, index: s.prefix + recordsIndex, vals: make([][]byte, len(fields))}, nil
}

// recordsConn is a worker's client with the records' names.
type recordsConn struct {
	*Client
	fields []string
	index  string   // the sorted set's full key
	args   []string // a command's arguments, reused
	score  []byte   // a key's score, formatted, reused
	scan   []string // a scan's keys
	vals   [][]byte // a scanned record's fields, reused
	kbuf   []byte   // a scanned record's key, reused
}

// javaHash is Java's String.hashCode of key's bytes (its chars, for
// YCSB's ASCII keys): the score YCSB's binding indexes a key by.
func javaHash(key []byte) int32 {
	var h int32
	for _, b := range key {
		h = 31*h + int32(b)
	}
	return h
}

// do runs cmd and returns its reply; a failure drops the key buffer
// (Client.done).
func (c *recordsConn) do(ctx context.Context, op string, cmd rueidis.Completed) (rueidis.RedisMessage, error) {
	m, err := c.rc.Do(ctx, cmd).ToMessage()
	c.done(err)
	if err != nil && !rueidis.IsRedisNil(err) {
		return m, opErr(op, err)
	}
	return m, nil
}

// hset sets vals' fields of key (one field when field >= 0).
func (c *recordsConn) hset(ctx context.Context, op string, key []byte, field int, vals [][]byte) error {
	c.args = c.args[:0]
	for i, name := range c.fields {
		if field < 0 || i == field {
			c.args = append(c.args, name, rueidis.BinaryString(vals[i]))
		}
	}
	_, err := c.do(ctx, op, c.keyed("HSET", c.prefixed(key), c.args...))
	clear(c.args) // keep no view of the caller's values
	return err
}

func (c *recordsConn) Insert(ctx context.Context, key []byte, vals [][]byte) error {
	ctx, err := store.SyncContext(ctx)
	if err != nil {
		return opErr("records: insert", err)
	}
	if err := c.hset(ctx, "records: insert", key, -1, vals); err != nil {
		return err
	}
	c.score = strconv.AppendInt(c.score[:0], int64(javaHash(key)), 10)
	_, err = c.do(ctx, "records: insert: index", c.keyed("ZADD", c.index, rueidis.BinaryString(c.score), rueidis.BinaryString(key)))
	return err
}

func (c *recordsConn) Update(ctx context.Context, key []byte, field int, vals [][]byte) error {
	ctx, err := store.SyncContext(ctx)
	if err != nil {
		return opErr("records: update", err)
	}
	return c.hset(ctx, "records: update", key, field, vals)
}

// Read is HGETALL, or HMGET of the one field asked for.
func (c *recordsConn) Read(ctx context.Context, key []byte, field int, dst [][]byte) (bool, error) {
	ctx, err := store.SyncContext(ctx)
	if err != nil {
		return false, opErr("records: read", err)
	}
	if field >= 0 {
		m, err := c.do(ctx, "records: read", c.keyed("HMGET", c.prefixed(key), c.fields[field]))
		if err != nil {
			return false, err
		}
		vals, err := m.ToArray()
		if err != nil || len(vals) != 1 {
			return false, opErr("records: read", fmt.Errorf("HMGET of one field: %d values, %v", len(vals), err))
		}
		if vals[0].IsNil() {
			return false, nil
		}
		v, err := vals[0].ToString()
		if err != nil {
			return false, opErr("records: read", err)
		}
		dst[field] = append(dst[field][:0], v...)
		return true, nil
	}
	return c.readAll(ctx, key, dst)
}

// readAll reads key's hash whole (HGETALL) into dst, by field name.
func (c *recordsConn) readAll(ctx context.Context, key []byte, dst [][]byte) (bool, error) {
	m, err := c.do(ctx, "records: read", c.keyed("HGETALL", c.prefixed(key)))
	if err != nil {
		return false, err
	}
	hash, err := m.AsMap()
	if err != nil {
		return false, opErr("records: read", err)
	}
	if len(hash) == 0 {
		return false, nil
	}
	for i, name := range c.fields {
		dst[i] = dst[i][:0]
		if v, ok := hash[name]; ok {
			s, err := v.ToString()
			if err != nil {
				return false, opErr("records: read", err)
			}
			dst[i] = append(dst[i], s...)
		}
	}
	return true, nil
}

func (c *recordsConn) Scan(ctx context.Context, start []byte, n int, fn func(key []byte, vals [][]byte) error) (int, error) {
	ctx, err := store.SyncContext(ctx)
	if err != nil {
		return 0, opErr("records: scan", err)
	}
	if n <= 0 {
		return 0, nil
	}
	c.score = strconv.AppendInt(c.score[:0], int64(javaHash(start)), 10)
	m, err := c.do(ctx, "records: scan", c.keyed("ZRANGEBYSCORE", c.index, rueidis.BinaryString(c.score), "+inf", "LIMIT", "0", strconv.Itoa(n)))
	if err != nil {
		return 0, err
	}
	if c.scan, err = m.AsStrSlice(); err != nil {
		return 0, opErr("records: scan", err)
	}
	got := 0
	for _, key := range c.scan {
		c.kbuf = append(c.kbuf[:0], key...)
		ok, err := c.readAll(ctx, c.kbuf, c.vals)
		if err != nil {
			return got, err
		}
		if !ok {
			continue // indexed but gone: YCSB's binding adds nothing for it either
		}
		got++
		if err := fn(c.kbuf, c.vals); err != nil {
			return got, err
		}
	}
	return got, nil
}
