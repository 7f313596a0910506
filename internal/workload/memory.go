package workload

import (
	"fmt"
	"strings"

	"github.com/storebench/storebench/internal/load"
)

// Sizes a memory estimate is made of.
const (
	// KeyBytes is the longest key AppendKey spells ("0." and 20 digits,
	// "key:" and 10 or more), rounded up.
	KeyBytes = 32
	// ConnBytes is what a client library keeps per connection: the Redis
	// client's buffers are 64 KiB each way; the others keep less.
	ConnBytes = 128 << 10
	// entryOverhead is what the memory store spends per key besides the key
	// and value: its map entry and slice header.
	entryOverhead = 64
)

// Estimate is the memory one cell needs in storebench's own process at its
// peak, by part, for a plan to be checked before any work (CheckMemory).
type Estimate struct {
	Clients   int   // workers, one connection each
	PerClient int64 // each one's latency histograms, connection buffers and values in flight
	Shared    int64 // what the workers share: pre-population buffers, a workload's model of the store
	// Data is the data set as a store that keeps it in this process (the
	// memory store) holds it; the caller counts it only for such a store.
	Data int64
}

// ClientBytes is a worker's memory: the engine's recorders (kinds as in
// load.Config.Kinds), its connection and buffers, the workload's buffers.
func ClientBytes(kinds int, buffers int64) int64 {
	return load.WorkerBytes(kinds) + ConnBytes + buffers
}

// EntryBytes is what one key-value pair of a data set takes in memory.
func EntryBytes(valueSize int) int64 {
	return KeyBytes + int64(valueSize) + entryOverhead
}

// Bytes is the estimate's total, with or without the data set. It is a
// float: the parts of an absurd plan may overflow an int64.
func (e Estimate) Bytes(withData bool) float64 {
	n := float64(e.Clients)*float64(e.PerClient) + float64(e.Shared)
	if withData {
		n += float64(e.Data)
	}
	return n
}

// describe lists the parts that matter, e.g. "50 clients × 1.2 MiB, 4 MiB
// shared, the data set 1.1 GiB".
func (e Estimate) describe(withData bool) string {
	clients := "clients"
	if e.Clients == 1 {
		clients = "client"
	}
	parts := []string{fmt.Sprintf("%d %s × %s", e.Clients, clients, FormatBytes(float64(e.PerClient)))}
	if e.Shared > 0 {
		parts = append(parts, FormatBytes(float64(e.Shared))+" shared")
	}
	if withData && e.Data > 0 {
		parts = append(parts, "the data set kept in this process "+FormatBytes(float64(e.Data)))
	}
	return strings.Join(parts, ", ")
}

// MemoryBudget is how much memory a cell may need in storebench's process:
// half of the memory this machine (or its container) has, since the stores
// measured and the OS share the rest; 0 when the memory is unknown (no
// bound). why says where the figure comes from.
func MemoryBudget() (budget int64, why string) {
	total := physicalMemory()
	if total <= 0 {
		return 0, ""
	}
	return total / 2, "half of this machine's " + FormatBytes(float64(total)) + ", leaving the rest to the stores and the OS"
}

// CheckMemory refuses an estimate above budget (0: no bound), saying both.
func CheckMemory(e Estimate, withData bool, budget int64, why string) error {
	if budget <= 0 || e.Bytes(withData) <= float64(budget) {
		return nil
	}
	return fmt.Errorf("needs about %s of client memory (%s), more than the %s storebench allows itself (%s): lower clients, pipeline, batch, value_size or keys",
		FormatBytes(e.Bytes(withData)), e.describe(withData), FormatBytes(float64(budget)), why)
}

// FormatBytes writes a size in binary units: "512 B", "1.5 MiB", "3.2 TiB".
func FormatBytes(n float64) string {
	const units = "KMGTPE"
	if n < 1024 {
		return fmt.Sprintf("%.0f B", n)
	}
	i := -1
	for n >= 1024 && i < len(units)-1 {
		n /= 1024
		i++
	}
	return fmt.Sprintf("%.3g %ciB", n, units[i])
}
