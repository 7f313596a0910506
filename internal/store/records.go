package store

import (
	"context"
	"strings"
)

// Records is the optional capability of a Store to keep records of named
// fields the way YCSB's own binding for the store keeps them (the ycsb
// workload): a SQL store a table usertable(ycsb_key, field0 …) as YCSB's
// JDBC binding, Redis a hash per record and a sorted set indexing the keys
// as YCSB's Redis binding. A store that is not one keeps each record as one
// KV value instead, which the workload encodes itself.
//
// Every such store can scan (Scan), which is what YCSB's workload E needs:
// the planner asks a kind's Prototype (a nil store) whether it is Records.
type Records interface {
	// RecordsSetup makes an empty set of records of the given fields,
	// in order, inside the store's namespace (dropping one a run left
	// there), and says the layout in one line, for the result.
	RecordsSetup(ctx context.Context, fields []string) (layout string, err error)
	// RecordsOpen opens one worker's connection to the set RecordsSetup
	// made.
	RecordsOpen(ctx context.Context) (RecordsConn, error)
}

// RecordsConn is one worker's connection to a store's records. A record's
// fields are addressed by their index in RecordsSetup's list; vals and dst
// hold one slot per field. field < 0 means every field.
type RecordsConn interface {
	// Insert stores a new record: field i holds vals[i].
	Insert(ctx context.Context, key []byte, vals [][]byte) error
	// Read appends the record's field i to dst[i][:0]: every field when
	// field < 0, else at least dst[field] (a store may fill the others
	// too). ok is false when there is no record.
	Read(ctx context.Context, key []byte, field int, dst [][]byte) (ok bool, err error)
	// Update sets field to vals[field] (every field to vals when field < 0).
	Update(ctx context.Context, key []byte, field int, vals [][]byte) error
	// Scan reads at most n records in the store's scan order (a SQL
	// store's key order, Redis's index's order), from the first at or
	// after start, and hands each to fn, which must not keep key or vals
	// (the store reuses them). It returns how many it read; fn's error
	// stops it and is returned.
	Scan(ctx context.Context, start []byte, n int, fn func(key []byte, vals [][]byte) error) (int, error)
	Close() error
}

// RecordsSQL are a SQL store's records statements, YCSB's JDBC binding's
// on its usertable: the SQL stores share them, each with its own quoting,
// placeholders and table options.
type RecordsSQL struct {
	// DDL creates the table: YCSB_KEY VARCHAR(255) PRIMARY KEY, then a
	// TEXT column per field.
	DDL string
	// Insert binds the key, then the fields; Read the key; UpdateAll the
	// fields, then the key; Update[i] field i, then the key; Scan the start
	// key and the limit.
	Insert, Read, UpdateAll, Scan string
	Update                        []string
}

// NewRecordsSQL builds the statements on table (quoted) with the field
// columns cols (quoted); create starts the DDL ("CREATE TABLE", "CREATE
// UNLOGGED TABLE"), tail ends it (table options, or ""); param is the
// placeholder of the n-th parameter, from 1.
func NewRecordsSQL(create, table, tail string, cols []string, param func(n int) string) RecordsSQL {
	r := RecordsSQL{
		DDL:  create + ` ` + table + ` (YCSB_KEY VARCHAR(255) PRIMARY KEY, ` + strings.Join(cols, ` TEXT, `) + ` TEXT)` + tail,
		Read: `SELECT * FROM ` + table + ` WHERE YCSB_KEY = ` + param(1),
		Scan: `SELECT * FROM ` + table + ` WHERE YCSB_KEY >= ` + param(1) + ` ORDER BY YCSB_KEY LIMIT ` + param(2),
	}
	values := make([]string, len(cols))
	sets := make([]string, len(cols))
	for i, c := range cols {
		values[i] = param(i + 2)
		sets[i] = c + ` = ` + param(i+1)
		r.Update = append(r.Update, `UPDATE `+table+` SET `+c+` = `+param(1)+` WHERE YCSB_KEY = `+param(2))
	}
	r.Insert = `INSERT INTO ` + table + ` (YCSB_KEY, ` + strings.Join(cols, `, `) + `) VALUES (` + param(1) + `, ` + strings.Join(values, `, `) + `)`
	r.UpdateAll = `UPDATE ` + table + ` SET ` + strings.Join(sets, `, `) + ` WHERE YCSB_KEY = ` + param(len(cols)+1)
	return r
}

// RecordsLayout says a SQL store's records layout in the result's words.
func (r RecordsSQL) RecordsLayout() string {
	return "a row per record: " + r.DDL + " (YCSB's JDBC binding's usertable)"
}
