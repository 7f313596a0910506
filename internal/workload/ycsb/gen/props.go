package gen

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/storebench/storebench/internal/workload"
)

// RequestDist is CoreWorkload's requestdistribution.
type RequestDist string

// The request distributions this port draws. CoreWorkload also knows
// sequential, hotspot and exponential, which no core workload uses; they
// are refused by name rather than drawn some other way.
const (
	RequestUniform RequestDist = "uniform"
	RequestZipfian RequestDist = "zipfian"
	RequestLatest  RequestDist = "latest"
)

// LengthDist is a fieldlengthdistribution or scanlengthdistribution.
type LengthDist string

// The length distributions (constant is for field lengths only).
const (
	LengthConstant LengthDist = "constant"
	LengthUniform  LengthDist = "uniform"
	LengthZipfian  LengthDist = "zipfian"
)

// CoreWorkloadClass is the workload property's one accepted value; the
// class's pre-0.14 name, com.yahoo.ycsb.workloads.CoreWorkload, which old
// property files carry, is read as the same.
const CoreWorkloadClass = "site.ycsb.workloads.CoreWorkload"

const oldCoreWorkloadClass = "com.yahoo.ycsb.workloads.CoreWorkload"

// Bounds on the properties, beyond what Java's types bound. Each says why
// in its error.
const (
	// MaxOperationCount: CoreWorkload reads operationcount as a Java int.
	MaxOperationCount = math.MaxInt32
	// MaxFieldCount: every insert builds all of a record's fields.
	MaxFieldCount = 10000
	// MaxScanLength: a scan's records are held in client memory.
	MaxScanLength = 1_000_000
	// MaxZeroPadding: a key number has at most 20 characters; more
	// padding only lengthens every key.
	MaxZeroPadding = 64
	// MaxPropertiesSize bounds a property file: YCSB's are a few hundred
	// bytes.
	MaxPropertiesSize = 1 << 20
)

// Properties are CoreWorkload's properties, typed. Defaults gives YCSB's
// defaults; Parse reads a property file over them.
type Properties struct {
	Workload       string // workload: the class; CoreWorkloadClass
	Table          string // table
	RecordCount    int64  // recordcount
	OperationCount int64  // operationcount

	FieldCount              int64      // fieldcount
	FieldNamePrefix         string     // fieldnameprefix
	FieldLength             int64      // fieldlength (the maximum, when not constant)
	MinFieldLength          int64      // minfieldlength
	FieldLengthDistribution LengthDist // fieldlengthdistribution
	FieldLengthHistogram    string     // fieldlengthhistogram (read, never used: histogram is refused)

	ReadAllFields       bool // readallfields
	ReadAllFieldsByName bool // readallfieldsbyname
	WriteAllFields      bool // writeallfields
	DataIntegrity       bool // dataintegrity

	ReadProportion            float64 // readproportion
	UpdateProportion          float64 // updateproportion
	InsertProportion          float64 // insertproportion
	ScanProportion            float64 // scanproportion
	ReadModifyWriteProportion float64 // readmodifywriteproportion

	RequestDistribution    RequestDist // requestdistribution
	MinScanLength          int64       // minscanlength
	MaxScanLength          int64       // maxscanlength
	ScanLengthDistribution LengthDist  // scanlengthdistribution

	// OrderedInserts is insertorder=ordered (keys are "user" + the key
	// number); false is insertorder=hashed (its FNV-64 hash).
	OrderedInserts bool
	ZeroPadding    int   // zeropadding
	InsertStart    int64 // insertstart
	// InsertCount is insertcount; 0 is unset: RecordCount - InsertStart.
	InsertCount int64

	// Read and range-checked; their distributions are refused.
	HotspotDataFraction   float64 // hotspotdatafraction
	HotspotOpnFraction    float64 // hotspotopnfraction
	ExponentialPercentile float64 // exponential.percentile
	ExponentialFrac       float64 // exponential.frac

	InsertionRetryLimit       int64 // core_workload_insertion_retry_limit
	InsertionRetryInterval    int64 // core_workload_insertion_retry_interval, seconds
	InsertionKeepGoingOnError bool  // core_workload_insertion_keep_going_on_error
}

