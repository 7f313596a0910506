// The probe thread lives outside the Go runtime: a Go thread blocked in
// clock_nanosleep hands its P to another thread and takes one back on every
// wake-up, which cost twice the probe's own CPU on a 2-vCPU VM (55 ms per
// second per CPU against 22). A plain pthread costs what cyclictest costs
// and its CPU time can be read exactly (pthread_getcpuclockid).
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "probe_linux.h"

static int64_t mono_ns(void) {
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000000LL + t.tv_nsec;
}

// speed_loop times a fixed chain of HICCUP_SPEED_STEPS dependent
// multiply-adds (~1,000 cycles, 0.3-0.5 us): the same work on every
// wake-up, so its median over a phase is how fast this CPU ran then. A
// virtual CPU sharing its core with a busy neighbour, or throttled, runs it
// slower; a wake-up's lateness cannot show that.
#define HICCUP_SPEED_STEPS 256
static int64_t speed_loop(void) {
	int64_t t0 = mono_ns();
	uint64_t x = (uint64_t)t0;
	for (int i = 0; i < HICCUP_SPEED_STEPS; i++) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	}
	__asm__ volatile("" : : "r"(x)); // the chain's result is used: not optimised away
	return mono_ns() - t0;
}

static void *probe_run(void *arg) {
	hiccup_probe *p = arg;
	// Signals go to the Go runtime's threads, never to a probe.
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(p->cpu, &set);
	int e = pthread_setaffinity_np(pthread_self(), sizeof set, &set);
	if (e == 0) {
		e = pthread_getcpuclockid(pthread_self(), &p->cpuclock);
	}
	if (e != 0) {
		__atomic_store_n(&p->state, -e, __ATOMIC_RELEASE);
		return NULL;
	}
	__atomic_store_n(&p->state, 1, __ATOMIC_RELEASE);
	// Absolute deadlines one interval apart, as cyclictest sleeps: a late
	// wake-up does not shift the next one; after a stall longer than an
	// interval it starts again from now instead of catching up in a burst.
	int64_t next = mono_ns();
	while (!__atomic_load_n(&p->stop, __ATOMIC_ACQUIRE)) {
		next += p->interval_ns;
		struct timespec ts = {next / 1000000000LL, next % 1000000000LL};
		int r;
		while ((r = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL)) == EINTR) {
		}
		if (r != 0) {
			__atomic_store_n(&p->err, r, __ATOMIC_RELEASE);
			return NULL;
		}
		int64_t now = mono_ns();
		int64_t late = now > next ? now - next : 0;
		int64_t work = speed_loop();
		uint64_t head = p->head, tail = __atomic_load_n(&p->tail, __ATOMIC_ACQUIRE);
		if (head - tail < HICCUP_RING) {
			p->late[head % HICCUP_RING] = late;
			p->work[head % HICCUP_RING] = work;
			__atomic_store_n(&p->head, head + 1, __ATOMIC_RELEASE);
		} else {
			__atomic_add_fetch(&p->dropped, 1, __ATOMIC_RELAXED);
		}
		if (late > p->interval_ns) {
			next = now;
		}
	}
	return NULL;
}

hiccup_probe *hiccup_start(int cpu, int64_t interval_ns) {
	hiccup_probe *p = calloc(1, sizeof *p);
	if (p == NULL) {
		return NULL;
	}
	p->cpu = cpu;
	p->interval_ns = interval_ns;
	int e = pthread_create(&p->thread, NULL, probe_run, p);
	if (e != 0) {
		p->state = -e;
		p->joined = 1;
	}
	return p;
}

int hiccup_state(hiccup_probe *p) { return __atomic_load_n(&p->state, __ATOMIC_ACQUIRE); }

int hiccup_err(hiccup_probe *p) { return __atomic_load_n(&p->err, __ATOMIC_ACQUIRE); }

uint64_t hiccup_dropped(hiccup_probe *p) { return __atomic_load_n(&p->dropped, __ATOMIC_RELAXED); }

int hiccup_drain(hiccup_probe *p, int64_t *late, int64_t *work, int n) {
	uint64_t tail = p->tail, head = __atomic_load_n(&p->head, __ATOMIC_ACQUIRE);
	int k = 0;
	while (tail != head && k < n) {
		late[k] = p->late[tail % HICCUP_RING];
		work[k++] = p->work[tail % HICCUP_RING];
		tail++;
	}
	__atomic_store_n(&p->tail, tail, __ATOMIC_RELEASE);
	return k;
}

int64_t hiccup_cpu_ns(hiccup_probe *p) {
	if (hiccup_state(p) != 1) {
		return 0;
	}
	struct timespec t;
	if (clock_gettime(p->cpuclock, &t) != 0) {
		return p->cpu_at_exit;
	}
	return (int64_t)t.tv_sec * 1000000000LL + t.tv_nsec;
}

void hiccup_stop(hiccup_probe *p) {
	if (p->joined) {
		return;
	}
	// Read the thread's CPU before it exits: its clock dies with it.
	struct timespec t;
	if (hiccup_state(p) == 1 && clock_gettime(p->cpuclock, &t) == 0) {
		p->cpu_at_exit = (int64_t)t.tv_sec * 1000000000LL + t.tv_nsec;
	}
	__atomic_store_n(&p->stop, 1, __ATOMIC_RELEASE);
	pthread_join(p->thread, NULL);
	p->joined = 1;
}

void hiccup_free(hiccup_probe *p) { free(p); }
