package gen

import (
	"maps"
	"strings"
	"testing"
)

// CoreWorkload's *_DEFAULT constants (d9faaac8), written out.
func TestDefaultsAreYCSBs(t *testing.T) {
	p := Defaults()
	want := Properties{
		Workload: CoreWorkloadClass, Table: "usertable", RecordCount: 1000, OperationCount: 1000,
		FieldCount: 10, FieldNamePrefix: "field", FieldLength: 100, MinFieldLength: 1,
		FieldLengthDistribution: LengthConstant, FieldLengthHistogram: "hist.txt",
		ReadAllFields: true, ReadAllFieldsByName: false, WriteAllFields: false, DataIntegrity: false,
		ReadProportion: 0.95, UpdateProportion: 0.05,
		RequestDistribution: RequestUniform, MinScanLength: 1, MaxScanLength: 1000,
		ScanLengthDistribution: LengthUniform, OrderedInserts: false, ZeroPadding: 1,
		HotspotDataFraction: 0.2, HotspotOpnFraction: 0.8, ExponentialPercentile: 95, ExponentialFrac: 0.8571428571,
		InsertionRetryLimit: 0, InsertionRetryInterval: 3,
	}
	if p != want {
		t.Errorf("Defaults() = %+v\nwant %+v", p, want)
	}
	if err := p.Validate(); err != nil {
		t.Errorf("the defaults do not validate: %v", err)
	}
}

// The table of core workloads, beyond the proportions TestOperationMix
// draws: the distributions and E's scans.
func TestStandardWorkloads(t *testing.T) {
	dist := map[string]RequestDist{"a": RequestZipfian, "b": RequestZipfian, "c": RequestZipfian, "d": RequestLatest, "e": RequestZipfian, "f": RequestZipfian}
	for _, name := range StandardNames() {
		p, err := Standard("workload" + strings.ToUpper(name))
		if err != nil {
			t.Fatal(err)
		}
		for op := range Op(NumOps) {
			if p.Proportion(op) != coreMix[name][op] {
				t.Errorf("workload %s: %s proportion %v, YCSB's %v", name, op, p.Proportion(op), coreMix[name][op])
			}
		}
		if p.RequestDistribution != dist[name] || p.RecordCount != 1000 || p.OperationCount != 1000 || !p.ReadAllFields || p.WriteAllFields || p.FieldCount != 10 || p.FieldLength != 100 || p.OrderedInserts {
			t.Errorf("workload %s: %+v", name, p)
		}
		wantMax := int64(1000)
		if name == "e" {
			wantMax = 100
		}
		if p.MaxScanLength != wantMax || p.MinScanLength != 1 || p.ScanLengthDistribution != LengthUniform {
			t.Errorf("workload %s: scan length %s %d to %d, want uniform 1 to %d", name, p.ScanLengthDistribution, p.MinScanLength, p.MaxScanLength, wantMax)
		}
	}
	if _, err := Standard("g"); err == nil {
		t.Error("Standard(g) = nil error")
	}
}

