// SPDX-License-Identifier: GPL-2.0
/*
 * Example --extra program for tools/boot-test.sh: isolate on the first CPU
 * that allows it, spin for a while in user space, leave isolation, and pass
 * if no signal arrived.  Exit 0 pass, 1 fail, 4 skip.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/prctl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

static volatile sig_atomic_t lost;

static void on_lost(int sig)
{
	lost = sig;
}

int main(void)
{
	unsigned long long i;
	cpu_set_t set;
	int cpu = -1, tries = 0;
	FILE *f = fopen("/sys/devices/system/cpu/task_isolation", "r");

	if (!f || fscanf(f, "%d", &cpu) != 1) {
		printf("no CPU can run isolated tasks\n");
		return 4;
	}
	fclose(f);
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		return 1;
	signal(SIGUSR1, on_lost);
	mlockall(MCL_CURRENT);
	while (prctl(PR_TASK_ISOLATION, PR_TASK_ISOLATION_ENABLE |
		     PR_TASK_ISOLATION_SET_SIG(SIGUSR1), 0, 0, 0)) {
		if (errno != EAGAIN || ++tries > 1000)
			return 1;
		usleep(1000);
	}
	for (i = 0; i < 300000000ULL && !lost; i++)
		__asm__ __volatile__("" ::: "memory");
	prctl(PR_TASK_ISOLATION, 0, 0, 0, 0);
	printf("cpu %d: %llu iterations isolated, %d EAGAIN, lost=%d\n",
	       cpu, i, tries, (int)lost);
	return lost ? 1 : 0;
}
