// Package paycheck is what the SQL stores share of the payments workload:
// the tables and foreign keys, the data as SQL literals (schema.go) and the
// invariant check, one algorithm each, with each store supplying its
// connection and its dialect.
package paycheck

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/storebench/storebench/internal/store"
)

// Check is the one invariant check of the SQL stores: it reads the
// server clock, loads the delete journal into a table beside the transfers,
// and reads back every fact the workload compares (sums, negative balances,
// balances that do not add up, transfers per minute, rows breaking a rule).
// The store supplies its connection and its dialect's SQL; the order of the
// steps and what each one fills are the same everywhere.
func Check(ctx context.Context, db DB, d *Dialect, in *store.PaymentsCheckInput) (store.PaymentsFacts, error) {
	var f store.PaymentsFacts
	fail := func(what string, err error) (store.PaymentsFacts, error) {
		return f, d.Err("payments check: "+what, err)
	}
	if err := queryOne(ctx, db, d.Clock, nil, &f.WindowEndUs); err != nil {
		return fail("read clock", err)
	}
	for _, q := range d.CreateJournal {
		if err := db.Exec(ctx, q); err != nil {
			return fail("create delete_journal", err)
		}
	}
	if err := loadJournal(ctx, db, d, in.Journal); err != nil {
		return fail("load delete_journal", err)
	}
	limit := max(in.Limit, 1)
	values := [...]any{
		InitialBalance: in.InitialBalance, AmountMin: in.AmountMin, AmountMax: in.AmountMax,
		WindowStart: in.WindowStartUs, WindowEnd: f.WindowEndUs, Limit: limit,
	}
	for _, step := range []struct {
		what string
		q    Query
		one  []any // the one row's destinations, or
		row  func(scan func(dest ...any) error) error
	}{
		{"sum balances", d.Sums, []any{&f.Accounts, &f.SumBalance, &f.NegativeCount}, nil},
		{"negative balances", d.Negative, nil, func(scan func(...any) error) error {
			var id int64
			err := scan(&id)
			f.Negative = append(f.Negative, id)
			return err
		}},
		{"per-account balances", d.Mismatched, nil, func(scan func(...any) error) error {
			var m store.PaymentsMismatch
			err := scan(&f.MismatchedCount, &m.Account, &m.Balance, &m.Expected)
			f.Mismatched = append(f.Mismatched, m)
			return err
		}},
		{"count transfers", d.Rows, []any{&f.Rows}, nil},
		{"transfers per minute", d.PerMinute, nil, func(scan func(...any) error) error {
			var m store.PaymentsMinute
			err := scan(&m.Minute, &m.Count)
			f.PerMinute = append(f.PerMinute, m)
			return err
		}},
		{"row rules", d.Malformed, nil, func(scan func(...any) error) error {
			var m store.PaymentsMalformed
			err := scan(&f.MalformedCount, &m.ID, &m.Problem)
			f.Malformed = append(f.Malformed, m)
			return err
		}},
	} {
		args := make([]any, len(step.q.Args))
		for i, a := range step.q.Args {
			args[i] = values[a]
		}
		var err error
		if step.row == nil {
			err = queryOne(ctx, db, step.q.SQL, args, step.one...)
		} else {
			err = db.Query(ctx, step.q.SQL, args, step.row)
		}
		if err != nil {
			return fail(step.what, err)
		}
	}
	return f, nil
}

// DB is what Check needs of a store's connection. Both
// methods put the store's names into the statement (the dialect's SQL
// writes them with the store's own placeholder, such as "@.").
type DB interface {
	Exec(ctx context.Context, q string) error
	// Query runs q and calls row once per result row; scan reads that row.
	Query(ctx context.Context, q string, args []any, row func(scan func(dest ...any) error) error) error
}

// JournalCopier is a DB that loads the delete journal its own faster way
// (PostgreSQL's COPY) instead of by batched INSERTs.
type JournalCopier interface {
	CopyJournal(ctx context.Context, journal []store.PaymentsDeleted) error
}

