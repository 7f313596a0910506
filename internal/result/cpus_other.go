//go:build !linux

package result

import (
	"runtime"
	"strconv"
)

// allowedCPUs cannot read affinity outside Linux; it reports every CPU.
func allowedCPUs() string { return "0-" + strconv.Itoa(runtime.NumCPU()-1) }
