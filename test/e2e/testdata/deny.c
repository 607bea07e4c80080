/*
 * deny ERRNO NR[,NR...] COMMAND [ARG...]: runs COMMAND under a seccomp
 * filter in which the system calls numbered NR fail with ERRNO (1 for
 * EPERM, 38 for ENOSYS), as under a container profile that lacks them.
 */
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#if defined(__x86_64__)
#define ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define ARCH AUDIT_ARCH_AARCH64
#else
#error "deny: add this architecture's AUDIT_ARCH"
#endif

#define MAXNR 16

int main(int argc, char **argv) {
	if (argc < 4) {
		fprintf(stderr, "usage: deny ERRNO NR[,NR...] COMMAND [ARG...]\n");
		return 2;
	}
	unsigned int err = (unsigned int)atoi(argv[1]), nr[MAXNR];
	int n = 0;
	for (char *s = strtok(argv[2], ","); s && n < MAXNR; s = strtok(NULL, ","))
		nr[n++] = (unsigned int)atoi(s);
	struct sock_filter f[4 + MAXNR + 2];
	int k = 0;
	f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch));
	f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ARCH, 1, 0);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
	for (int i = 0; i < n; i++) /* a match jumps over the rest and the ALLOW */
		f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, nr[i], n - i, 0);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (err & SECCOMP_RET_DATA));
	struct sock_fprog prog = {.len = (unsigned short)k, .filter = f};
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog)) {
		perror("deny: seccomp");
		return 2;
	}
	execvp(argv[3], argv + 3);
	perror("deny: exec");
	return 127;
}
