// Package store defines what every data store offers to the workloads: a Store
// that opens clients (one connection each) and small capability interfaces that
// clients implement. Workloads and the planner check capabilities by type
// assertion, so an impossible (store, workload) pair is reported before a run,
// never faked half-way through.
//
// This package imports none of storebench's other packages.
package store

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Store is one concrete target: a managed server, an external URL or a local
// directory. It is safe for concurrent use; its clients are not.
type Store interface {
	// Open returns a new client with its own connection, owned by one worker.
	Open(ctx context.Context) (Client, error)
	// Info reads back what is being measured: version and effective settings.
	Info(ctx context.Context) (Info, error)
	// Reset removes every piece of data this store created (its schema, its
	// key prefix, its directory) and leaves it ready for a fresh workload.
	// It never touches anything it did not create.
	Reset(ctx context.Context) error
	// Close releases the store's own resources and removes what it created.
	Close(ctx context.Context) error
}

// Client is one connection. It is used by one goroutine at a time.
type Client interface {
	Close() error
}

// KV is the key-value capability: a Client that implements it can run the kv,
// hotkey and throughput workloads.
type KV interface {
	// Get appends the value of key to dst[:0] and returns it. ok is false when
	// the key does not exist; that is not an error.
	Get(ctx context.Context, key, dst []byte) (val []byte, ok bool, err error)
	// Set stores val under key. ttl 0 means no expiry.
	Set(ctx context.Context, key, val []byte, ttl time.Duration) error
	// Delete removes key; deleting a missing key is not an error.
	Delete(ctx context.Context, key []byte) error
}

// Adder is the optional capability of a KV client to store a value only
// where its key holds none, or only an expired one, atomically on the
// server: Redis SET NX PX, Memcached add, PostgreSQL INSERT … ON CONFLICT
// that overwrites an expired row only. A lease or lock is built on it: of
// the clients that race to add one key, exactly one gets added = true.
// A store whose configuration cannot (PostgreSQL's hash-index design has
// no unique key) returns an error wrapping ErrUnsupported.
type Adder interface {
	// Add stores val under key unless key holds an unexpired value; added
	// says whether it did. ttl 0 means no expiry.
	Add(ctx context.Context, key, val []byte, ttl time.Duration) (added bool, err error)
}

// Info describes a target as measured, for the result file.
type Info struct {
	// Kind is the store kind: memory, files, sqlite, postgres, redis, memcached, mysql.
	Kind string `json:"kind"`
	// Version is the server's or library's version as it reports it.
	Version string `json:"version"`
	// Location is where the data lives: a redacted URL, a path, "in-process".
	Location string `json:"location"`
	// Settings are the effective settings read back from the store, not the
	// ones storebench asked for.
	Settings map[string]string `json:"settings,omitempty"`
	// Durability says in a few words what a crash would lose, e.g.
	// "memory only", "fsync every commit", "OS page cache, no fsync".
	Durability string `json:"durability"`
	// Namespace is what storebench owns inside the store: schema, key prefix, directory.
	Namespace string `json:"namespace,omitempty"`
}

// PerRequestOpener is the optional capability of opening a client for one
// operation on a connection of its own that costs what an application that
// connects per request pays, and no more: no round trip to prove the
// connection (a ping) or set it up beyond what the protocol needs, none to
// close it. A connection per operation (--connect-per-op) uses it.
type PerRequestOpener interface {
	OpenPerRequest(ctx context.Context) (Client, error)
}

// Settler is the optional capability of a Store to make freshly written data
// ready to be read, as an operator would before serving reads (PostgreSQL:
// VACUUM ANALYZE, which index-only scans need). Workloads call it between a
// write phase and a read phase, outside the measured time, and say so.
type Settler interface {
	Settle(ctx context.Context) error
}

// Batcher is the optional capability of sending several operations in one
// round trip: Redis pipelines, Memcached multi-get, PostgreSQL pipeline
// mode. Workloads use it for --pipeline and for bulk loads (--batch).
type Batcher interface {
	// SetBatch stores vals[i] under keys[i], in as few round trips as the
	// store allows. ttl 0 means no expiry.
	SetBatch(ctx context.Context, keys, vals [][]byte, ttl time.Duration) error
	// GetBatch looks up every key; it appends the value of keys[i] to
	// dst[i][:0] and sets found[i]. It returns dst, whose slices it may have grown.
	GetBatch(ctx context.Context, keys, dst [][]byte, found []bool) ([][]byte, error)
}

