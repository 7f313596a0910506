package payments

import (
	"encoding/binary"
	"time"

	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/workload"
)

// The data set is a function of the parameters and the seed: every engine
// loads the same rows, and the workers derive a card's CVV, an account's
// organization or a user's tokens from the same functions instead of
// reading them into memory.

// Streams of derived values, so that no two properties share draws.
const (
	streamOrg uint64 = iota + 1
	streamFrozenAccount
	streamFrozenCard
	streamExpiredCard
	streamCVV
	streamToken
	streamDraw
)

// derive is a pseudo-random 64-bit value for (stream, i).
func (d *dataSet) derive(stream uint64, i int64) uint64 {
	return workload.Mix(workload.Mix(d.seed^stream*0x9e3779b97f4a7c15) + uint64(i))
}

// unit maps a 64-bit value to [0, 1).
func unit(x uint64) float64 { return float64(x>>11) / (1 << 53) }

// Token kinds: each user has one of each.
const (
	tokenValid       = iota // both permissions, not expired
	tokenExpired            // both permissions, expired yesterday
	tokenRequestOnly        // transfer_requests:create only
	tokenApproveOnly        // transfers:create only
	tokenKinds
)

type dataSet struct {
	seed                uint64
	p                   Params
	users               int64
	validUntil, expired time.Time // tokens
	cardValid, cardPast time.Time // card expiry dates
}

func newDataSet(p Params, now time.Time) *dataSet {
	now = now.UTC()
	today := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	return &dataSet{
		seed: p.Seed, p: p, users: int64(p.Orgs) * int64(p.UsersPerOrg),
		validUntil: now.AddDate(1, 0, 0).Truncate(time.Second), expired: now.AddDate(0, 0, -1).Truncate(time.Second),
		cardValid: today.AddDate(1, 0, 0), cardPast: today.AddDate(0, 0, -30),
	}
}

// orgOf is account id's organization, uniform over 1..Orgs.
func (d *dataSet) orgOf(id int64) int64 {
	return 1 + int64(d.derive(streamOrg, id)%uint64(d.p.Orgs))
}

func (d *dataSet) cvvOf(id int64) int16 { return int16(100 + d.derive(streamCVV, id)%900) }

func (d *dataSet) account(id int64) store.PaymentsAccount {
	return store.PaymentsAccount{ID: id, OrgID: d.orgOf(id), Balance: d.p.InitialBalance,
		Frozen: unit(d.derive(streamFrozenAccount, id)) < d.p.Faults.FrozenAccount}
}

func (d *dataSet) card(id int64) store.PaymentsCard {
	exp := d.cardValid
	if unit(d.derive(streamExpiredCard, id)) < d.p.Faults.ExpiredCard {
		exp = d.cardPast
	}
	return store.PaymentsCard{ID: id, AccountID: id, Expires: exp, CVV: d.cvvOf(id),
		Frozen: unit(d.derive(streamFrozenCard, id)) < d.p.Faults.FrozenCard}
}

// userOf is the user of organization org with index k in [0, UsersPerOrg).
func (d *dataSet) userOf(org int64, k int64) int64 {
	return (org-1)*int64(d.p.UsersPerOrg) + k + 1
}

// token is the hash of user's token of a kind.
func (d *dataSet) token(user int64, kind int) [16]byte {
	var h [16]byte
	i := user*tokenKinds + int64(kind)
	binary.BigEndian.PutUint64(h[:8], d.derive(streamToken, 2*i))
	binary.BigEndian.PutUint64(h[8:], d.derive(streamToken, 2*i+1))
	h[6] = h[6]&0x0f | 0x40 // a version 4 UUID, as it is one on PostgreSQL
	h[8] = h[8]&0x3f | 0x80
	return h
}

// data is the store's view of the data set.
func (d *dataSet) data() *store.PaymentsData {
	out := &store.PaymentsData{Orgs: int64(d.p.Orgs), Accounts: d.p.Accounts, Account: d.account, Card: d.card}
	for u := int64(1); u <= d.users; u++ {
		out.Users = append(out.Users, store.PaymentsUser{ID: u, OrgID: (u-1)/int64(d.p.UsersPerOrg) + 1})
		for kind, perms := range [tokenKinds][]int64{{1, 2}, {1, 2}, {1}, {2}} {
			exp := d.validUntil
			if kind == tokenExpired {
				exp = d.expired
			}
			for _, perm := range perms {
				out.Tokens = append(out.Tokens, store.PaymentsToken{Hash: d.token(u, kind), Permission: perm, UserID: u, ExpiresAt: exp})
			}
		}
	}
	return out
}

// rng is splitmix64: a transfer's draws derive from the seed and its sequence
// number, so the same attempt draws the same accounts on every engine.
type rng struct{ s uint64 }

func (r *rng) next() uint64 {
	r.s += 0x9e3779b97f4a7c15
	return workload.Mix(r.s)
}

func (r *rng) intn(n int64) int64 { return int64(r.next() % uint64(n)) }

func (r *rng) float() float64 { return unit(r.next()) }

// pick draws an account id by the selection rule.
func (d *dataSet) pick(r *rng) int64 {
	n := d.p.Accounts
	if d.p.Selection == SelectSkewed {
		hot, hotter := max(n/5, 1), max(n/25, 1)
		switch {
		case r.intn(100) >= 80: // 20% to the cold 80%
			if n > hot {
				return 1 + hot + r.intn(n-hot)
			}
		case r.intn(100) < 80: // 80% of the hot 20% to the first 4%
			return 1 + r.intn(hotter)
		default: // the rest of the hot 20%
			if hot > hotter {
				return 1 + hotter + r.intn(hot-hotter)
			}
			return 1 + r.intn(hot)
		}
	}
	return 1 + r.intn(n)
}