// Defaults are CoreWorkload's *_DEFAULT values, except recordcount and
// operationcount: YCSB's client reads a missing recordcount as 0 and
// CoreWorkload 0 as 2^31-1 records, so both take the 1000 that every core
// workload file sets.
func Defaults() Properties {
	return Properties{
		Workload:                  CoreWorkloadClass,
		Table:                     "usertable",
		RecordCount:               1000,
		OperationCount:            1000,
		FieldCount:                10,
		FieldNamePrefix:           "field",
		FieldLength:               100,
		MinFieldLength:            1,
		FieldLengthDistribution:   LengthConstant,
		FieldLengthHistogram:      "hist.txt",
		ReadAllFields:             true,
		ReadProportion:            0.95,
		UpdateProportion:          0.05,
		RequestDistribution:       RequestUniform,
		MinScanLength:             1,
		MaxScanLength:             1000,
		ScanLengthDistribution:    LengthUniform,
		ZeroPadding:               1,
		HotspotDataFraction:       0.2,
		HotspotOpnFraction:        0.8,
		ExponentialPercentile:     95,
		ExponentialFrac:           0.8571428571,
		InsertionRetryInterval:    3,
		InsertionKeepGoingOnError: false,
	}
}

// Proportion is the proportion property of op.
func (p *Properties) Proportion(op Op) float64 {
	switch op {
	case Read:
		return p.ReadProportion
	case Update:
		return p.UpdateProportion
	case Insert:
		return p.InsertProportion
	case Scan:
		return p.ScanProportion
	case ReadModifyWrite:
		return p.ReadModifyWriteProportion
	}
	return 0
}

// Inserts is the count of records the load phase inserts: insertcount, or
// recordcount - insertstart when unset.
func (p *Properties) Inserts() int64 {
	if p.InsertCount > 0 {
		return p.InsertCount
	}
	return p.RecordCount - p.InsertStart
}

// ExpectedNewKeys is CoreWorkload's expectednewkeys, (int)(operationcount
// × insertproportion × 2.0): the inserts a zipfian's range is widened by
// ("2 is fudge factor").
func (p *Properties) ExpectedNewKeys() int64 {
	return int64(javaInt(float64(int32(p.OperationCount)) * p.InsertProportion * 2.0))
}

// property is one key a file may set.
type property struct {
	key string
	set func(string) error
}

func (p *Properties) properties() []property {
	str := func(dst *string) func(string) error {
		return func(v string) error { *dst = v; return nil }
	}
	long := func(dst *int64, bits int) func(string) error {
		return func(v string) error {
			n, err := strconv.ParseInt(v, 10, bits)
			if err != nil {
				return fmt.Errorf("not a %d-bit integer", bits)
			}
			*dst = n
			return nil
		}
	}
	double := func(dst *float64) func(string) error {
		return func(v string) error {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
				return fmt.Errorf("not a finite number")
			}
			*dst = f
			return nil
		}
	}
	boolean := func(dst *bool) func(string) error {
		// Java's Boolean.parseBoolean reads anything but "true" as false;
		// a typo is refused here instead.
		return func(v string) error {
			switch strings.ToLower(v) {
			case "true":
				*dst = true
			case "false":
				*dst = false
			default:
				return fmt.Errorf("want true or false")
			}
			return nil
		}
	}
	var padding int64
	return []property{
		{"workload", func(v string) error {
			if v != CoreWorkloadClass && v != oldCoreWorkloadClass {
				return fmt.Errorf("only %s is ported", CoreWorkloadClass)
			}
			p.Workload = CoreWorkloadClass
			return nil
		}},
		{"table", str(&p.Table)},
		{"recordcount", long(&p.RecordCount, 64)},
		{"operationcount", long(&p.OperationCount, 32)},
		{"fieldcount", long(&p.FieldCount, 64)},
		{"fieldnameprefix", str(&p.FieldNamePrefix)},
		{"fieldlength", long(&p.FieldLength, 32)},
		{"minfieldlength", long(&p.MinFieldLength, 32)},
		{"fieldlengthdistribution", func(v string) error { p.FieldLengthDistribution = LengthDist(v); return nil }},
		{"fieldlengthhistogram", str(&p.FieldLengthHistogram)},
		{"readallfields", boolean(&p.ReadAllFields)},
		{"readallfieldsbyname", boolean(&p.ReadAllFieldsByName)},
		{"writeallfields", boolean(&p.WriteAllFields)},
		{"dataintegrity", boolean(&p.DataIntegrity)},
		{"readproportion", double(&p.ReadProportion)},
		{"updateproportion", double(&p.UpdateProportion)},
		{"insertproportion", double(&p.InsertProportion)},
		{"scanproportion", double(&p.ScanProportion)},
		{"readmodifywriteproportion", double(&p.ReadModifyWriteProportion)},
		{"requestdistribution", func(v string) error { p.RequestDistribution = RequestDist(v); return nil }},
		{"minscanlength", long(&p.MinScanLength, 32)},
		{"maxscanlength", long(&p.MaxScanLength, 32)},
		{"scanlengthdistribution", func(v string) error { p.ScanLengthDistribution = LengthDist(v); return nil }},
		{"insertorder", func(v string) error {
			// CoreWorkload reads anything but "hashed" as ordered; a typo
			// is refused here instead.
			switch v {
			case "hashed":
				p.OrderedInserts = false
			case "ordered":
				p.OrderedInserts = true
			default:
				return fmt.Errorf("want hashed or ordered")
			}
			return nil
		}},
		{"zeropadding", func(v string) error {
			err := long(&padding, 32)(v)
			p.ZeroPadding = int(padding)
			return err
		}},
		{"insertstart", long(&p.InsertStart, 64)},
		{"insertcount", func(v string) error {
			if err := long(&p.InsertCount, 64)(v); err != nil {
				return err
			}
			if p.InsertCount <= 0 {
				return fmt.Errorf("must be positive")
			}
			return nil
		}},
		{"hotspotdatafraction", double(&p.HotspotDataFraction)},
		{"hotspotopnfraction", double(&p.HotspotOpnFraction)},
		{"exponential.percentile", double(&p.ExponentialPercentile)},
		{"exponential.frac", double(&p.ExponentialFrac)},
		{"core_workload_insertion_retry_limit", long(&p.InsertionRetryLimit, 32)},
		{"core_workload_insertion_retry_interval", long(&p.InsertionRetryInterval, 32)},
		{"core_workload_insertion_keep_going_on_error", boolean(&p.InsertionKeepGoingOnError)},
	}
}