// BulkLoader is the optional capability of loading many rows the fastest
// way the store knows (PostgreSQL COPY), for --batch.
type BulkLoader interface {
	Load(ctx context.Context, keys, vals [][]byte) error
}

// ServerTimer is the optional capability of a Store (not a Client) to read
// the server's own cumulative view of the time it spent executing this
// store's operations: pg_stat_statements, Redis INFO commandstats. Read twice,
// around a phase, it shows how much of the client's latency the server
// itself accounts for. It must not use a worker's connection.
type ServerTimer interface {
	ServerTime(ctx context.Context) (ServerTime, error)
}

// ServerTime is one reading of a server's cumulative counters, since the
// server started or its statistics were last reset.
type ServerTime struct {
	// Source says where the figures come from and what they cover, e.g.
	// "pg_stat_statements total_exec_time ..." or "INFO commandstats (whole server)".
	Source string
	// Ops maps an operation ("get", "set", "delete", ...) to its counters.
	Ops map[string]OpTime
}

// OpTime is the server's cumulative count and execution time of one operation.
type OpTime struct {
	Calls int64
	Total time.Duration
}

// ErrNoServerTime wraps the error of a ServerTimer whose server does not offer
// the statistics (e.g. pg_stat_statements not installed): a fact about the
// target to report, not a failure of the run.
var ErrNoServerTime = errors.New("server-side time unavailable")

// Payments is the optional capability of a Store (not a Client) to run the
// payments OLTP workload (workloads/payments.md): seven tables inside the
// store's namespace, the four round trips of a transfer, deletes of earlier
// transfers, and the check of the invariants afterwards. Setup, check, stats
// and drop are namespace-wide administrative operations; every worker gets
// its own connection from PaymentsOpen.
type Payments interface {
	// PaymentsPrepare checks, before any work, that the store can run cfg
	// (mode, durability, isolation) and says how cfg maps onto its settings.
	PaymentsPrepare(ctx context.Context, cfg PaymentsConfig) (PaymentsSettings, error)
	// PaymentsSetup drops this namespace's payments tables if a run left
	// them, creates them, loads d with foreign keys off, then adds the
	// foreign keys and their indexes and the server-side routine.
	PaymentsSetup(ctx context.Context, d *PaymentsData) (PaymentsSetupInfo, error)
	// PaymentsOpen opens one worker's connection, prepared for cfg.
	PaymentsOpen(ctx context.Context, cfg PaymentsConfig) (PaymentsConn, error)
	// PaymentsCheck reads back what the invariants are checked against.
	PaymentsCheck(ctx context.Context, in *PaymentsCheckInput) (PaymentsFacts, error)
	// PaymentsStats samples server statistics (dead tuples, history list
	// length, ...), by name; it must not use a worker's connection.
	PaymentsStats(ctx context.Context) (map[string]float64, error)
	// PaymentsDrop removes the payments tables (only this namespace's own).
	PaymentsDrop(ctx context.Context) error
}

// PaymentsModer is a Payments store that offers only some of the modes
// (PaymentsRoutine, PaymentsClient); one that is not offers both. The
// planner asks a kind's Prototype, a nil store: PaymentsModes must not
// read its receiver.
type PaymentsModer interface {
	PaymentsModes() []string
}

// PaymentsConn is one worker's connection. Its methods are the round trips
// of a transfer; each is one statement, except Transfer in client mode.
// Outcomes (a missing row, insufficient funds at commit) are results, not
// errors; a deadlock, serialization failure or lock timeout is an error of
// errclass.ClassConflict, which the caller may retry.
type PaymentsConn interface {
	// Token looks up a token that grants permission (RT1, RT3): ok is false
	// when no such token grants it.
	Token(ctx context.Context, hash *[16]byte, permission string, out *PaymentsTokenRow) (ok bool, err error)
	// Card reads a card and its account (RT2).
	Card(ctx context.Context, id int64, out *PaymentsCardRow) (ok bool, err error)
	// Transfer debits t.From and credits t.To, lower account id first
	// (payer first with t.PayerFirst), asserts both rows were updated,
	// inserts the transfer and commits, in one transaction (RT4). It sets
	// t.ID and t.CreatedUs, or t.Insufficient when the CHECK (balance >= 0)
	// rolled it back.
	Transfer(ctx context.Context, t *PaymentsTransfer) error
	// DeleteTransfer deletes the transfer with the lowest id >= fromID and
	// returns it; ok is false when there is none.
	DeleteTransfer(ctx context.Context, fromID int64, out *PaymentsDeleted) (ok bool, err error)
	Close() error
}

