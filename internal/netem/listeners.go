package netem

import (
	"bufio"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
)

// Listeners lists the IPv4 TCP sockets listening in this process's network
// namespace, as host:port, from /proc/self/net/tcp: what a test reads to
// check that no proxy is left behind.
func Listeners() ([]string, error) {
	f, err := os.Open("/proc/self/net/tcp")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		// sl local_address rem_address st ...; st 0A is LISTEN.
		if len(fields) < 4 || fields[3] != "0A" {
			continue
		}
		host, port, ok := strings.Cut(fields[1], ":")
		b, err := hex.DecodeString(host)
		if !ok || err != nil || len(b) != 4 {
			continue
		}
		p, err := strconv.ParseUint(port, 16, 16)
		if err != nil {
			continue
		}
		// The address is in host byte order (little-endian here).
		ip := net.IPv4(b[3], b[2], b[1], b[0])
		out = append(out, net.JoinHostPort(ip.String(), strconv.FormatUint(p, 10)))
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("/proc/self/net/tcp: %w", err)
	}
	return out, nil
}