// Keys lists the property keys Parse knows, in CoreWorkload's order.
func Keys() []string {
	var p Properties
	props := p.properties()
	keys := make([]string, len(props))
	for i, prop := range props {
		keys[i] = prop.key
	}
	return keys
}

// Parse reads a YCSB property file over Defaults and validates the
// result. It reads Java's .properties syntax: '#' and '!' comments, key and
// value split by '=', ':' or blanks, lines continued by a trailing '\',
// backslash escapes (\t, \n, \uXXXX, …); a later line overrides an earlier
// one, as in Java. Unlike Java it trims a value's trailing blanks (Java
// would read "true " as false) and refuses an unknown key, naming it, as a
// typo would otherwise fall back to a default unseen.
func Parse(r io.Reader) (Properties, error) {
	p := Defaults()
	err := readProperties(r, func(line int, key, value string) error {
		if err := p.Set(key, value); err != nil {
			return fmt.Errorf("line %d: %v", line, err)
		}
		return nil
	})
	if err != nil {
		return p, err
	}
	return p, p.Validate()
}

// Pairs reads a property file's keys and values, each checked as Parse
// checks it (a later line overrides an earlier one), without validating
// them together: the pairs a run lays over a core workload's file, as
// YCSB's -P lays a file over those before it.
func Pairs(r io.Reader) (map[string]string, error) {
	scratch := Defaults()
	pairs := map[string]string{}
	err := readProperties(r, func(line int, key, value string) error {
		if err := scratch.Set(key, value); err != nil {
			return fmt.Errorf("line %d: %v", line, err)
		}
		pairs[key] = value
		return nil
	})
	return pairs, err
}

// readProperties calls fn with each key and value of a property file of
// at most MaxPropertiesSize bytes of UTF-8 text.
func readProperties(r io.Reader, fn func(line int, key, value string) error) error {
	data, err := io.ReadAll(io.LimitReader(r, MaxPropertiesSize+1))
	if err != nil {
		return err
	}
	if len(data) > MaxPropertiesSize {
		return fmt.Errorf("property file larger than %d bytes: YCSB's are a few hundred", MaxPropertiesSize)
	}
	if !utf8.Valid(data) {
		return fmt.Errorf("property file is not UTF-8 text")
	}
	return eachProperty(data, fn)
}

// Set sets one property as a file's line key=value would (a scenario's
// properties, -p key=value); an unknown key is refused, naming the known
// ones. It does not validate: call Validate once all are set.
func (p *Properties) Set(key, value string) error {
	for _, prop := range p.properties() {
		if prop.key == key {
			if err := prop.set(value); err != nil {
				return fmt.Errorf("%s=%q: %v", key, value, err)
			}
			return nil
		}
	}
	return fmt.Errorf("unknown property %q (known: %s)", key, strings.Join(Keys(), ", "))
}

