/* deathtime PID: says "ready" once it watches PID, then prints the
 * CLOCK_REALTIME instant (nanoseconds since the epoch) at which it saw PID
 * exit, and exits 0.
 *
 * It waits on a pidfd at real-time priority (SCHED_FIFO), so that its own
 * wake-up is not delayed by whatever load the benchmark puts on the machine
 * (scrapers of lfinit's /metrics on two CPUs): what it prints is when the
 * process died, not when a busy observer got around to noticing. Without
 * the privilege for SCHED_FIFO it still works, at normal priority, and
 * says so on stderr.
 */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: deathtime PID\n");
		return 2;
	}
	int fd = syscall(SYS_pidfd_open, atoi(argv[1]), 0);
	if (fd < 0) {
		perror("deathtime: pidfd_open");
		return 1;
	}
	struct sched_param sp = {.sched_priority = 50};
	if (sched_setscheduler(0, SCHED_FIFO, &sp) != 0)
		perror("deathtime: SCHED_FIFO (measuring at normal priority)");
	printf("ready\n");
	fflush(stdout);
	struct pollfd p = {.fd = fd, .events = POLLIN};
	int n;
	while ((n = poll(&p, 1, -1)) != 1)
		if (n < 0 && errno != EINTR) {
			perror("deathtime: poll");
			return 1;
		}
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	printf("%lld\n", (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec);
	return 0;
}
