package report

import "github.com/storebench/storebench/internal/metrics"

type phase = metrics.Phase