// The payments permissions, by id.
const (
	PermTransferRequestsCreate = "transfer_requests:create" // id 1
	PermTransfersCreate        = "transfers:create"         // id 2
)

// Payments transaction modes.
const (
	// PaymentsRoutine runs RT4 as one call of a server-side function or
	// procedure (one round trip), as the original tool does.
	PaymentsRoutine = "routine"
	// PaymentsClient runs RT4 as BEGIN, statements, COMMIT from the client.
	PaymentsClient = "client"
)

// Payments durability levels, mapped to each engine's knobs.
const (
	// PaymentsStrict: a commit returns once it is on disk (fsync).
	PaymentsStrict = "strict"
	// PaymentsRelaxed: a commit does not wait for the fsync; a crash may
	// lose the last moments of commits, never corrupt.
	PaymentsRelaxed = "relaxed"
)

// PaymentsConfig is how the transfers run.
type PaymentsConfig struct {
	Mode       string // PaymentsRoutine or PaymentsClient
	Durability string // PaymentsStrict or PaymentsRelaxed
	// Isolation is "" (the engine's default), "read-committed",
	// "repeatable-read" or "serializable".
	Isolation string
}

// Check validates c for a store (named in errors) that offers both modes and
// maps isolation levels through isolations (names to the engine's words).
func (c PaymentsConfig) Check(storeName string, isolations map[string]string) error {
	switch c.Mode {
	case PaymentsRoutine, PaymentsClient:
	default:
		return fmt.Errorf("%s: payments mode %q: want %s or %s", storeName, c.Mode, PaymentsRoutine, PaymentsClient)
	}
	switch c.Durability {
	case PaymentsStrict, PaymentsRelaxed:
	default:
		return fmt.Errorf("%s: payments durability %q: want %s or %s", storeName, c.Durability, PaymentsStrict, PaymentsRelaxed)
	}
	if _, ok := isolations[c.Isolation]; c.Isolation != "" && !ok {
		return fmt.Errorf("%s: payments isolation %q: want read-committed, repeatable-read or serializable (or empty for the default)", storeName, c.Isolation)
	}
	return nil
}

// PaymentsSettings is how a store maps a PaymentsConfig, as read back.
type PaymentsSettings struct {
	// Knobs are the effective settings behind the durability level and
	// isolation, e.g. synchronous_commit=off (per session).
	Knobs map[string]string `json:"knobs"`
	// Durability says in words what a crash loses.
	Durability string `json:"durability"`
	// Isolation is the effective isolation level.
	Isolation string `json:"isolation"`
	// ExecMode is how the driver sends statements (prepared, interpolated).
	ExecMode string `json:"exec_mode"`
	// Routine is the server-side function or procedure's definition in
	// routine mode.
	Routine string `json:"routine,omitempty"`
}

// PaymentsData is the data set. Rows come from functions of the id, so the
// same seed loads the same data on every engine without being held in memory.
type PaymentsData struct {
	Orgs   int64           // organizations 1..Orgs
	Users  []PaymentsUser  // ids 1..len(Users)
	Tokens []PaymentsToken // a few per user
	// Accounts and cards: one card per account, with the account's id.
	Accounts int64
	Account  func(id int64) PaymentsAccount
	Card     func(id int64) PaymentsCard
}

// PaymentsUser is a row of users.
type PaymentsUser struct {
	ID, OrgID int64
	Frozen    bool
}

// PaymentsToken is a row of tokens: one permission of one token.
type PaymentsToken struct {
	Hash       [16]byte
	Permission int64 // 1 or 2
	UserID     int64
	ExpiresAt  time.Time
}

// PaymentsAccount is a row of accounts.
type PaymentsAccount struct {
	ID, OrgID, Balance int64
	Frozen             bool
}

// PaymentsCard is a row of cards.
type PaymentsCard struct {
	ID, AccountID int64
	Expires       time.Time // a date: midnight UTC
	CVV           int16
	Frozen        bool
}

// PaymentsSetupInfo is what setup reports.
type PaymentsSetupInfo struct {
	// ServerNowUs is the server's clock when setup finished, in Unix
	// microseconds: transfers created later are inside the run window.
	ServerNowUs int64
	// DDL is the schema as created, for the record.
	DDL string
}

