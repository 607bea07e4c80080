/* pause: a child that says "ready" and sleeps until a signal kills it.
 * With -i it ignores SIGTERM (the child a hard deadline must SIGKILL).
 */
#include <signal.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "-i") == 0)
		signal(SIGTERM, SIG_IGN);
	if (write(1, "ready\n", 6) != 6)
		return 3;
	for (;;)
		pause();
}
