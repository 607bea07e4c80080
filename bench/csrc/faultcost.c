/* faultcost: the time of a first touch of an anonymous page on this
 * machine (a fresh heap page of a Go program costs the same), the median
 * of 9 runs of 2,000 pages each.
 *
 *   gcc -O2 -o faultcost bench/csrc/faultcost.c && ./faultcost
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

enum { PAGES = 2000, RUNS = 9, PAGE = 4096 };

static double once(void)
{
	struct timespec a, b;
	char *p = mmap(0, (size_t)PAGES * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long i = 0; i < PAGES; i++)
		p[i * PAGE] = 1;
	clock_gettime(CLOCK_MONOTONIC, &b);
	munmap(p, (size_t)PAGES * PAGE);
	return ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / 1e3 / PAGES;
}

static int cmp(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return (a > b) - (a < b);
}

int main(void)
{
	double t[RUNS];
	for (int i = 0; i < RUNS; i++)
		t[i] = once();
	qsort(t, RUNS, sizeof t[0], cmp);
	printf("first touch of an anonymous page: %.2f µs (median of %d runs of %d pages)\n", t[RUNS / 2], RUNS, PAGES);
	return 0;
}
