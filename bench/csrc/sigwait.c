/* sigwait: the child for the signal-forwarding benchmark. It blocks
 * SIGUSR1 and SIGTERM, says "ready" on stdout and then takes each signal
 * with sigwaitinfo; its first action on waking is clock_gettime
 * (CLOCK_MONOTONIC), so no handler or runtime start-up is in the figure.
 * Each signal is reported as "SIGNO NANOSECONDS"; SIGTERM ends it (exit 0).
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void say(const char *s, size_t n)
{
	while (n > 0) {
		ssize_t w = write(1, s, n);
		if (w <= 0)
			_exit(3);
		s += w;
		n -= (size_t)w;
	}
}

int main(void)
{
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGTERM);
	if (sigprocmask(SIG_BLOCK, &set, NULL) != 0)
		return 2;
	say("ready\n", 6);
	for (;;) {
		int sig = sigwaitinfo(&set, NULL);
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		if (sig < 0)
			continue; /* EINTR */
		char buf[64];
		int n = snprintf(buf, sizeof buf, "%d %lld\n", sig,
				 (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec);
		say(buf, (size_t)n);
		if (sig == SIGTERM)
			return 0;
	}
}
