package target

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/storebench/storebench/internal/server"
)

// ParseServerBins reads the values of run's --server-bin flag, each
// "store=path" (postgres=/opt/pg17/bin; redis=/opt/redis/src/redis-server):
// a user's own build to run for every managed target of that store, in
// place of the installed binaries (StartArgs.ServerBins). Each path must
// exist and hold the kind's binaries, which must run and report a version;
// errors are one line. A store named twice is refused: which build ran
// would be unclear.
func (r Registry) ParseServerBins(values []string) (map[server.Kind]string, error) {
	out := map[server.Kind]string{}
	for _, v := range values {
		name, path, ok := strings.Cut(strings.TrimSpace(v), "=")
		if !ok {
			return nil, fmt.Errorf("--server-bin %s: want store=path, e.g. postgres=/opt/pg17/bin", quoteWord(v))
		}
		k, known := r.Lookup(name)
		if !known {
			return nil, fmt.Errorf("--server-bin: %v", r.unknownStore(name))
		}
		if k.Server == "" {
			return nil, fmt.Errorf("--server-bin %s=…: store %s runs inside storebench, it has no server binary", k.Name, k.Name)
		}
		if _, twice := out[k.Server]; twice {
			return nil, fmt.Errorf("--server-bin: %s is given twice", k.Name)
		}
		if _, err := server.BinDirInstallation(k.Server, path); err != nil {
			return nil, err
		}
		// Absolute: a server runs in its data dir.
		abs, err := filepath.Abs(path)
		if err != nil {
			return nil, fmt.Errorf("--server-bin %s=%s: %v", k.Name, path, err)
		}
		out[k.Server] = abs
	}
	return out, nil
}
