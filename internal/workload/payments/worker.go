package payments

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/storebench/storebench/internal/errclass"
	"github.com/storebench/storebench/internal/metrics"
	"github.com/storebench/storebench/internal/store"
)

// Decline reasons, in the order the checks run.
const (
	reasonMissingPermission = iota
	reasonTokenExpired
	reasonUserFrozen
	reasonUnknownCard
	reasonCardFrozen
	reasonCardExpired
	reasonWrongCVV
	reasonAccountFrozen
	reasonInsufficientFunds
	reasonOrgMismatch
	reasonInsufficientAtCommit
	nReasons
)

// Reasons names the decline reasons, as Summary.DeclinedBy keys them.
var Reasons = [nReasons]string{
	"missing_permission", "token_expired", "user_frozen", "unknown_card", "card_frozen", "card_expired",
	"wrong_cvv", "account_frozen", "insufficient_funds", "org_mismatch", "insufficient_funds_at_commit",
}

// Steps timed per worker, each merged into a phase of its name.
const (
	stepTransfer = iota // end to end: RT1 start to commit, retries included
	stepRT1
	stepRT2
	stepRT3
	stepRT4
	stepDelete
	nSteps
)

var stepNames = [nSteps]string{"transfer", "rt1", "rt2", "rt3", "rt4", "delete"}

// counts are what a worker counts per 10-second bucket (and over the warm-up).
type counts struct {
	committed, declined, retries, errors, deletes, deleteMisses, redraws int64
	reasons                                                              [nReasons]int64
}

func (c *counts) add(o *counts) {
	c.committed += o.committed
	c.declined += o.declined
	c.retries += o.retries
	c.errors += o.errors
	c.deletes += o.deletes
	c.deleteMisses += o.deleteMisses
	c.redraws += o.redraws
	for i := range c.reasons {
		c.reasons[i] += o.reasons[i]
	}
}

// shared is the state the workers of one run share.
type shared struct {
	p         Params
	d         *dataSet
	measuring atomic.Bool // set once the warm-up is over
	t0        time.Time   // measured start; read only once measuring is set
	commits   atomic.Int64
	maxID     atomic.Int64 // the highest committed transfer id
}

// worker runs transfers on its own connection. Nothing on its path
// allocates except a bucket or a minute seen for the first time and the
// delete journal's growth.
type worker struct {
	s     *shared
	conn  store.PaymentsConn
	rec   [nSteps]*metrics.Recorder
	rnd   rng // jitter and delete draws
	timer *time.Timer

	cur          *counts // the bucket being counted into
	curSec       int64   // first second of cur's bucket; -1: warm-up
	warm         counts
	buckets      []counts // per 10 s of the measured part
	perSecond    []int32  // committed per second of the measured part
	committed    int64    // every commit, warm-up included
	owed         int      // deletes owed by commits
	journal      []store.PaymentsDeleted
	retrySamples []string        // the first few distinct errors that were retried
	minutes      map[int64]int64 // commits by the minute of their created_at

	hash [16]byte
	tok  store.PaymentsTokenRow
	card store.PaymentsCardRow
	t    store.PaymentsTransfer
	del  store.PaymentsDeleted
}

func newWorker(s *shared, conn store.PaymentsConn, id int) *worker {
	w := &worker{s: s, conn: conn, rnd: rng{s: s.d.derive(streamDraw, -1-int64(id))}, timer: time.NewTimer(time.Hour), minutes: map[int64]int64{}}
	w.timer.Stop()
	for i := range w.rec {
		w.rec[i] = metrics.NewRecorder(nil)
	}
	w.cur = &w.warm
	w.curSec = -1
	return w
}

// at points cur at now's bucket and returns whether now is measured.
func (w *worker) at(now time.Time) bool {
	if !w.s.measuring.Load() {
		return false
	}
	sec := int64(now.Sub(w.s.t0) / time.Second)
	if sec < 0 {
		sec = 0
	}
	for int64(len(w.perSecond)) <= sec {
		w.perSecond = append(w.perSecond, 0)
	}
	b := sec / 10
	for int64(len(w.buckets)) <= b {
		w.buckets = append(w.buckets, counts{})
	}
	w.cur, w.curSec = &w.buckets[b], sec
	return true
}

func (w *worker) record(step int, meas bool, d time.Duration, err error) {
	if !meas {
		return
	}
	if err != nil {
		w.rec[step].RecordError(err, d)
		return
	}
	w.rec[step].Record(d)
}