func TestParseJavaPropertiesSyntax(t *testing.T) {
	text := "# a comment\n" +
		"! another\n" +
		"   \n" +
		"recordcount = 5000\r\n" +
		"operationcount:200\n" +
		"table  my\\ table\n" +
		"fieldnameprefix=f\\u00e9\\tx\n" +
		"readproportion=0.\\\n" +
		"    5\n" +
		"updateproportion=0.5   \n" +
		"insertorder=ordered\n" +
		"requestdistribution=latest\n" +
		"requestdistribution=zipfian\n" + // a later line wins, as in Java
		"readallfields=FALSE\n" +
		"workload=com.yahoo.ycsb.workloads.CoreWorkload\n" +
		"zeropadding=12"
	p, err := Parse(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	want := Defaults()
	want.RecordCount, want.OperationCount, want.Table, want.FieldNamePrefix = 5000, 200, "my table", "fé\tx"
	want.ReadProportion, want.UpdateProportion, want.OrderedInserts = 0.5, 0.5, true
	want.RequestDistribution, want.ReadAllFields, want.ZeroPadding = RequestZipfian, false, 12
	if p != want {
		t.Errorf("Parse = %+v\nwant    %+v", p, want)
	}
}

// Each bad file is refused in one line that names the key (and the line,
// where it comes from one).
func TestParseRefuses(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"threadcount=4", `line 1: unknown property "threadcount"`},
		{"# c\nreadproportoin=0.5", `line 2: unknown property "readproportoin"`},
		{"recordcount=lots", `line 1: recordcount="lots": not a 64-bit integer`},
		{"recordcount=0", "recordcount 0: YCSB reads it as 2147483647"},
		{"recordcount=2000000000", "recordcount 2000000000: at most 1000000000"},
		{"recordcount=-5", "recordcount must be positive"},
		{"operationcount=3000000000", `operationcount="3000000000": not a 32-bit integer`},
		{"fieldcount=0", "fieldcount 0: want 1 to 10000"},
		{"fieldlength=0", "fieldlength must be positive"},
		{"fieldcount=1000\nfieldlength=1000000", "fieldcount 1000 × fieldlength 1000000"},
		{"fieldlengthdistribution=histogram", "histogram is not supported"},
		{"fieldlengthdistribution=normal", `fieldlengthdistribution "normal": unknown`},
		{"fieldlengthdistribution=uniform\nminfieldlength=200", "minfieldlength 200: want 1 to 100"},
		{"dataintegrity=true\nfieldlengthdistribution=uniform", "dataintegrity needs fieldlengthdistribution constant"},
		{"readallfields=yes", `readallfields="yes": want true or false`},
		{"readproportion=-0.5", "readproportion -0.5: a proportion must not be negative"},
		{"readproportion=NaN", "not a finite number"},
		{"readproportion=0\nupdateproportion=0", "sum to 0"},
		{"requestdistribution=hotspot", "hotspot is not supported by this port"},
		{"requestdistribution=zipf", `requestdistribution "zipf": unknown`},
		{"maxscanlength=0", "maxscanlength 0: want 1 to 1000000"},
		{"minscanlength=2000", "minscanlength 2000: want 1 to 1000"},
		{"scanlengthdistribution=constant", `scanlengthdistribution "constant": unknown`},
		{"insertorder=random", `insertorder="random": want hashed or ordered`},
		{"zeropadding=100", "zeropadding 100: want 0 to 64"},
		{"insertstart=1000", "insertstart 1000: want 0 to 999"},
		{"insertcount=0", `insertcount="0": must be positive`},
		{"insertstart=500\ninsertcount=600", "insertstart 500 + insertcount 600 is above recordcount 1000"},
		{"recordcount=1000000000\noperationcount=2000000000\ninsertproportion=0.5\nrequestdistribution=zipfian", "above 2147483647"},
		{"workload=site.ycsb.workloads.TimeSeriesWorkload", "only site.ycsb.workloads.CoreWorkload is ported"},
		{"hotspotdatafraction=2", "hotspotdatafraction 2: want 0 to 1"},
		{"core_workload_insertion_retry_interval=100000", "core_workload_insertion_retry_interval 100000: want 0 to 3600"},
		{"fieldnameprefix=\\uZZZZ", `malformed \uxxxx escape`},
		{"recordcount=1\xff", "not UTF-8"},
		{strings.Repeat("#", MaxPropertiesSize+1), "larger than"},
	} {
		_, err := Parse(strings.NewReader(c.text))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Parse(%.60q) = %v, want an error with %q", c.text, err, c.want)
			continue
		}
		if strings.Contains(err.Error(), "\n") {
			t.Errorf("Parse(%.60q): error of more than one line: %q", c.text, err)
		}
	}
}

func TestKeysListed(t *testing.T) {
	keys := strings.Join(Keys(), " ")
	for _, k := range []string{"recordcount", "operationcount", "fieldcount", "fieldlength", "readallfields", "writeallfields",
		"readproportion", "updateproportion", "insertproportion", "scanproportion", "readmodifywriteproportion",
		"requestdistribution", "maxscanlength", "scanlengthdistribution", "insertorder", "insertstart", "insertcount",
		"zeropadding", "fieldlengthdistribution", "workload", "minscanlength", "minfieldlength", "table",
		"fieldnameprefix", "dataintegrity", "readallfieldsbyname", "fieldlengthhistogram", "hotspotdatafraction",
		"hotspotopnfraction", "exponential.percentile", "exponential.frac", "core_workload_insertion_retry_limit",
		"core_workload_insertion_retry_interval", "core_workload_insertion_keep_going_on_error"} {
		if !strings.Contains(" "+keys+" ", " "+k+" ") {
			t.Errorf("Keys() lacks %s", k)
		}
	}
}

// TestPairs: a file's keys and values, the last line of a key winning,
// each refused as Parse refuses it, without the checks across keys.
func TestPairs(t *testing.T) {
	got, err := Pairs(strings.NewReader("# mine\nreadproportion=0.2\nupdateproportion: 0.8\nreadproportion = 0.3\nrecordcount=5\n"))
	want := map[string]string{"readproportion": "0.3", "updateproportion": "0.8", "recordcount": "5"}
	if err != nil || !maps.Equal(got, want) {
		t.Fatalf("Pairs = %v, %v; want %v", got, err, want)
	}
	// The sum of the proportions is Validate's, not a line's.
	if _, err := Pairs(strings.NewReader("readproportion=0\nupdateproportion=0")); err != nil {
		t.Errorf("Pairs checked across keys: %v", err)
	}
	for text, want := range map[string]string{
		"readproportion=1\nthreadcount=4": `line 2: unknown property "threadcount"`,
		"readallfields=yes":               `line 1: readallfields="yes": want true or false`,
		"recordcount=1\xff":               "not UTF-8",
		strings.Repeat("#", 2<<20):        "larger than",
	} {
		if _, err := Pairs(strings.NewReader(text)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Pairs(%.40q) = %v, want an error with %q", text, err, want)
		}
	}
}
