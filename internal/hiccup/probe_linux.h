#include <pthread.h>
#include <stdint.h>
#include <time.h>

// 65 s of wake-ups at 1 ms: the reader drains far more often than that.
#define HICCUP_RING 65536

typedef struct {
	int cpu;
	int64_t interval_ns;
	int stop;
	int state; // 0 starting, 1 running, -errno failed to start
	int err;   // clock_nanosleep's error when it stopped on one
	int joined;
	pthread_t thread;
	clockid_t cpuclock;
	int64_t cpu_at_exit;
	uint64_t head, tail, dropped;
	int64_t late[HICCUP_RING];
	int64_t work[HICCUP_RING]; // the CPU-speed loop's ns after each wake-up
} hiccup_probe;

hiccup_probe *hiccup_start(int cpu, int64_t interval_ns);
int hiccup_state(hiccup_probe *p);
int hiccup_err(hiccup_probe *p);
uint64_t hiccup_dropped(hiccup_probe *p);
int hiccup_drain(hiccup_probe *p, int64_t *late, int64_t *work, int n);
int64_t hiccup_cpu_ns(hiccup_probe *p);
void hiccup_stop(hiccup_probe *p);
void hiccup_free(hiccup_probe *p);
