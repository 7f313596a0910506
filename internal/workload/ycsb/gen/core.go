package gen

import (
	"strconv"

	"github.com/storebench/storebench/internal/workload/keydist"
)

// Core is CoreWorkload.init's generators, set up once from validated
// Properties and shared by the workers: the read-only setup (zeta sums,
// the operation chooser) and the two counters CoreWorkload shares between
// its threads, the load's key sequence and the run's insert sequence
// (atomic). Client memory does not grow with the key count.
type Core struct {
	props Properties
	ops   OpChooser
	// keysequence: the load phase's key numbers, from insertstart.
	loadKeys *Counter
	// transactioninsertkeysequence: the run phase's inserts, from
	// recordcount; its Last bounds every key chooser.
	inserts *AckCounter

	keyUniform   UniformLong
	keyScrambled ScrambledZipfian
	keyLatest    SkewedLatest
	fieldChooser UniformLong
	fieldLength  lengthGen
	scanLength   lengthGen
}

// lengthGen is a field-length or scan-length generator: CoreWorkload's
// ConstantIntegerGenerator, UniformLongGenerator or ZipfianGenerator.
type lengthGen struct {
	dist     LengthDist
	constant int64
	uniform  UniformLong
	zipfian  Zipfian
}

func newLengthGen(dist LengthDist, min, max int64) lengthGen {
	g := lengthGen{dist: dist, constant: max}
	switch dist {
	case LengthUniform:
		g.uniform = NewUniformLong(min, max)
	case LengthZipfian:
		g.zipfian = NewZipfian(min, max, ZipfianConstant)
	}
	return g
}

func (g *lengthGen) next(r *keydist.Rand) int64 {
	switch g.dist {
	case LengthUniform:
		return g.uniform.Next(r)
	case LengthZipfian:
		return g.zipfian.Next(r)
	}
	return g.constant
}

// NewCore validates p and sets up its generators. A zipfian field or scan
// length sums zeta over its range, and requestdistribution latest over
// recordcount items: about 20 ms per million.
func NewCore(p Properties) (*Core, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	c := &Core{
		props:        p,
		ops:          NewOpChooser(&p),
		loadKeys:     NewCounter(p.InsertStart),
		inserts:      NewAckCounter(p.RecordCount),
		fieldChooser: NewUniformLong(0, p.FieldCount-1),
		fieldLength:  newLengthGen(p.FieldLengthDistribution, p.MinFieldLength, p.FieldLength),
		scanLength:   newLengthGen(p.ScanLengthDistribution, p.MinScanLength, p.MaxScanLength),
	}
	first, count := p.InsertStart, p.Inserts()
	switch p.RequestDistribution {
	case RequestUniform:
		c.keyUniform = NewUniformLong(first, first+count-1)
	case RequestZipfian:
		// The range is widened by the inserts expected, so keys do not
		// change popularity as inserts arrive; draws beyond the last
		// acknowledged insert are drawn again (NextKeynum).
		c.keyScrambled = NewScrambledZipfian(first, first+count+p.ExpectedNewKeys())
	case RequestLatest:
		c.keyLatest = NewSkewedLatest(c.inserts)
	}
	return c, nil
}

// Properties returns the properties c was set up from.
func (c *Core) Properties() Properties { return c.props }

// LastInsert is the insert sequence's last acknowledged key number: the
// newest key a read may ask for.
func (c *Core) LastInsert() int64 { return c.inserts.Last() }

// AppendFieldName appends field i's name: fieldnameprefix + i.
func (c *Core) AppendFieldName(dst []byte, i int64) []byte {
	return strconv.AppendInt(append(dst, c.props.FieldNamePrefix...), i, 10)
}

// AppendKey appends key keynum's name, as buildKeyName with c's
// zeropadding and insertorder.
func (c *Core) AppendKey(dst []byte, keynum int64) []byte {
	return AppendKeyName(dst, keynum, c.props.ZeroPadding, c.props.OrderedInserts)
}

// Worker is one goroutine's draws: its own Rand and its own copies of the
// generators that keep state (a zipfian's zeta grows with the inserts).
// It is a value owned by one goroutine; no draw locks or allocates.
type Worker struct {
	c            *Core
	rng          keydist.Rand
	keyScrambled ScrambledZipfian
	keyLatest    SkewedLatest
	fieldLength  lengthGen
	scanLength   lengthGen
}

// Worker returns the generators of one worker: stream must differ between
// the workers of a run, and between its phases, so their draws are
// independent (keydist.NewRand).
func (c *Core) Worker(seed, stream uint64) Worker {
	return Worker{
		c:            c,
		rng:          keydist.NewRand(seed, stream),
		keyScrambled: c.keyScrambled,
		keyLatest:    c.keyLatest,
		fieldLength:  c.fieldLength,
		scanLength:   c.scanLength,
	}
}

// Rand is the worker's random source, for what else it draws (values).
func (w *Worker) Rand() *keydist.Rand { return &w.rng }

// NextOp is doTransaction's operationchooser.nextString().
func (w *Worker) NextOp() Op { return w.c.ops.Next(&w.rng) }

// NextKeynum is CoreWorkload.nextKeynum: a key number from the request
// distribution, passed through Long.intValue() and drawn again while it is
// above the last acknowledged insert.
func (w *Worker) NextKeynum() int64 {
	for {
		var k int64
		switch w.c.props.RequestDistribution {
		case RequestZipfian:
			k = w.keyScrambled.Next(&w.rng)
		case RequestLatest:
			k = w.keyLatest.Next(&w.rng)
		default:
			k = w.c.keyUniform.Next(&w.rng)
		}
		if k = intValue(k); k <= w.c.inserts.Last() {
			return k
		}
	}
}

// NextLoadKeynum is doInsert's keysequence.nextValue().intValue(): the
// load phase's next key number, shared by all workers; ok is false once
// the load's insertcount records have all been handed out.
func (w *Worker) NextLoadKeynum() (keynum int64, ok bool) {
	k := w.c.loadKeys.Next()
	return intValue(k), k < w.c.props.InsertStart+w.c.props.Inserts()
}

// NextInsertKeynum is doTransactionInsert's key number: the next of the
// insert sequence. Acknowledge it once the insert is done, failed or not
// (CoreWorkload acknowledges in a finally).
func (w *Worker) NextInsertKeynum() int64 { return w.c.inserts.Next() }

// Acknowledge marks an insert's key number done (AckCounter.Acknowledge).
func (w *Worker) Acknowledge(keynum int64) error { return w.c.inserts.Acknowledge(keynum) }

// NextField is fieldchooser.nextValue(): the field an update, or a read
// without readallfields, touches, in [0, fieldcount).
func (w *Worker) NextField() int64 { return w.c.fieldChooser.Next(&w.rng) }

// NextFieldLength is fieldlengthgenerator.nextValue(): a field value's
// length in bytes.
func (w *Worker) NextFieldLength() int64 { return w.fieldLength.next(&w.rng) }

// NextScanLength is doTransactionScan's scanlength.nextValue().intValue().
func (w *Worker) NextScanLength() int64 { return intValue(w.scanLength.next(&w.rng)) }