// PaymentsTokenRow is what RT1/RT3 read.
type PaymentsTokenRow struct {
	UserID, OrgID int64
	UserFrozen    bool
	Expired       bool // by the server's clock
}

// PaymentsCardRow is what RT2 reads.
type PaymentsCardRow struct {
	AccountID, AccountOrgID, Balance int64
	CVV                              int16
	CardFrozen, CardExpired          bool // expired by the server's date
	AccountFrozen                    bool
}

// PaymentsTransfer is RT4's input and result.
type PaymentsTransfer struct {
	Card, From, To, User, Amount int64
	// PayerFirst updates the payer's account first instead of the lower
	// id first, as a naive implementation would: two transfers between the
	// same accounts in opposite directions can then deadlock.
	PayerFirst bool
	// Results.
	ID           int64
	CreatedUs    int64 // created_at by the server's clock, Unix microseconds
	Insufficient bool  // declined: the debit would make the balance negative
}

// PaymentsUpdate is one of RT4's two balance updates: Delta added to
// Account's balance.
type PaymentsUpdate struct{ Account, Delta int64 }

// Updates are t's two balance updates in the order they take their row
// locks: the lower account id first (two transfers in opposite directions
// cannot deadlock), or the payer's first with PayerFirst. The payer's
// account is debited, the other credited.
func (t *PaymentsTransfer) Updates() [2]PaymentsUpdate {
	first, second := t.From, t.To
	if !t.PayerFirst && second < first {
		first, second = second, first
	}
	var u [2]PaymentsUpdate
	for i, a := range [2]int64{first, second} {
		u[i] = PaymentsUpdate{Account: a, Delta: t.Amount}
		if a == t.From {
			u[i].Delta = -t.Amount
		}
	}
	return u
}

// PaymentsDeleted is a deleted transfer, as the delete journal keeps it.
type PaymentsDeleted struct {
	ID, From, To, Amount, CreatedUs int64
}

// PaymentsCheckInput is what the invariants are checked against.
type PaymentsCheckInput struct {
	InitialBalance       int64
	AmountMin, AmountMax int64
	WindowStartUs        int64             // server clock before the first transfer
	Journal              []PaymentsDeleted // every deleted transfer
	Limit                int               // rows listed per violated invariant
}

// PaymentsFacts is what PaymentsCheck reads back; the workload compares it
// with what it expects.
type PaymentsFacts struct {
	Accounts   int64
	SumBalance int64
	// Negative lists accounts with a balance below zero (up to Limit).
	Negative      []int64
	NegativeCount int64
	// Mismatched lists accounts whose balance is not initial + in - out
	// over the surviving transfers and the journal (up to Limit).
	Mismatched      []PaymentsMismatch
	MismatchedCount int64
	Rows            int64            // transfers
	PerMinute       []PaymentsMinute // surviving transfers per minute of created_at
	// Malformed lists transfers that break a row rule (up to Limit).
	Malformed      []PaymentsMalformed
	MalformedCount int64
	WindowEndUs    int64 // server clock at the check
}

// PaymentsMismatch is an account whose balance does not add up.
type PaymentsMismatch struct {
	Account, Balance, Expected int64
}

// PaymentsMinute counts transfers created in one minute.
type PaymentsMinute struct {
	Minute int64 // Unix time / 60
	Count  int64
}

// PaymentsMalformed is a transfer that breaks a row rule.
type PaymentsMalformed struct {
	ID      int64
	Problem string
}

// Sessions is the capability of a Store (like ServerTimer, not a Client's)
// to run the sessions workload: it opens session handles for one design,
// each on a connection of its own. It is on the Store because a store's
// session table is named after its namespace, which only the Store knows.
type Sessions interface {
	OpenSessions(ctx context.Context, d SessionDesign) (SessionClient, error)
}

