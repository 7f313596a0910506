package run

import (
	"testing"

	"github.com/storebench/storebench/internal/server"
)

// A cell's client threads: the override first, else one per client CPU,
// less the CPUs a managed server running on fewer threads than it shares
// with the client needs; each choice says why.
func TestChooseClientThreads(t *testing.T) {
	for _, c := range []struct {
		name  string
		facts threadFacts
		want  int
		why   string
	}{
		{"flag wins over everything", threadFacts{asked: 2, scenario: 3, clientCPUs: 2, server: server.Redis, serverThreads: 1, sharedCPUs: 2}, 2, "--client-threads 2 (user)"},
		{"scenario over the rule", threadFacts{scenario: 3, clientCPUs: 2, server: server.Redis, serverThreads: 1, sharedCPUs: 2}, 3, "client_threads 3 (scenario)"},
		{"in-process store", threadFacts{clientCPUs: 2}, 2, "2: one per client CPU; the store runs inside storebench"},
		{"external server", threadFacts{clientCPUs: 4, external: true}, 4, "4: one per client CPU; the server is not managed here, its threads are unknown"},
		{"redis sharing 2 CPUs", threadFacts{clientCPUs: 2, server: server.Redis, serverThreads: 1, sharedCPUs: 2}, 1, "1: redis (one-threaded) shares 2 CPUs with the client; 1 CPU is left to it"},
		{"valkey sharing 8 CPUs", threadFacts{clientCPUs: 8, server: server.Valkey, serverThreads: 1, sharedCPUs: 8}, 7, "7: valkey (one-threaded) shares 8 CPUs with the client; 1 CPU is left to it"},
		{"redis io-threads 2 on 8 CPUs", threadFacts{clientCPUs: 8, server: server.Redis, serverThreads: 2, sharedCPUs: 8}, 6, "6: redis (2 threads) shares 8 CPUs with the client; 2 CPUs are left to it"},
		{"redis io-threads 4 on 2 CPUs", threadFacts{clientCPUs: 2, server: server.Redis, serverThreads: 4, sharedCPUs: 2}, 2, "2: one per client CPU; redis (4 threads) shares every one of them"},
		{"redis on other CPUs", threadFacts{clientCPUs: 1, server: server.Redis, serverThreads: 1}, 1, "1: one per client CPU; redis runs on other CPUs"},
		{"redis and the client pinned to one CPU", threadFacts{clientCPUs: 1, server: server.Redis, serverThreads: 1, sharedCPUs: 1}, 1, "1: one per client CPU; redis (one-threaded) shares every one of them"},
		{"client on 2 CPUs, redis pinned to one of them", threadFacts{clientCPUs: 2, server: server.Redis, serverThreads: 1, sharedCPUs: 1}, 1, "1: redis (one-threaded) shares 1 CPU with the client; 1 CPU is left to it"},
		{"memcached -t 1", threadFacts{clientCPUs: 2, server: server.Memcached, serverThreads: 1, sharedCPUs: 2}, 1, "1: memcached (one-threaded) shares 2 CPUs with the client; 1 CPU is left to it"},
		{"memcached -t 4 on 2 CPUs", threadFacts{clientCPUs: 2, server: server.Memcached, serverThreads: 4, sharedCPUs: 2}, 2, "2: one per client CPU; memcached (4 threads) shares every one of them"},
		{"postgres", threadFacts{clientCPUs: 2, server: server.Postgres, sharedCPUs: 2}, 2, "2: one per client CPU; postgres serves each connection on a process of its own"},
		{"mariadb", threadFacts{clientCPUs: 4, server: server.MariaDB, sharedCPUs: 4}, 4, "4: one per client CPU; mariadb serves each connection on a thread of its own"},
		{"no CPU count known", threadFacts{}, 1, "1: one per client CPU; the store runs inside storebench"},
	} {
		t.Run(c.name, func(t *testing.T) {
			n, why := chooseClientThreads(c.facts)
			if n != c.want || why != c.why {
				t.Errorf("got %d %q, want %d %q", n, why, c.want, c.why)
			}
		})
	}
}

// What the server and the client share: nil is every CPU.
func TestSharedCPUs(t *testing.T) {
	for _, c := range []struct {
		client, server []int
		want           int
	}{
		{nil, nil, 4}, {[]int{0}, nil, 1}, {nil, []int{1, 2}, 2}, {[]int{0}, []int{1}, 0}, {[]int{0, 1}, []int{1, 2}, 1},
	} {
		if got := sharedCPUs(c.client, c.server, 4); got != c.want {
			t.Errorf("sharedCPUs(%v, %v, 4) = %d, want %d", c.client, c.server, got, c.want)
		}
	}
}

// The settings a managed server's thread count is read from.
func TestServerThreads(t *testing.T) {
	for _, c := range []struct {
		srv  *server.Server
		want int
	}{
		{&server.Server{Kind: server.Redis, Settings: map[string]string{"io-threads": "1"}}, 1},
		{&server.Server{Kind: server.Valkey, Settings: map[string]string{"io-threads": "4"}}, 4},
		{&server.Server{Kind: server.Redis}, 1},
		{&server.Server{Kind: server.Memcached, Settings: map[string]string{"num_threads": "4"}}, 4},
		{&server.Server{Kind: server.Postgres}, 0},
		{&server.Server{Kind: server.MariaDB}, 0},
	} {
		if got := serverThreads(c.srv); got != c.want {
			t.Errorf("%s %v: %d threads, want %d", c.srv.Kind, c.srv.Settings, got, c.want)
		}
	}
}