// Arg names a value a check query takes. A dialect lists its placeholders'
// values in its own order, since MySQL's ? cannot name one value twice while
// PostgreSQL's $1 and SQLite's ?1 can.
type Arg int

// The values a check query may take.
const (
	InitialBalance Arg = iota
	AmountMin
	AmountMax
	WindowStart // server clock before the first transfer, µs
	WindowEnd   // server clock at the check, µs
	Limit       // rows listed per violated invariant
)

// Query is one query of the check and the values of its placeholders, in
// order.
type Query struct {
	SQL  string
	Args []Arg
}

// Dialect is a SQL dialect's text for Check. Each query's result columns are
// fixed; the dialect writes them its own way.
type Dialect struct {
	Clock         string   // one row: the server clock in µs
	CreateJournal []string // drop and create the delete_journal table (id, from_account_id, to_account_id, amount, created_us)
	// InsertJournal starts a multi-row INSERT into delete_journal, up to
	// JournalBatch rows each; unused when the connection is a JournalCopier.
	InsertJournal string
	JournalBatch  int

	Sums       Query // one row: count(*), sum(balance), count of balances below zero over accounts
	Negative   Query // id of accounts below zero, by id, up to the limit
	Mismatched Query // count(*) over (), id, balance, expected: accounts whose balance is not initial + in - out over transfers and journal
	Rows       Query // one row: count(*) of transfers
	PerMinute  Query // Unix minute of created_at, count(*), by minute
	Malformed  Query // count(*) over (), id, problem: transfers breaking a row rule

	// Err wraps a failed step as the store's error, with its class.
	Err func(op string, err error) error
}

func loadJournal(ctx context.Context, db DB, d *Dialect, journal []store.PaymentsDeleted) error {
	if c, ok := db.(JournalCopier); ok {
		return c.CopyJournal(ctx, journal)
	}
	batch := max(d.JournalBatch, 1)
	b := make([]byte, 0, len(d.InsertJournal)+64*min(batch, len(journal)))
	for i := 0; i < len(journal); i += batch {
		b = append(b[:0], d.InsertJournal...)
		for k, j := range journal[i:min(i+batch, len(journal))] {
			if k > 0 {
				b = append(b, ',')
			}
			b = fmt.Appendf(b, "(%d,%d,%d,%d,%d)", j.ID, j.From, j.To, j.Amount, j.CreatedUs)
		}
		if err := db.Exec(ctx, string(b)); err != nil {
			return err
		}
	}
	return nil
}

// queryOne reads a query's one row into dest.
func queryOne(ctx context.Context, db DB, q string, args []any, dest ...any) error {
	rows := 0
	err := db.Query(ctx, q, args, func(scan func(...any) error) error {
		rows++
		return scan(dest...)
	})
	if err == nil && rows != 1 {
		err = fmt.Errorf("%d rows, want one", rows)
	}
	return err
}

// SQLDB is a DB over database/sql: a *sql.DB or *sql.Tx,
// with Resolve putting the store's names into a statement.
type SQLDB struct {
	DB interface {
		ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
		QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	}
	Resolve func(q string) string
}

// ExecAll runs stmts in order, each resolved into the store's names, and
// returns them as they ran (the DDL a setup reports).
func (c SQLDB) ExecAll(ctx context.Context, stmts []string) ([]string, error) {
	var ran []string
	for _, q := range stmts {
		q = c.Resolve(q)
		if _, err := c.DB.ExecContext(ctx, q); err != nil {
			return ran, err
		}
		ran = append(ran, q)
	}
	return ran, nil
}

// Exec runs one statement.
func (c SQLDB) Exec(ctx context.Context, q string) error {
	_, err := c.DB.ExecContext(ctx, c.Resolve(q))
	return err
}

// Query calls row for every row of q.
func (c SQLDB) Query(ctx context.Context, q string, args []any, row func(scan func(dest ...any) error) error) error {
	rows, err := c.DB.QueryContext(ctx, c.Resolve(q), args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := row(rows.Scan); err != nil {
			return err
		}
	}
	return errors.Join(rows.Err(), rows.Close())
}