// Do is one transfer attempt, followed by the delete a commit may owe.
func (w *worker) Do(ctx context.Context, seq int64) error {
	err := w.transfer(ctx, seq)
	if err != nil {
		w.cur.errors++
		return err
	}
	if w.owed > 0 {
		w.owed--
		if err := w.deleteOne(ctx); err != nil {
			w.cur.errors++
			return err
		}
	}
	return nil
}

// maxRetrySamples is how many distinct retried errors a worker keeps.
const maxRetrySamples = 3

func (w *worker) retried(err error) {
	w.cur.retries++
	if len(w.retrySamples) < maxRetrySamples {
		msg := err.Error()
		for _, s := range w.retrySamples {
			if s == msg {
				return
			}
		}
		w.retrySamples = append(w.retrySamples, msg)
	}
}

func (w *worker) decline(reason int) error {
	w.cur.declined++
	w.cur.reasons[reason]++
	return nil
}

// authorize is RT1 and RT3: the token w.hash, read from start on, must
// grant perm and be user's, unexpired, of an unfrozen user of org. It
// returns when the read ended, and authorized false when the transfer ends
// here (declined: err nil).
func (w *worker) authorize(ctx context.Context, step int, meas bool, user, org int64, perm string, start time.Time) (end time.Time, authorized bool, err error) {
	ok, err := w.conn.Token(ctx, &w.hash, perm, &w.tok)
	end = time.Now()
	w.record(step, meas, end.Sub(start), err)
	switch {
	case err != nil:
		return end, false, err
	case !ok:
		return end, false, w.decline(reasonMissingPermission)
	case w.tok.UserID != user:
		return end, false, fmt.Errorf("%w: token of user %d belongs to user %d", errMismatch, user, w.tok.UserID)
	case w.tok.Expired:
		return end, false, w.decline(reasonTokenExpired)
	case w.tok.UserFrozen:
		return end, false, w.decline(reasonUserFrozen)
	case w.tok.OrgID != org:
		return end, false, w.decline(reasonOrgMismatch)
	}
	return end, true, nil
}

// errMismatch is data that cannot be: a token of another user, a card of
// another account.
var errMismatch = errors.New("payments: read back data that the data set does not have")