// SessionClient runs the session operations of one design on one
// connection. Like a Client, it is used by one goroutine at a time.
type SessionClient interface {
	// Close closes the handle's connection.
	Close() error
	// Setup removes the session data this store created earlier (its table,
	// key generation or files) and creates what the design needs. Run it on
	// one handle before any handle's first operation.
	Setup(ctx context.Context) error
	// Create stores payload as a new session that expires after the design's
	// TTL and returns its id. Stores that generate ids (an identity column)
	// ignore id and return theirs; the others store the session under id,
	// which the caller keeps unique.
	Create(ctx context.Context, id int64, payload []byte) (int64, error)
	// Read appends the payload of session id to dst[:0]; ok is false when the
	// session does not exist or has expired. With SessionDesign.KeepaliveOnRead
	// the read also extends the session (UPDATE … RETURNING, GETEX, gat).
	Read(ctx context.Context, id int64, dst []byte) (payload []byte, ok bool, err error)
	// KeepAlive extends the sessions ids to now + TTL in as few round trips as
	// the store allows; with SessionDesign.RefreshBelow only those with less
	// than that left. It returns how many were extended, or -1 when the store
	// does not say.
	KeepAlive(ctx context.Context, ids []int64) (int64, error)
	// Reap deletes expired sessions, at most limit (0: all of them in one
	// statement), and returns how many. Stores with native expiry
	// (SessionCaps.NativeExpiry) return 0 and do nothing.
	Reap(ctx context.Context, limit int) (int64, error)
	// Observe samples what the store's internals show about the sessions.
	Observe(ctx context.Context) (SessionSample, error)
	// Describe reads the design back from the store itself (catalog, CONFIG,
	// file system), for the result: what is really in effect.
	Describe(ctx context.Context) (map[string]string, error)
	// ServerSettings returns the server settings the design needs that the
	// server does not have now, e.g. {"autovacuum_max_workers": "6"}; they
	// need a restart, which only the server's manager can do.
	ServerSettings(ctx context.Context) (map[string]string, error)
	// Caps says how the store keeps sessions.
	Caps() SessionCaps
}

// SessionCaps describes how a store keeps sessions.
type SessionCaps struct {
	// ServerIDs: Create returns an id the store generated.
	ServerIDs bool
	// NativeExpiry: the store removes expired sessions itself; no reaper.
	NativeExpiry bool
	// Resolution is the granularity of the store's expiry clock, e.g. 1 s
	// for Memcached: a session may outlive or fall short of its TTL by that.
	Resolution time.Duration
}

// SessionDesign is how a store keeps sessions, knob by knob. Each knob
// switches on its own; a store applies those it has and Describe says which.
// The V numbers are those of the sessions workload spec.
type SessionDesign struct {
	// TTL is the session lifetime after its creation or last keepalive.
	TTL time.Duration
	// RefreshBelow (V11, skip-if-fresh): a keepalive extends only sessions
	// with less than this left; 0 extends every one.
	RefreshBelow time.Duration
	// KeepaliveOnRead (V10): each Read extends its session (UPDATE …
	// RETURNING, GETEX, gat); otherwise the caller batches KeepAlive calls.
	KeepaliveOnRead bool

	Unlogged    bool   // V1: CREATE UNLOGGED TABLE
	IDType      string // V2: "int" or "bigint"
	IDCache     int    // V3: identity CACHE (1 = PostgreSQL's default)
	PayloadType string // V4: "jsonb", "text", "json" or "bytea"
	ExpiresType string // V5: "timestamptz" or "timestamp"
	AsyncCommit bool   // V6: synchronous_commit=off for each write transaction
	// TxForm is how an INSERT runs its transaction under AsyncCommit when
	// it is not a function call: "statements" (BEGIN; SET LOCAL …; INSERT;
	// COMMIT as four round trips, the article's), "string" (the same four
	// statements as one multi-statement string) or "pipeline" (pipelined,
	// one round trip). Other writes always pipeline.
	TxForm               string
	Function             bool // V7: create through a new_session() function
	ExpiresIndex         bool // V8: an index on expires_at
	Fillfactor           int  // V12: table fillfactor; 0 or 100 = default
	TableAutovacuum      bool // V13: autovacuum threshold 2000, scale 0.01, cost_delay 2 on the table
	AutovacuumMaxWorkers int  // V14: server autovacuum_max_workers; 0 = leave the server's
	Constraints          bool // V15: NOT NULL on every column and varchar(n) for a text payload
	// FileSync is how the files store makes a create durable: "none", "file"
	// (fsync the file) or "dir" (the file, then its directory); "" = the
	// store's own setting.
	FileSync string
	// TimeScale, when below 1, shrinks the store's own background timers
	// that a short run would otherwise never see (PostgreSQL
	// autovacuum_naptime), as ServerSettings asks.
	TimeScale float64
}

