//go:build !linux

package workload

// openFileLimit is unknown here: only MaxClients bounds the clients.
func openFileLimit() int { return 0 }

// physicalMemory is unknown here: plans are not checked against it.
func physicalMemory() int64 { return 0 }
