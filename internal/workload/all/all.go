// Package all lists every workload type this binary runs: adding a
// workload is one line here (and its package, and a suite).
package all

import (
	"github.com/storebench/storebench/internal/workload"
	"github.com/storebench/storebench/internal/workload/cacheaside"
	"github.com/storebench/storebench/internal/workload/capacity"
	"github.com/storebench/storebench/internal/workload/durability"
	"github.com/storebench/storebench/internal/workload/hotkey"
	"github.com/storebench/storebench/internal/workload/kv"
	"github.com/storebench/storebench/internal/workload/mix"
	"github.com/storebench/storebench/internal/workload/payments"
	"github.com/storebench/storebench/internal/workload/replay"
	"github.com/storebench/storebench/internal/workload/sessions"
	"github.com/storebench/storebench/internal/workload/throughput"
	"github.com/storebench/storebench/internal/workload/web"
	"github.com/storebench/storebench/internal/workload/ycsb"
)

// Types are the workload types, in `storebench list` order.
func Types() workload.Registry {
	return workload.Registry{
		kv.Type, throughput.Type, mix.Type, hotkey.Type, web.Type,
		sessions.Type, payments.Type, durability.Type, cacheaside.Type, capacity.Type, ycsb.Type, replay.Type,
	}
}
