/* orphans N FIFO [CGROUP_PROCS [DONE_FIFO]]: leaves N orphans to the init,
 * all of them blocked on one FIFO, so that the benchmark releases them at
 * the same instant by closing its end. With DONE_FIFO each orphan writes
 * one byte there just before it exits, so the benchmark can tell when all
 * of them are zombies (CGROUP_PROCS may be "-" for none).
 *
 * The process itself stays alive (most inits exit with their main child):
 * it forks a middle process that moves itself into CGROUP_PROCS (so the
 * benchmark can count what is not yet reaped in that cgroup's pids.current),
 * opens FIFO for reading, forks N children that each block in read() and
 * exit on end-of-file, and exits, which re-parents the N to PID 1. It then
 * says "ready N" and sleeps until a signal kills it.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: orphans N FIFO [CGROUP_PROCS]\n");
		return 2;
	}
	long n = strtol(argv[1], NULL, 10);
	pid_t mid = fork();
	if (mid < 0)
		return 1;
	if (mid == 0) {
		if (argc > 3 && strcmp(argv[3], "-") != 0) {
			int cg = open(argv[3], O_WRONLY);
			if (cg < 0 || write(cg, "0", 1) != 1)
				_exit(4);
			close(cg);
		}
		int fd = open(argv[2], O_RDONLY);
		if (fd < 0)
			_exit(5);
		int done = -1;
		if (argc > 4 && (done = open(argv[4], O_WRONLY)) < 0)
			_exit(7);
		for (long i = 0; i < n; i++) {
			pid_t p = fork();
			if (p < 0)
				_exit(6);
			if (p == 0) {
				char c;
				/* Blocks until the benchmark closes the last writer. */
				while (read(fd, &c, 1) > 0)
					;
				if (done >= 0 && write(done, "x", 1) != 1)
					_exit(8);
				_exit(0);
			}
		}
		_exit(0);
	}
	int st;
	if (waitpid(mid, &st, 0) != mid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		fprintf(stderr, "orphans: the forking process failed (status %d)\n", st);
		return 1;
	}
	printf("ready %ld\n", n);
	fflush(stdout);
	for (;;)
		pause();
}