func (w *worker) transfer(ctx context.Context, seq int64) error {
	s, d, p := w.s, w.s.d, &w.s.p
	start := time.Now()
	meas := w.at(start)
	r := rng{s: d.derive(streamDraw, seq)}

	// 0: the requester's account (credited) and the payer's (debited).
	var from, to, reqUser, apprUser int64
	for tries := 0; ; tries++ {
		to, from = d.pick(&r), d.pick(&r)
		reqUser = d.userOf(d.orgOf(to), r.intn(int64(p.UsersPerOrg)))
		apprUser = d.userOf(d.orgOf(from), r.intn(int64(p.UsersPerOrg)))
		if from != to && reqUser != apprUser {
			break
		}
		w.cur.redraws++
		if tries == 1000 {
			return fmt.Errorf("payments: no two accounts of different users in 1000 draws: more accounts or organizations needed")
		}
	}
	amount := p.AmountMin + r.intn(p.AmountMax-p.AmountMin+1)
	reqKind, apprKind := tokenValid, tokenValid
	if r.float() < p.Faults.ExpiredToken {
		if r.next()&1 == 0 {
			reqKind = tokenExpired
		} else {
			apprKind = tokenExpired
		}
	}
	if r.float() < p.Faults.MissingPermission {
		if r.next()&1 == 0 {
			reqKind = tokenApproveOnly
		} else {
			apprKind = tokenRequestOnly
		}
	}
	cvv := d.cvvOf(from)
	if r.float() < p.Faults.WrongCVV {
		cvv = int16(100 + (int64(cvv)-100+1+r.intn(899))%900)
	}

	// RT1: authenticate and authorize the requester.
	w.hash = d.token(reqUser, reqKind)
	t2, authorized, err := w.authorize(ctx, stepRT1, meas, reqUser, d.orgOf(to), store.PermTransferRequestsCreate, time.Now())
	if !authorized {
		return err
	}

	// RT2: the card and the paying account.
	ok, err := w.conn.Card(ctx, from, &w.card)
	t3 := time.Now()
	w.record(stepRT2, meas, t3.Sub(t2), err)
	switch {
	case err != nil:
		return err
	case !ok:
		return w.decline(reasonUnknownCard)
	case w.card.AccountID != from:
		return fmt.Errorf("%w: card %d belongs to account %d", errMismatch, from, w.card.AccountID)
	case w.card.CardFrozen:
		return w.decline(reasonCardFrozen)
	case w.card.CardExpired:
		return w.decline(reasonCardExpired)
	case w.card.CVV != cvv:
		return w.decline(reasonWrongCVV)
	case w.card.AccountFrozen:
		return w.decline(reasonAccountFrozen)
	case w.card.Balance < amount: // advisory: the CHECK decides at commit
		return w.decline(reasonInsufficientFunds)
	}

	// RT3: authenticate and authorize the approver, of the account's organization.
	w.hash = d.token(apprUser, apprKind)
	_, authorized, err = w.authorize(ctx, stepRT3, meas, apprUser, w.card.AccountOrgID, store.PermTransfersCreate, t3)
	if !authorized {
		return err
	}

	// RT4: the transaction, retried on deadlocks and serialization failures.
	w.t = store.PaymentsTransfer{Card: from, From: from, To: to, User: reqUser, Amount: amount, PayerFirst: p.LockOrder == LockPayerFirst}
	for try := 1; ; try++ {
		t5 := time.Now()
		err = w.conn.Transfer(ctx, &w.t)
		t6 := time.Now()
		if err == nil {
			w.record(stepRT4, meas, t6.Sub(t5), nil)
			break
		}
		if again, err := w.failedTry(ctx, try, err, stepRT4, meas, t6.Sub(t5)); !again {
			return err
		}
	}
	if w.t.Insufficient {
		return w.decline(reasonInsufficientAtCommit)
	}
	end := time.Now()
	w.record(stepTransfer, meas, end.Sub(start), nil)
	w.committed++
	w.cur.committed++
	if meas {
		w.perSecond[w.curSec]++
	}
	w.minutes[floorDiv(w.t.CreatedUs, 60_000_000)]++
	for cur := s.maxID.Load(); w.t.ID > cur && !s.maxID.CompareAndSwap(cur, w.t.ID); cur = s.maxID.Load() {
	}
	if f := p.DeleteFraction; f > 0 {
		n := s.commits.Add(1)
		if int64(float64(n)*f) > int64(float64(n-1)*f) {
			w.owed++
		}
	}
	return nil
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

// failedTry decides what follows failed try number try of a step's
// transaction, which took took: a conflict (deadlock, serialization
// failure) with tries left is counted and waited out, and the caller tries
// again; any other failure is recorded and ends the operation (final), as
// does ctx ending during the wait (unrecorded: the run is stopping).
func (w *worker) failedTry(ctx context.Context, try int, err error, step int, meas bool, took time.Duration) (again bool, final error) {
	if try < w.s.p.MaxTries && errclass.Classify(err) == errclass.ClassConflict && ctx.Err() == nil {
		w.retried(err)
		if !w.backoff(ctx, try) {
			return false, ctx.Err()
		}
		return true, nil
	}
	w.record(step, meas, took, err)
	return false, err
}

// backoff sleeps a random time below 2^try ms; false if ctx ended first.
func (w *worker) backoff(ctx context.Context, try int) bool {
	w.timer.Reset(time.Duration(w.rnd.intn(int64(1)<<min(try, 10)*1000)) * time.Microsecond)
	select {
	case <-w.timer.C:
		return true
	case <-ctx.Done():
		w.timer.Stop()
		return false
	}
}

// deleteOne deletes the first surviving transfer at or after a random id
// and journals it; a draw that finds none (deleted meanwhile, or past the
// last) draws again, up to three times.
func (w *worker) deleteOne(ctx context.Context) error {
	maxID := w.s.maxID.Load()
	if maxID < 1 {
		return nil
	}
	meas := w.at(time.Now())
	misses := 0
	for try := 1; ; try++ {
		t1 := time.Now()
		ok, err := w.conn.DeleteTransfer(ctx, 1+w.rnd.intn(maxID), &w.del)
		t2 := time.Now()
		if err != nil {
			if again, err := w.failedTry(ctx, try, err, stepDelete, meas, t2.Sub(t1)); !again {
				return err
			}
			continue
		}
		w.record(stepDelete, meas, t2.Sub(t1), nil)
		if ok {
			w.journal = append(w.journal, w.del)
			w.cur.deletes++
			return nil
		}
		w.cur.deleteMisses++
		if misses++; misses == 3 {
			return nil
		}
	}
}
