package gen

import (
	"fmt"
	"strings"
)

// The core workloads' property lines, as workloads/workloada … workloadf
// set them (their comments left out; all six begin with header). Parse
// reads them over Defaults, as YCSB reads the files over CoreWorkload's
// defaults.
const (
	header = `recordcount=1000
operationcount=1000
workload=site.ycsb.workloads.CoreWorkload
readallfields=true
`
	workloadA = header + `readproportion=0.5
updateproportion=0.5
scanproportion=0
insertproportion=0
requestdistribution=zipfian
`
	workloadB = header + `readproportion=0.95
updateproportion=0.05
scanproportion=0
insertproportion=0
requestdistribution=zipfian
`
	workloadC = header + `readproportion=1
updateproportion=0
scanproportion=0
insertproportion=0
requestdistribution=zipfian
`
	workloadD = header + `readproportion=0.95
updateproportion=0
scanproportion=0
insertproportion=0.05
requestdistribution=latest
`
	workloadE = header + `readproportion=0
updateproportion=0
scanproportion=0.95
insertproportion=0.05
requestdistribution=zipfian
maxscanlength=100
scanlengthdistribution=uniform
`
	workloadF = header + `readproportion=0.5
updateproportion=0
scanproportion=0
insertproportion=0
readmodifywriteproportion=0.5
requestdistribution=zipfian
`
)

// StandardNames lists the core workloads: a to f.
func StandardNames() []string { return []string{"a", "b", "c", "d", "e", "f"} }

// Standard returns core workload name ("a" … "f", or "workloada" …) as
// YCSB's file sets it over CoreWorkload's defaults.
func Standard(name string) (Properties, error) {
	var file string
	switch strings.TrimPrefix(strings.ToLower(name), "workload") {
	case "a":
		file = workloadA
	case "b":
		file = workloadB
	case "c":
		file = workloadC
	case "d":
		file = workloadD
	case "e":
		file = workloadE
	case "f":
		file = workloadF
	default:
		return Properties{}, fmt.Errorf("unknown YCSB core workload %q (valid: a, b, c, d, e, f)", name)
	}
	return Parse(strings.NewReader(file))
}
