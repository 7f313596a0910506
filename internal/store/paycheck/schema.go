package paycheck

import (
	"encoding/hex"
	"iter"
	"strconv"

	"github.com/storebench/storebench/internal/store"
)

// Tables are the payments tables in the order they are dropped (transfers
// first: it references the others); delete_journal is the check's own.
var Tables = []string{"transfers", "tokens", "cards", "accounts", "permissions", "users", "organizations", "delete_journal"}

// DataTables are the tables setup creates and loads: all but delete_journal.
var DataTables = Tables[:7]

// ForeignKey is one foreign key of the payments tables: Table.Column
// references References(id).
type ForeignKey struct{ Table, Column, References string }

// ForeignKeys are every foreign key, in the order the stores index and add
// them.
var ForeignKeys = []ForeignKey{
	{"users", "organization_id", "organizations"},
	{"accounts", "organization_id", "organizations"},
	{"cards", "account_id", "accounts"},
	{"tokens", "user_id", "users"},
	{"tokens", "permission_id", "permissions"},
	{"transfers", "card_id", "cards"},
	{"transfers", "from_account_id", "accounts"},
	{"transfers", "to_account_id", "accounts"},
	{"transfers", "requesting_user_id", "users"},
}

// Literals is how a dialect writes the payments data as SQL literals.
type Literals struct {
	True, False string // a boolean
	Timestamp   string // a token's expiry, as a time layout (UTC), quoted
}

// LiteralTable is one table's data as multi-row INSERTs of literals
// (numbers, hex blobs, dates and permission names only: nothing to escape).
type LiteralTable struct {
	Name string // the table, unqualified
	cols string
	rows int64
	row  func(i int64, b []byte) []byte // appends row i (1-based), without parentheses
}

// LiteralTables are the data tables in load order (referenced tables first),
// each row written in lit's dialect.
func LiteralTables(d *store.PaymentsData, lit Literals) []LiteralTable {
	num := func(b []byte, vs ...int64) []byte {
		for k, v := range vs {
			if k > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendInt(b, v, 10)
		}
		return b
	}
	boolean := func(b []byte, v bool) []byte {
		if v {
			return append(append(b, ','), lit.True...)
		}
		return append(append(b, ','), lit.False...)
	}
	perms := []string{store.PermTransferRequestsCreate, store.PermTransfersCreate}
	return []LiteralTable{
		{"organizations", "id", d.Orgs, func(i int64, b []byte) []byte { return num(b, i) }},
		{"users", "id, organization_id, frozen", int64(len(d.Users)), func(i int64, b []byte) []byte {
			u := d.Users[i-1]
			return boolean(num(b, u.ID, u.OrgID), u.Frozen)
		}},
		{"permissions", "id, name", int64(len(perms)), func(i int64, b []byte) []byte {
			return append(append(append(num(b, i), ",'"...), perms[i-1]...), '\'')
		}},
		{"tokens", "hash, permission_id, user_id, expires_at", int64(len(d.Tokens)), func(i int64, b []byte) []byte {
			t := d.Tokens[i-1]
			b = append(hex.AppendEncode(append(b, "X'"...), t.Hash[:]), "',"...)
			b = num(b, t.Permission, t.UserID)
			return append(t.ExpiresAt.UTC().AppendFormat(append(b, ",'"...), lit.Timestamp), '\'')
		}},
		{"accounts", "id, organization_id, balance, frozen", d.Accounts, func(i int64, b []byte) []byte {
			a := d.Account(i)
			return boolean(num(b, a.ID, a.OrgID, a.Balance), a.Frozen)
		}},
		{"cards", "id, account_id, expiration_date, security_code, frozen", d.Accounts, func(i int64, b []byte) []byte {
			c := d.Card(i)
			b = c.Expires.UTC().AppendFormat(append(num(b, c.ID, c.AccountID), ",'"...), "2006-01-02")
			return boolean(num(append(b, "',"...), int64(c.CVV)), c.Frozen)
		}},
	}
}

// Inserts yields the table's INSERT statements into table (the name as the
// dialect qualifies and quotes it), batch rows each.
func (t LiteralTable) Inserts(table string, batch int) iter.Seq[string] {
	return func(yield func(string) bool) {
		head := `INSERT INTO ` + table + ` (` + t.cols + `) VALUES `
		b := make([]byte, 0, 64*batch)
		for i := int64(1); i <= t.rows; {
			b = append(b[:0], head...)
			for k := 0; k < batch && i <= t.rows; k, i = k+1, i+1 {
				if k > 0 {
					b = append(b, ',')
				}
				b = append(t.row(i, append(b, '(')), ')')
			}
			if !yield(string(b)) {
				return
			}
		}
	}
}
