/*
 * crowd: a host's unrelated processes. It forks N children that only
 * pause(), in a process group of its own, and prints "ready N". When its
 * standard input closes (its owner is done, or died), it counts how many of
 * them had died (none should: nobody else may signal them), prints
 * "dead=K", kills the rest and reaps them.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv) {
	int n = argc > 1 ? atoi(argv[1]) : 0;
	pid_t *pids = calloc(n > 0 ? n : 1, sizeof(pid_t));
	int null = open("/dev/null", O_RDWR);
	if (!pids || null < 0 || setpgid(0, 0) < 0) {
		perror("crowd");
		return 1;
	}
	int made = 0;
	for (; made < n; made++) {
		pid_t p = fork();
		if (p == 0) {
			dup2(null, 0), dup2(null, 1), dup2(null, 2);
			for (;;)
				pause();
		}
		if (p < 0) {
			perror("crowd: fork");
			break;
		}
		pids[made] = p;
	}
	printf("ready %d\n", made);
	fflush(stdout);
	char b;
	while (made == n && read(0, &b, 1) > 0)
		;
	int dead = 0, st;
	while (waitpid(-1, &st, WNOHANG) > 0)
		dead++;
	printf("dead=%d\n", dead);
	fflush(stdout);
	for (int i = 0; i < made; i++)
		kill(pids[i], SIGKILL);
	while (wait(NULL) > 0)
		;
	return made == n ? 0 : 1;
}
