package scenario

import (
	"encoding/json"

	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/target"
)

// jsonOf records a target spec with any password in its URL redacted.
func jsonOf(s target.Spec) ([]byte, error) {
	s.URL = store.RedactURL(s.URL)
	return json.Marshal(s)
}
