package memory

import (
	"testing"

	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/store/storetest"
)

func TestBatch(t *testing.T) {
	storetest.RunBatch(t, func(t *testing.T) store.Store { return open(t) })
}