// CheckTimes checks, for store name, that the TTL is at least minTTL, the
// shortest the store keeps (atLeast says it in words, e.g. "at least 1 ms"),
// and that RefreshBelow lies between 0 and the TTL.
func (d SessionDesign) CheckTimes(name string, minTTL time.Duration, atLeast string) error {
	if d.TTL < minTTL {
		return fmt.Errorf("%s: sessions: TTL must be %s", name, atLeast)
	}
	if d.RefreshBelow < 0 || d.RefreshBelow > d.TTL {
		return fmt.Errorf("%s: sessions: refresh-below %v must lie between 0 and the TTL %v", name, d.RefreshBelow, d.TTL)
	}
	return nil
}

// SessionSample is one observation of a session store.
type SessionSample struct {
	// Rows is how many sessions are physically there, expired ones not yet
	// removed included; -1 when the store cannot tell.
	Rows int64
	// Expired is how many of Rows have expired; -1 when unknown.
	Expired int64
	// OldestExpired is how long ago the oldest expired session still there
	// expired: how long expired sessions linger. 0 when none or unknown.
	OldestExpired time.Duration
	// Bytes is what the sessions take: table and index size, memory, file bytes.
	Bytes int64
	// Metrics are store-specific counters and gauges (n_dead_tup, wal_bytes,
	// expired_keys, evictions, …), cumulative where the store's are.
	Metrics map[string]float64
}

// SessionKnobber is a sessions store that names the knobs of
// SessionDesign its tables honour (the others change nothing on it), so
// the sessions workload's summary says which applied without knowing
// which store it ran on.
type SessionKnobber interface {
	SessionKnobs() []string
}

// SessionArticle marks the sessions store the article's experiments were
// made on (PostgreSQL, whose commit durability a transaction can set):
// phase A's insert variants run only there, and phase B compares the
// article's naive design with the tuned one there by default.
type SessionArticle interface {
	SessionArticleStore()
}

// SessionReplicas is the optional capability of a Store whose server can
// have read replicas: it opens a session handle on the replica reachable at
// url, for the same namespace. Such a handle can only Read.
type SessionReplicas interface {
	OpenReplicaSessions(ctx context.Context, url string, d SessionDesign) (SessionClient, error)
}

// Reconnector is the optional capability of a Store to reconnect its own
// administrative connection after its server restarted.
type Reconnector interface {
	Reconnect(ctx context.Context) error
}

// emptyBytes is what NonNil returns for nil.
var emptyBytes = []byte{}

// NonNil returns b, or an empty slice when b is nil: the SQL drivers send a
// nil []byte as NULL, and an empty key or value is not NULL.
func NonNil(b []byte) []byte {
	if b == nil {
		return emptyBytes
	}
	return b
}

// RowsAffected is a statement's count of affected rows, or the error of the
// statement or of the count: pass it Exec's two results, and wrap the one
// error it returns.
func RowsAffected(res interface{ RowsAffected() (int64, error) }, err error) (int64, error) {
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// LastInsertID is an INSERT's generated id, or the error of the statement
// or of reading the id, as RowsAffected.
func LastInsertID(res interface{ LastInsertId() (int64, error) }, err error) (int64, error) {
	if err != nil {
		return 0, err
	}
	return res.LastInsertId()
}

// EndOnce ends a store once: under mu, unless *closed is set already, it
// sets it and runs end (Close or Detach's work). Ending a store twice is
// not an error, and a store is closed even when end fails.
func EndOnce(mu *sync.Mutex, closed *bool, end func() error) error {
	mu.Lock()
	defer mu.Unlock()
	if *closed {
		return nil
	}
	*closed = true
	return end()
}

// Ended reads, under mu, whether EndOnce has ended the store.
func Ended(mu *sync.Mutex, closed *bool) bool {
	mu.Lock()
	defer mu.Unlock()
	return *closed
}

// OpenChecked opens a client of s for a handle of its own (a session
// handle), once the handle's own check, made by the caller, passed: a
// failed check is returned as it is, before any connection. C is the
// store's client type.
func OpenChecked[C Client](ctx context.Context, s Store, check error) (C, error) {
	var none C
	if check != nil {
		return none, check
	}
	cl, err := s.Open(ctx)
	if err != nil {
		return none, err
	}
	c, ok := cl.(C)
	if !ok {
		cl.Close()
		return none, fmt.Errorf("store: %T opened a %T, not a %T", s, cl, none)
	}
	return c, nil
}