// eachProperty calls fn with each key and value of a .properties text and
// the line its logical line starts on.
func eachProperty(data []byte, fn func(line int, key, value string) error) error {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, MaxPropertiesSize+1)
	var logical strings.Builder
	lineNo, start := 0, 0
	continued := false
	for sc.Scan() {
		lineNo++
		text := strings.TrimRight(sc.Text(), "\r")
		if continued {
			text = strings.TrimLeft(text, " \t\f")
		} else {
			text = strings.TrimLeft(text, " \t\f")
			if text == "" || text[0] == '#' || text[0] == '!' {
				continue
			}
			start = lineNo
			logical.Reset()
		}
		// An odd count of trailing backslashes continues the line.
		trailing := len(text) - len(strings.TrimRight(text, `\`))
		continued = trailing%2 == 1
		if continued {
			text = text[:len(text)-1]
		}
		logical.WriteString(text)
		if continued {
			continue
		}
		key, value, err := splitProperty(logical.String())
		if err != nil {
			return fmt.Errorf("line %d: %v", start, err)
		}
		if err := fn(start, key, value); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	if continued {
		key, value, err := splitProperty(logical.String())
		if err != nil {
			return fmt.Errorf("line %d: %v", start, err)
		}
		return fn(start, key, value)
	}
	return nil
}

// splitProperty splits a logical line at the first unescaped '=', ':' or
// blank, as java.util.Properties does, and unescapes both halves.
func splitProperty(line string) (string, string, error) {
	end := len(line)
	for i := 0; i < len(line); i++ {
		if line[i] == '\\' {
			i++
			continue
		}
		if strings.IndexByte("=: \t\f", line[i]) >= 0 {
			end = i
			break
		}
	}
	rest := strings.TrimLeft(line[end:], " \t\f")
	if rest != "" && (rest[0] == '=' || rest[0] == ':') {
		rest = strings.TrimLeft(rest[1:], " \t\f")
	}
	key, err := unescape(line[:end])
	if err != nil {
		return "", "", err
	}
	value, err := unescape(strings.TrimRight(rest, " \t\f"))
	return key, value, err
}

// unescape resolves .properties backslash escapes.
func unescape(s string) (string, error) {
	if !strings.Contains(s, `\`) {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 == len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch s[i] {
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 'f':
			b.WriteByte('\f')
		case 'u':
			if i+5 > len(s) {
				return "", fmt.Errorf(`malformed \uxxxx escape in %q`, s)
			}
			r, err := strconv.ParseUint(s[i+1:i+5], 16, 16)
			if err != nil {
				return "", fmt.Errorf(`malformed \uxxxx escape in %q`, s)
			}
			b.WriteRune(rune(r))
			i += 4
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String(), nil
}

// Validate checks the properties against CoreWorkload's constraints and
// this port's bounds, with a one-line error for the first one broken.
func (p *Properties) Validate() error {
	checks := []func() error{
		func() error {
			if p.Workload != CoreWorkloadClass {
				return fmt.Errorf("workload %q: only %s is ported", p.Workload, CoreWorkloadClass)
			}
			return nil
		},
		func() error {
			if p.RecordCount == 0 {
				return fmt.Errorf("recordcount 0: YCSB reads it as 2147483647 records; give the count")
			}
			return workload.CheckKeys("recordcount", p.RecordCount)
		},
		func() error {
			return inRange("operationcount", p.OperationCount, 0, MaxOperationCount, "CoreWorkload reads it as a Java int")
		},
		func() error {
			return inRange("insertstart", p.InsertStart, 0, p.RecordCount-1, "the load starts inside the recordcount records")
		},
		func() error {
			if p.InsertStart+p.Inserts() > p.RecordCount {
				return fmt.Errorf("insertstart %d + insertcount %d is above recordcount %d: CoreWorkload refuses that combination", p.InsertStart, p.Inserts(), p.RecordCount)
			}
			return nil
		},
		func() error {
			return inRange("fieldcount", p.FieldCount, 1, MaxFieldCount, "every insert builds all of a record's fields")
		},
		func() error { return workload.CheckValueSize("fieldlength", int(p.FieldLength)) },
		func() error {
			if size := p.FieldCount * p.FieldLength; size > workload.MaxValueSize {
				return fmt.Errorf("fieldcount %d × fieldlength %d = %d bytes a record: at most %d (512 MiB): Redis's largest value by default, and the client builds each record in memory", p.FieldCount, p.FieldLength, size, workload.MaxValueSize)
			}
			return nil
		},
		func() error {
			switch p.FieldLengthDistribution {
			case LengthConstant:
				return nil
			case LengthUniform, LengthZipfian:
				return inRange("minfieldlength", p.MinFieldLength, 1, p.FieldLength, "the shortest field is at most fieldlength")
			case "histogram":
				return fmt.Errorf("fieldlengthdistribution histogram is not supported by this port (supported: constant, uniform, zipfian)")
			}
			return fmt.Errorf("fieldlengthdistribution %q: unknown (valid: constant, uniform, zipfian)", p.FieldLengthDistribution)
		},
		func() error {
			if p.DataIntegrity && p.FieldLengthDistribution != LengthConstant {
				return fmt.Errorf("dataintegrity needs fieldlengthdistribution constant (as CoreWorkload requires), got %s", p.FieldLengthDistribution)
			}
			return nil
		},
		func() error {
			var sum float64
			for op := range Op(NumOps) {
				if w := p.Proportion(op); w < 0 {
					return fmt.Errorf("%s %v: a proportion must not be negative", proportionKey(op), w)
				}
				sum += p.Proportion(op)
			}
			if !(sum > 0) {
				return fmt.Errorf("the proportions (readproportion, updateproportion, insertproportion, scanproportion, readmodifywriteproportion) sum to 0: no operation to run")
			}
			return nil
		},
		func() error {
			switch p.RequestDistribution {
			case RequestUniform, RequestZipfian, RequestLatest:
				return nil
			case "sequential", "hotspot", "exponential":
				return fmt.Errorf("requestdistribution %s is not supported by this port (supported: uniform, zipfian, latest)", p.RequestDistribution)
			}
			return fmt.Errorf("requestdistribution %q: unknown (valid: uniform, zipfian, latest)", p.RequestDistribution)
		},
		func() error {
			return inRange("maxscanlength", p.MaxScanLength, 1, MaxScanLength, "a scan's records are held in client memory; YCSB's default is 1000")
		},
		func() error {
			return inRange("minscanlength", p.MinScanLength, 1, p.MaxScanLength, "the shortest scan is at most maxscanlength")
		},
		func() error {
			switch p.ScanLengthDistribution {
			case LengthUniform, LengthZipfian:
				return nil
			}
			return fmt.Errorf("scanlengthdistribution %q: unknown (valid: uniform, zipfian)", p.ScanLengthDistribution)
		},
		func() error {
			return inRange("zeropadding", int64(p.ZeroPadding), 0, MaxZeroPadding, "a key number has at most 20 characters; more only lengthens every key")
		},
		func() error {
			if p.RequestDistribution != RequestZipfian {
				return nil
			}
			// The zipfian draws up to insertstart + insertcount +
			// expectednewkeys, each passed through Long.intValue().
			if top := p.InsertStart + p.Inserts() + p.ExpectedNewKeys(); top > math.MaxInt32 {
				return fmt.Errorf("insertstart + insertcount + operationcount × insertproportion × 2 = %d: above %d, where CoreWorkload's key numbers (Java ints) wrap", top, math.MaxInt32)
			}
			return nil
		},
		func() error { return fraction("hotspotdatafraction", p.HotspotDataFraction) },
		func() error { return fraction("hotspotopnfraction", p.HotspotOpnFraction) },
		func() error {
			if !(p.ExponentialPercentile > 0 && p.ExponentialPercentile < 100) {
				return fmt.Errorf("exponential.percentile %v: want above 0 and below 100", p.ExponentialPercentile)
			}
			return nil
		},
		func() error {
			if !(p.ExponentialFrac > 0 && p.ExponentialFrac <= 1) {
				return fmt.Errorf("exponential.frac %v: want above 0, at most 1", p.ExponentialFrac)
			}
			return nil
		},
		func() error {
			return inRange("core_workload_insertion_retry_limit", p.InsertionRetryLimit, 0, math.MaxInt32, "CoreWorkload reads it as a Java int")
		},
		func() error {
			return inRange("core_workload_insertion_retry_interval", p.InsertionRetryInterval, 0, 3600, "seconds between retries of an insert; more is a typo")
		},
	}
	for _, check := range checks {
		if err := check(); err != nil {
			return err
		}
	}
	return nil
}

func proportionKey(op Op) string {
	return [NumOps]string{"readproportion", "updateproportion", "insertproportion", "scanproportion", "readmodifywriteproportion"}[op]
}

func inRange(key string, n, lo, hi int64, why string) error {
	if n < lo || n > hi {
		return fmt.Errorf("%s %d: want %d to %d (%s)", key, n, lo, hi, why)
	}
	return nil
}

func fraction(key string, f float64) error {
	if !(f >= 0 && f <= 1) {
		return fmt.Errorf("%s %v: want 0 to 1", key, f)
	}
	return nil
}
