// SPDX-License-Identifier: GPL-2.0
/*
 * ti_bench: the guest side of tools/bench.sh (make bench).
 *
 *   ti_bench quality HK ISO SECONDS [ROW...]  part 1: isolation quality
 *   ti_bench cost HK ISO N REPS               part 2: instruction counts
 *   ti_bench scale CPULIST TRIALS              part 3: time to enter
 *   ti_bench rows                             list the part 1 rows
 *   ti_bench soak HK CPU,... SECONDS          make soak: holders under load
 *
 * Every result is one line on stdout:
 *
 *   BENCH part=<part> row=<row> key=value ...
 *
 * with values percent-encoded (no blanks, '=' or ',').  A row that the
 * kernel's configuration cannot run reads status=na reason=config; on a
 * kernel without task isolation the task just spins as a plain nohz_full
 * task (isolated=0) and part 2/3 rows that need isolation read
 * status=na reason=kernel.
 *
 * Part 1: a thread pinned to the isolated CPU ISO enters task isolation
 * (SIGUSR1 caught) and spins in user space for SECONDS while a disturber
 * runs on the housekeeping CPU HK: in a sibling thread for the rows that
 * touch the spinner's own address space, else in another process.  The
 * interrupts ISO took are the deltas of its /proc/interrupts and
 * /proc/softirqs columns, read on HK.  The causes come from the
 * task_isolation_lost trace event, enabled once in a trace instance of
 * our own before any window.  Nothing forks, maps or frees memory of the
 * spinner's process while it spins, except the own-mm disturbers.
 *
 * Parts 2 and 3 run under QEMU -icount shift=0,sleep=off: one guest
 * nanosecond is one instruction, so CLOCK_MONOTONIC deltas (vDSO, no
 * syscall) count instructions of the whole guest.  With -icount QEMU runs
 * every vCPU in one thread, round robin: a vCPU keeps the thread until its
 * instruction budget (up to the next timer deadline) runs out or it
 * executes a spin-wait hint (x86 PAUSE, arm64 YIELD).  The busy targets of
 * the IPI rows therefore spin with that hint (spin_hint()); a plain empty
 * loop would keep the thread for the whole budget after every IPI, count
 * millions of spinner instructions per call and stall the run.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/membarrier.h>
#include <linux/netlink.h>
#include <linux/perf_event.h>
#include <linux/rtnetlink.h>
#include <linux/if_link.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef PR_TASK_ISOLATION
#define PR_TASK_ISOLATION		48
#define PR_TASK_ISOLATION_ENABLE	0x1
#define PR_TASK_ISOLATION_SET_SIG(sig)	(((sig) & 0x7f) << 8)
#endif
#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE			25
#endif

#define EAGAIN_TRIES	5000
#define TRACEFS		"/sys/kernel/tracing/"
#define INSTANCE	TRACEFS "instances/ti_bench/"
#define LOST_EVENT	"events/task_isolation/task_isolation_lost/enable"
#define MAX_IRQ_ROWS	128
#define PACE_US		250000

/* ---- small helpers ---------------------------------------------------- */

static int pin_tid(pid_t tid, int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(tid, sizeof(set), &set);
}

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* Write @val to @path; 0 or -errno. */
static int write_file(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_TRUNC), ret = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, val, strlen(val)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

/* Read up to @len - 1 bytes of @path into @buf; length or -errno. */
static int read_file(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY);
	ssize_t n, got = 0;

	if (fd < 0)
		return -errno;
	while ((size_t)got < len - 1 &&
	       (n = read(fd, buf + got, len - 1 - got)) > 0)
		got += n;
	close(fd);
	buf[got] = 0;
	return got;
}

static int exists(const char *path)
{
	return access(path, F_OK) == 0;
}

/* Append " key=value" to @line, value percent-encoded. */
static void kv(char *line, size_t len, const char *key, const char *val)
{
	size_t n = strlen(line);
	const char *p;

	n += snprintf(line + n, len - n, " %s=", key);
	for (p = val; *p && n + 4 < len; p++) {
		unsigned char c = *p;

		if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
		    (c >= 'A' && c <= 'Z') || strchr("._:/+-()#<>[]", c))
			line[n++] = c;
		else
			n += snprintf(line + n, len - n, "%%%02X", c);
	}
	line[n] = 0;
}

static void kvi(char *line, size_t len, const char *key, long long val)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%lld", val);
	kv(line, len, key, buf);
}

static void emit(const char *line)
{
	printf("BENCH%s\n", line);
	fflush(stdout);
}

static int have_task_isolation(void)
{
	return prctl(PR_TASK_ISOLATION, 0, 0, 0, 0) == 0 || errno != EINVAL;
}

static const char *machine(void)
{
	static struct utsname u;

	if (!u.machine[0])
		uname(&u);
	return u.machine;
}

/* ---- per-CPU interrupt counters --------------------------------------- */

struct irqsnap {
	int n;
	char name[MAX_IRQ_ROWS][48];
	unsigned long long v[MAX_IRQ_ROWS];
};

static char filebuf[1 << 17];

/*
 * Column @cpu of /proc/interrupts or /proc/softirqs.  Rows with fewer
 * per-CPU columns (ERR, MIS) are skipped; numbered IRQ rows are named
 * "<irq>-<last word of the description>".  No allocation: this runs next
 * to a spinning isolated thread of the same process.
 */
static int snap_file(const char *path, int cpu, struct irqsnap *s, const char *prefix)
{
	char *line, *next, *p, *end, *tok, *last;
	int ncols = 0, col = -1, i;
	char want[16];

	if (read_file(path, filebuf, sizeof(filebuf)) <= 0)
		return -1;
	snprintf(want, sizeof(want), "CPU%d", cpu);
	line = filebuf;
	next = strchr(line, '\n');
	if (!next)
		return -1;
	*next++ = 0;
	for (tok = strtok_r(line, " \t", &p); tok; tok = strtok_r(NULL, " \t", &p)) {
		if (!strcmp(tok, want))
			col = ncols;
		ncols++;
	}
	if (col < 0)
		return -1;
	for (line = next; line && *line; line = next) {
		unsigned long long val = 0;
		char name[24];
		int got = 0;

		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		while (*line == ' ')
			line++;
		p = strchr(line, ':');
		if (!p || p - line >= (long)sizeof(name))
			continue;
		memcpy(name, line, p - line);
		name[p - line] = 0;
		p++;
		for (i = 0; i < ncols; i++) {
			unsigned long long x = strtoull(p, &end, 10);

			if (end == p)
				break;
			if (i == col)
				val = x;
			p = end;
			got++;
		}
		if (got < ncols || s->n >= MAX_IRQ_ROWS)
			continue;
		last = NULL;
		for (tok = p; *tok; tok++)
			if (*tok != ' ' && (tok == p || tok[-1] == ' '))
				last = tok;
		if (name[0] >= '0' && name[0] <= '9' && last)
			snprintf(s->name[s->n], sizeof(s->name[0]), "%s%s-%.16s",
				 prefix, name, last);
		else
			snprintf(s->name[s->n], sizeof(s->name[0]), "%s%s", prefix, name);
		s->v[s->n++] = val;
	}
	return 0;
}

static int snapshot(int cpu, struct irqsnap *irq, struct irqsnap *soft)
{
	irq->n = 0;
	soft->n = 0;
	if (snap_file("/proc/interrupts", cpu, irq, ""))
		return -1;
	return snap_file("/proc/softirqs", cpu, soft, "");
}

/* Sum of deltas; the non-zero ones as "NAME=n NAME=n" in @types. */
static unsigned long long delta(const struct irqsnap *a, const struct irqsnap *b,
				char *types, size_t len)
{
	unsigned long long sum = 0, d;
	int i, j;

	for (i = 0; i < b->n; i++) {
		for (j = 0; j < a->n && strcmp(a->name[j], b->name[i]); j++)
			;
		d = b->v[i] - (j < a->n ? a->v[j] : 0);
		if (!d)
			continue;
		sum += d;
		snprintf(types + strlen(types), len - strlen(types), "%s%s=%llu",
			 *types ? " " : "", b->name[i], d);
	}
	return sum;
}

/* ---- part 1: the rows -------------------------------------------------- */

/* Shared by the controller, the spinner thread and the disturber. */
struct shared {
	atomic_int ready;	/* disturber set up (or n/a) */
	atomic_int spinning;	/* spinner isolated (or plain) and spinning */
	atomic_int go;
	atomic_int stop;
	atomic_int done;	/* disturber finished its teardown */
	atomic_long iters;
	int isolated;		/* prctl() accepted */
	int err;		/* errno of the last prctl() */
	int eagain;
	pid_t tid;
	char na[96];		/* n/a reason from setup, "" if it runs */
	char note[96];
};

struct row;
struct ctx {
	struct shared *sh;
	const struct row *row;
	int hk, iso;
	int wake_fd;		/* write end of the woken task's pipe */
	pid_t helper;		/* a helper process of the row */
	void *page;
	char saved[64];
	int sock;
	int bpf_pin;		/* a loaded program that keeps its JIT pack, or -1 */
};

struct row {
	const char *name;
	int own_mm;		/* disturbs from a thread of the spinner's process */
	/* "loss" (one loss, cause one of the |-separated substrings) or "zero" */
	const char *expect;
	const char *cause;
	const char *(*setup)(struct ctx *c);	/* NULL or the n/a reason */
	void (*disturb)(struct ctx *c);
	void (*teardown)(struct ctx *c);
};

static void d_none(struct ctx *c)
{
}

static const char *s_page(struct ctx *c)
{
	c->page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (c->page == MAP_FAILED)
		return "mmap failed";
	memset(c->page, 1, 4096);
	return NULL;
}

static void d_munmap(struct ctx *c)
{
	char *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return;
	*(volatile char *)p = 1;
	munmap(p, 4096);
}

static void d_mprotect(struct ctx *c)
{
	mprotect(c->page, 4096, PROT_READ);
	mprotect(c->page, 4096, PROT_READ | PROT_WRITE);
}

static const char *s_membarrier(struct ctx *c)
{
	if (syscall(__NR_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0))
		return "config";
	return NULL;
}

static void d_membarrier(struct ctx *c)
{
	syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
}

/* A task that sleeps in read() and is woken onto the isolated CPU. */
static const char *s_wake(struct ctx *c)
{
	int p[2];
	char b;

	if (pipe(p))
		return "pipe failed";
	c->helper = fork();
	if (c->helper == 0) {
		close(p[1]);
		prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
		if (pin_tid(0, c->iso))
			_exit(1);
		while (read(p[0], &b, 1) == 1)
			;
		_exit(0);
	}
	close(p[0]);
	c->wake_fd = p[1];
	sleep_ms(200);		/* let it block on the isolated CPU first */
	return NULL;
}

static void d_wake(struct ctx *c)
{
	if (write(c->wake_fd, "w", 1) < 0)
		return;
}

static void t_helper(struct ctx *c)
{
	if (c->wake_fd > 0)
		close(c->wake_fd);
	if (c->helper > 0) {
		kill(c->helper, SIGKILL);
		waitpid(c->helper, NULL, 0);
	}
}

#define SCHEDSTATS "/proc/sys/kernel/sched_schedstats"

static const char *s_static_key(struct ctx *c)
{
	if (read_file(SCHEDSTATS, c->saved, sizeof(c->saved)) <= 0)
		return "config";
	return NULL;
}

static void d_static_key(struct ctx *c)
{
	write_file(SCHEDSTATS, c->saved[0] == '1' ? "0" : "1");
	write_file(SCHEDSTATS, c->saved[0] == '1' ? "1" : "0");
}

/* Load a two-instruction socket filter: its descriptor, or -errno. */
static int bpf_load_fd(void)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	union bpf_attr attr;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
	attr.insns = (unsigned long)insns;
	attr.insn_cnt = 2;
	attr.license = (unsigned long)"GPL";
	fd = syscall(__NR_bpf, BPF_PROG_LOAD, &attr, sizeof(attr));
	return fd < 0 ? -errno : fd;
}

/*
 * One program stays loaded for the whole row, so that its JIT pack stays
 * and each load and free below takes and returns space in it, as on any
 * system that runs BPF programs.  Without it every load would allocate a
 * new pack, whose set_memory_rox() interrupts every CPU (documented as
 * still ending isolation), and every free would free the pack.
 */
static const char *s_bpf(struct ctx *c)
{
	if (!exists("/proc/sys/net/core/bpf_jit_enable"))
		return "config";
	write_file("/proc/sys/net/core/bpf_jit_enable", "1");
	c->bpf_pin = bpf_load_fd();
	return c->bpf_pin == -ENOSYS ? "config" : NULL;
}

static void d_bpf(struct ctx *c)
{
	int fd = bpf_load_fd();

	if (fd >= 0)
		close(fd);
}

static void t_bpf(struct ctx *c)
{
	if (c->bpf_pin >= 0)
		close(c->bpf_pin);
}

static void *churn_thread(void *arg)
{
	return arg;
}

/*
 * Create and reap 32 threads: with VMAP_STACK their kernel stacks are
 * vmalloc'ed, and those the per-CPU stack cache cannot keep are freed
 * lazily; every 64 MB or so (two CPUs) a purge flushes kernel TLBs.
 */
static void d_threads(struct ctx *c)
{
	pthread_t t[32];
	int i, n;

	for (n = 0; n < 32; n++)
		if (pthread_create(&t[n], NULL, churn_thread, NULL))
			break;
	for (i = 0; i < n; i++)
		pthread_join(t[i], NULL);
}

/*
 * Collapse a 2 MB range of this (not the spinner's) process.  The faults
 * must map small pages for the collapse to have work: THP "never" (set up
 * by s_collapse()) does that, and MADV_COLLAPSE ignores that setting.
 * MADV_NOHUGEPAGE would not do: MADV_COLLAPSE refuses such a VMA (EINVAL).
 */
static int collapse(void)
{
	size_t sz = 4 << 20;
	char *p = mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *a;
	int ret;

	if (p == MAP_FAILED)
		return -ENOMEM;
	a = (char *)(((unsigned long)p + (2 << 20) - 1) & ~((2UL << 20) - 1));
	memset(a, 1, 2 << 20);
	ret = madvise(a, 2 << 20, MADV_COLLAPSE) ? -errno : 0;
	munmap(p, sz);
	return ret;
}

#define THP_ENABLED "/sys/kernel/mm/transparent_hugepage/enabled"

static const char *s_collapse(struct ctx *c)
{
	int ret;

	if (!exists(THP_ENABLED))
		return "config";
	write_file(THP_ENABLED, "never");
	ret = collapse();
	if (ret) {
		static char why[64];

		snprintf(why, sizeof(why), "MADV_COLLAPSE: %s", strerror(-ret));
		return why;
	}
	return NULL;
}

static void d_collapse(struct ctx *c)
{
	collapse();
}

#define BUFSIZE_KB TRACEFS "buffer_size_kb"

static const char *s_resize(struct ctx *c)
{
	if (read_file(BUFSIZE_KB, c->saved, sizeof(c->saved)) <= 0)
		return "config";
	return NULL;
}

static void d_resize(struct ctx *c)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%ld", strtol(c->saved, NULL, 10) * 2);
	write_file(BUFSIZE_KB, buf);
	write_file(BUFSIZE_KB, c->saved);
}

#define SCHED_SWITCH TRACEFS "events/sched/sched_switch/enable"

/* A reader blocked on the top-level trace_pipe, on the housekeeping CPU. */
static const char *s_trace_pipe(struct ctx *c)
{
	static char buf[4096];
	int fd;

	if (!exists(TRACEFS "trace_pipe"))
		return "config";
	write_file(SCHED_SWITCH, "1");	/* events for it to read */
	c->helper = fork();
	if (c->helper == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
		pin_tid(0, c->hk);
		fd = open(TRACEFS "trace_pipe", O_RDONLY);
		while (fd >= 0 && read(fd, buf, sizeof(buf)) >= 0)
			;
		_exit(0);
	}
	sleep_ms(200);
	return NULL;
}

static void t_trace_pipe(struct ctx *c)
{
	t_helper(c);
	write_file(SCHED_SWITCH, "0");
}

/* rtnetlink: create (@add) or delete the dummy link "tibench0"; 0 or -errno. */
static int dummy_link(int add)
{
	struct {
		struct nlmsghdr nh;
		struct ifinfomsg ifi;
		char attrs[128];
	} req;
	struct rtattr *rta, *li;
	char reply[512];
	struct nlmsghdr *nh = (struct nlmsghdr *)reply;
	int fd, ret = -EIO;

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (fd < 0)
		return -errno;
	memset(&req, 0, sizeof(req));
	req.nh.nlmsg_len = NLMSG_LENGTH(sizeof(req.ifi));
	req.nh.nlmsg_type = add ? RTM_NEWLINK : RTM_DELLINK;
	req.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | (add ? NLM_F_CREATE | NLM_F_EXCL : 0);
	req.ifi.ifi_family = AF_UNSPEC;
	rta = (struct rtattr *)((char *)&req + NLMSG_ALIGN(req.nh.nlmsg_len));
	rta->rta_type = IFLA_IFNAME;
	rta->rta_len = RTA_LENGTH(sizeof("tibench0"));
	memcpy(RTA_DATA(rta), "tibench0", sizeof("tibench0"));
	req.nh.nlmsg_len = NLMSG_ALIGN(req.nh.nlmsg_len) + RTA_ALIGN(rta->rta_len);
	if (add) {
		li = (struct rtattr *)((char *)&req + req.nh.nlmsg_len);
		li->rta_type = IFLA_LINKINFO;
		rta = RTA_DATA(li);
		rta->rta_type = IFLA_INFO_KIND;
		rta->rta_len = RTA_LENGTH(sizeof("dummy"));
		memcpy(RTA_DATA(rta), "dummy", sizeof("dummy"));
		li->rta_len = RTA_LENGTH(RTA_ALIGN(rta->rta_len));
		req.nh.nlmsg_len += RTA_ALIGN(li->rta_len);
	}
	if (send(fd, &req, req.nh.nlmsg_len, 0) >= 0 &&
	    recv(fd, reply, sizeof(reply), 0) >= (ssize_t)NLMSG_LENGTH(sizeof(int)) &&
	    nh->nlmsg_type == NLMSG_ERROR)
		ret = ((struct nlmsgerr *)NLMSG_DATA(nh))->error;
	close(fd);
	return ret;
}

static const char *s_netdev(struct ctx *c)
{
	int ret = dummy_link(1);

	if (ret == -EOPNOTSUPP || ret == -EAFNOSUPPORT)
		return "config";
	if (ret)
		return "rtnetlink failed";
	dummy_link(0);
	return NULL;
}

static void d_netdev(struct ctx *c)
{
	if (!dummy_link(1))
		dummy_link(0);
}

/* A child that enters a new network namespace and exits (add + del). */
static int netns_cycle(void)
{
	int status;
	pid_t pid = fork();

	if (pid == 0)
		_exit(unshare(CLONE_NEWNET) ? 1 : 0);
	if (pid < 0 || waitpid(pid, &status, 0) < 0)
		return -1;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

static const char *s_netns(struct ctx *c)
{
	return netns_cycle() ? "config" : NULL;
}

static void d_netns(struct ctx *c)
{
	netns_cycle();
}

static const char *s_slab(struct ctx *c)
{
	return exists("/sys/kernel/slab") ? NULL : "config";
}

static void d_slab(struct ctx *c)
{
	DIR *d = opendir("/sys/kernel/slab");
	struct dirent *e;
	char path[300];

	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/sys/kernel/slab/%s/shrink", e->d_name);
		write_file(path, "1");
	}
	if (d)
		closedir(d);
}

static const char *s_stat_refresh(struct ctx *c)
{
	return exists("/proc/sys/vm/stat_refresh") ? NULL : "config";
}

static void d_stat_refresh(struct ctx *c)
{
	write_file("/proc/sys/vm/stat_refresh", "1");
}

static void d_drop_caches(struct ctx *c)
{
	write_file("/proc/sys/vm/drop_caches", "3");
}

static int perf_freq_open(void)
{
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_CPU_CLOCK;
	attr.freq = 1;
	attr.sample_freq = 100;
	return syscall(__NR_perf_event_open, &attr, 0, -1, -1, 0);
}

static const char *s_perf(struct ctx *c)
{
	int fd = perf_freq_open();

	if (fd < 0)
		return errno == ENOSYS || errno == ENOENT || errno == EOPNOTSUPP ?
		       "config" : "perf_event_open failed";
	close(fd);
	return NULL;
}

static void d_perf(struct ctx *c)
{
	int fd = perf_freq_open();

	if (fd < 0)
		return;
	sleep_ms(50);
	close(fd);
}

static void d_settime(struct ctx *c)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	clock_settime(CLOCK_REALTIME, &ts);
}

#define WAKE_CAUSE	"reschedule IPI|IPI sched_ttwu_pending|IPI IPI_RESCHEDULE"
/* x86 names the cross-CPU call of a user-range TLB shootdown by its function */
#define TLB_CAUSE	"TLB flush|IPI flush_tlb_func"

static const struct row rows[] = {
	{ "idle", 0, "zero", NULL, NULL, d_none, NULL },
	{ "munmap", 1, "loss", TLB_CAUSE, NULL, d_munmap, NULL },
	{ "mprotect", 1, "loss", TLB_CAUSE, s_page, d_mprotect, NULL },
	{ "membarrier", 1, "loss", "IPI ipi_mb", s_membarrier, d_membarrier, NULL },
	{ "wake_task", 0, "loss", WAKE_CAUSE, s_wake, d_wake, t_helper },
	{ "static_key", 0, "zero", NULL, s_static_key, d_static_key, NULL },
	{ "bpf_jit_load", 0, "zero", NULL, s_bpf, d_bpf, t_bpf },
	{ "thread_churn", 0, "zero", NULL, NULL, d_threads, NULL },
	{ "madv_collapse", 0, "zero", NULL, s_collapse, d_collapse, NULL },
	{ "trace_resize", 0, "zero", NULL, s_resize, d_resize, NULL },
	{ "trace_pipe_reader", 0, "zero", NULL, s_trace_pipe, d_none, t_trace_pipe },
	{ "netdev_add_del", 0, "zero", NULL, s_netdev, d_netdev, NULL },
	{ "netns_add_del", 0, "zero", NULL, s_netns, d_netns, NULL },
	{ "slab_shrink", 0, "zero", NULL, s_slab, d_slab, NULL },
	{ "vm_stat_refresh", 0, "zero", NULL, s_stat_refresh, d_stat_refresh, NULL },
	{ "drop_caches", 0, "zero", NULL, NULL, d_drop_caches, NULL },
	{ "perf_freq", 0, "zero", NULL, s_perf, d_perf, NULL },
	{ "clock_settime", 0, "zero", NULL, NULL, d_settime, NULL },
};

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define NROWS		ARRAY_SIZE(rows)

/*
 * What the row should show on this architecture: arm64 invalidates TLBs
 * by broadcast (TLBI ...IS), with no IPI, so munmap/mprotect of the
 * spinner's mm need not disturb it there.
 */
static const char *row_expect(const struct row *r)
{
	if (r->cause && !strcmp(r->cause, TLB_CAUSE) && !strcmp(machine(), "aarch64"))
		return "zero";
	return r->expect;
}

/* The disturber: setup, wait for go, disturb until stop, teardown. */
static void disturber(struct ctx *c)
{
	struct shared *sh = c->sh;
	const char *na = NULL;

	pin_tid(0, c->hk);
	if (c->row->setup)
		na = c->row->setup(c);
	if (na)
		snprintf(sh->na, sizeof(sh->na), "%s", na);
	atomic_store(&sh->ready, 1);
	if (!na) {
		while (!atomic_load(&sh->go) && !atomic_load(&sh->stop))
			usleep(1000);
		while (!atomic_load(&sh->stop)) {
			c->row->disturb(c);
			atomic_fetch_add(&sh->iters, 1);
			usleep(PACE_US);
		}
	}
	if (c->row->teardown)
		c->row->teardown(c);
	atomic_store(&sh->done, 1);
}

static void *disturber_thread(void *arg)
{
	disturber(arg);
	return NULL;
}

static volatile sig_atomic_t lost_signals;

static void on_lost(int sig)
{
	lost_signals++;
}

static int isolate(int *eagain)
{
	int i;

	for (i = 0; i < EAGAIN_TRIES; i++) {
		if (!prctl(PR_TASK_ISOLATION, PR_TASK_ISOLATION_ENABLE |
			   PR_TASK_ISOLATION_SET_SIG(SIGUSR1), 0, 0, 0))
			return 0;
		if (errno != EAGAIN)
			return -errno;
		(*eagain)++;
		usleep(1000);
	}
	return -EAGAIN;
}

/* The isolated task: no syscall between isolate() and the stop flag. */
static void *spinner(void *arg)
{
	struct ctx *c = arg;
	struct shared *sh = c->sh;

	sh->tid = syscall(__NR_gettid);
	if (pin_tid(0, c->iso)) {
		sh->err = errno;
		atomic_store(&sh->spinning, 1);
		return NULL;
	}
	sh->err = -isolate(&sh->eagain);
	sh->isolated = !sh->err;
	atomic_store(&sh->spinning, 1);
	while (!atomic_load_explicit(&sh->stop, memory_order_relaxed))
		__asm__ __volatile__("" ::: "memory");
	if (sh->isolated)
		prctl(PR_TASK_ISOLATION, 0, 0, 0, 0);
	return NULL;
}

/* Causes reported for @tid in our trace instance: count, first in @cause. */
static int trace_causes(pid_t tid, char *cause, size_t len)
{
	static char buf[1 << 16];
	char needle[32], *p, *e;
	int n = 0;

	*cause = 0;
	if (read_file(INSTANCE "trace", buf, sizeof(buf)) <= 0)
		return -1;
	snprintf(needle, sizeof(needle), " pid=%d ", tid);
	for (p = buf; (p = strstr(p, "task_isolation_lost:")); p++) {
		e = strchr(p, '\n');
		if (e)
			*e = 0;
		if (strstr(p, needle)) {
			if (!n++ && strstr(p, "cause=")) {
				char *c = strstr(p, "cause=") + 6, *f = strstr(c, " from_cpu=");

				snprintf(cause, len, "%.*s", f ? (int)(f - c) : (int)strlen(c), c);
			}
		}
		if (!e)
			break;
		*e = '\n';
	}
	return n;
}

static int trace_ready;

static void trace_setup(void)
{
	mkdir(INSTANCE, 0755);
	trace_ready = !write_file(INSTANCE LOST_EVENT, "1");
}

static int cause_matches(const char *cause, const char *want)
{
	char buf[128], *tok, *p;

	snprintf(buf, sizeof(buf), "%s", want);
	for (tok = strtok_r(buf, "|", &p); tok; tok = strtok_r(NULL, "|", &p))
		if (strstr(cause, tok))
			return 1;
	return 0;
}

static void quality_row(const struct row *r, int hk, int iso, int seconds)
{
	struct irqsnap *a = calloc(4, sizeof(*a)), *b = a + 1, *sa = a + 2, *sb = a + 3;
	char line[1024] = "", types[512] = "", stypes[512] = "", cause[128] = "";
	struct ctx c = { .hk = hk, .iso = iso, .row = r, .wake_fd = -1, .bpf_pin = -1 };
	unsigned long long irqs = 0, softs = 0;
	pthread_t spin_t, dist_t;
	pid_t dist_pid = -1;
	int reports = -1, ok = 1;
	const char *expect = row_expect(r), *verdict = "-";

	c.sh = mmap(NULL, sizeof(*c.sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (!a || c.sh == MAP_FAILED) {
		fprintf(stderr, "ti_bench: out of memory\n");
		exit(1);
	}
	memset(c.sh, 0, sizeof(*c.sh));
	lost_signals = 0;

	/* 1. The disturber, set up before the spinner exists. */
	if (r->own_mm) {
		pthread_create(&dist_t, NULL, disturber_thread, &c);
	} else {
		dist_pid = fork();
		if (dist_pid == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
			disturber(&c);
			_exit(0);
		}
		/*
		 * fork() left this process's private pages copy-on-write:
		 * the first write to each by the measuring thread would
		 * flush the spinner's TLB by IPI (it shares this mm), on
		 * both kernels.  Populating the locked mappings again takes
		 * write faults now, before the spinner exists.
		 */
		if (mlockall(MCL_CURRENT | MCL_FUTURE))
			perror("mlockall");
	}
	while (!atomic_load(&c.sh->ready))
		usleep(1000);

	snprintf(line, sizeof(line), " part=quality");
	kv(line, sizeof(line), "row", r->name);
	kv(line, sizeof(line), "expect", expect);
	kv(line, sizeof(line), "expect_cause", strcmp(expect, "loss") ? "-" : r->cause);
	kv(line, sizeof(line), "own_mm", r->own_mm ? "1" : "0");
	if (c.sh->na[0]) {
		atomic_store(&c.sh->stop, 1);
		kv(line, sizeof(line), "status", "na");
		kv(line, sizeof(line), "reason", c.sh->na);
		goto out;
	}

	/* 2. The spinner, isolated; a second for the tick to stop. */
	if (trace_ready)
		write_file(INSTANCE "trace", "");
	pthread_create(&spin_t, NULL, spinner, &c);
	while (!atomic_load(&c.sh->spinning))
		usleep(1000);
	sleep_ms(1000);

	/* 3. The window. */
	ok = !snapshot(iso, a, sa);
	atomic_store(&c.sh->go, 1);
	sleep_ms(seconds * 1000L);
	ok = ok && !snapshot(iso, b, sb);
	atomic_store(&c.sh->stop, 1);
	pthread_join(spin_t, NULL);

	if (ok) {
		irqs = delta(a, b, types, sizeof(types));
		softs = delta(sa, sb, stypes, sizeof(stypes));
	}
	if (trace_ready)
		reports = trace_causes(c.sh->tid, cause, sizeof(cause));

	kv(line, sizeof(line), "status", ok ? "ok" : "error");
	kvi(line, sizeof(line), "window_s", seconds);
	kvi(line, sizeof(line), "irq", irqs);
	kvi(line, sizeof(line), "softirq", softs);
	kv(line, sizeof(line), "irq_types", *types ? types : "-");
	kv(line, sizeof(line), "softirq_types", *stypes ? stypes : "-");
	kvi(line, sizeof(line), "isolated", c.sh->isolated);
	if (!c.sh->isolated)
		kv(line, sizeof(line), "prctl", strerror(c.sh->err));
	kvi(line, sizeof(line), "eagain", c.sh->eagain);
	kvi(line, sizeof(line), "lost", c.sh->isolated ? lost_signals : -1);
	kvi(line, sizeof(line), "reports", c.sh->isolated ? reports : -1);
	kv(line, sizeof(line), "cause", *cause ? cause : "-");
	if (c.sh->isolated) {
		if (!strcmp(expect, "loss"))
			verdict = lost_signals == 1 && cause_matches(cause, r->cause) ?
				  "pass" : "short";
		else
			verdict = !irqs && !softs && !lost_signals ? "pass" : "short";
	}
	kv(line, sizeof(line), "verdict", verdict);
out:
	if (r->own_mm)
		pthread_join(dist_t, NULL);
	else if (dist_pid > 0)
		waitpid(dist_pid, NULL, 0);
	kvi(line, sizeof(line), "iters", atomic_load(&c.sh->iters));
	emit(line);
	munmap(c.sh, sizeof(*c.sh));
	free(a);
}

static int cmd_quality(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_lost };
	int hk, iso, seconds, i, j, any;
	unsigned int k;

	if (argc < 3)
		return 2;
	hk = atoi(argv[0]);
	iso = atoi(argv[1]);
	seconds = atoi(argv[2]);
	pin_tid(0, hk);
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	/* Lock everything, now and later: a page fault would end isolation. */
	if (mlockall(MCL_CURRENT | MCL_FUTURE))
		perror("mlockall");
	trace_setup();
	printf("# ti_bench quality: hk %d, isolated %d, %d s per row, %s %s, %s %s\n",
	       hk, iso, seconds, "task isolation", have_task_isolation() ? "yes" : "no",
	       "loss trace",
	       trace_ready ? "yes" : "no");
	fflush(stdout);
	for (k = 0; k < NROWS; k++) {
		any = argc == 3;
		for (i = 3, j = 0; i < argc && !j; i++)
			j = !strcmp(argv[i], rows[k].name);
		if (any || j)
			quality_row(&rows[k], hk, iso, seconds);
	}
	return 0;
}

/* ---- part 2: instruction counts ---------------------------------------- */

struct costres {
	double min, med, max;
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void emit_cost(const char *row, const char *what, int cpu, long n, int reps,
		      const double *v, int eagain)
{
	char line[512] = " part=cost";
	double s[64];
	int i;

	for (i = 0; i < reps; i++)
		s[i] = v[i];
	qsort(s, reps, sizeof(double), cmp_double);
	kv(line, sizeof(line), "row", row);
	kv(line, sizeof(line), "what", what);
	kvi(line, sizeof(line), "cpu", cpu);
	kvi(line, sizeof(line), "n", n);
	kvi(line, sizeof(line), "reps", reps);
	snprintf(line + strlen(line), sizeof(line) - strlen(line),
		 " min=%.2f med=%.2f max=%.2f", s[0], s[reps / 2], s[reps - 1]);
	if (eagain >= 0)
		kvi(line, sizeof(line), "eagain", eagain);
	kv(line, sizeof(line), "status", "ok");
	emit(line);
}

static void emit_na(const char *part, const char *row, const char *reason)
{
	char line[256] = "";

	snprintf(line, sizeof(line), " part=%s", part);
	kv(line, sizeof(line), "row", row);
	kv(line, sizeof(line), "status", "na");
	kv(line, sizeof(line), "reason", reason);
	emit(line);
}

static void cost_getppid(const char *row, int cpu, long n, int reps)
{
	double v[64];
	long long t;
	int r;
	long i;

	pin_tid(0, cpu);
	for (r = -1; r < reps; r++) {	/* r == -1: warm-up */
		t = now_ns();
		for (i = 0; i < n; i++)
			syscall(__NR_getppid);
		if (r >= 0)
			v[r] = (double)(now_ns() - t) / n;
	}
	emit_cost(row, "getppid() loop, insns per call", cpu, n, reps, v, -1);
}

static atomic_int cost_stop;

/* The kernel's cpu_relax(): lets QEMU's round-robin loop move on (part 2). */
static inline void spin_hint(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__asm__ __volatile__("pause" ::: "memory");
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#else
	__asm__ __volatile__("" ::: "memory");
#endif
}

static void *busy(void *arg)
{
	pin_tid(0, *(int *)arg);
	while (!atomic_load_explicit(&cost_stop, memory_order_relaxed))
		spin_hint();
	return NULL;
}

/*
 * membarrier(PRIVATE_EXPEDITED) from @hk while a sibling runs on @iso.
 * @row "ipi_call_function" runs before any task of the boot asked for
 * isolation, "ipi_call_function_used" right after one: the series
 * attaches its sender probes to the IPI tracepoints on a request and
 * detaches them 10 s after the last one.
 */
static void cost_call(const char *row, int hk, int iso, long n, int reps)
{
	pthread_t t;
	double v[64];
	long long t0;
	int r;
	long i;

	if (syscall(__NR_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0)) {
		emit_na("cost", row, "config");
		return;
	}
	pin_tid(0, hk);
	atomic_store(&cost_stop, 0);
	pthread_create(&t, NULL, busy, &iso);
	sleep_ms(100);
	for (r = -1; r < reps; r++) {
		t0 = now_ns();
		for (i = 0; i < n; i++)
			syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
		if (r >= 0)
			v[r] = (double)(now_ns() - t0) / n;
	}
	atomic_store(&cost_stop, 1);
	pthread_join(t, NULL);
	emit_cost(row, "membarrier() IPI to a busy sibling, insns per call",
		  hk, n, reps, v, -1);
}

/*
 * Pipe ping-pong between @hk and a task on @iso: each round trip wakes a
 * task on the other CPU.  With @busy_target the woken task is SCHED_FIFO
 * and the target CPU runs a spinner, so the wakeup preempts it with a
 * reschedule IPI; else the target is idle (ttwu wakelist, call-function
 * IPI).
 */
static void cost_pingpong(const char *row, int hk, int iso, int busy_target,
			  long n, int reps)
{
	int ab[2], ba[2], r;
	pid_t pid, spin = -1;
	double v[64];
	long long t0;
	char b = 0;
	long i;

	if (pipe(ab) || pipe(ba))
		return;
	if (busy_target) {
		spin = fork();
		if (spin == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
			close(ab[0]);
			close(ab[1]);
			close(ba[0]);
			close(ba[1]);
			pin_tid(0, iso);
			for (;;)
				spin_hint();
		}
	}
	pid = fork();
	if (pid == 0) {
		struct sched_param sp = { .sched_priority = 10 };

		prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
		pin_tid(0, iso);
		close(ab[1]);
		close(ba[0]);
		if (busy_target && sched_setscheduler(0, SCHED_FIFO, &sp))
			_exit(1);
		while (read(ab[0], &b, 1) == 1)
			if (write(ba[1], &b, 1) != 1)
				break;
		_exit(0);
	}
	close(ab[0]);
	close(ba[1]);
	pin_tid(0, hk);
	sleep_ms(100);
	for (r = -1; r < reps; r++) {
		t0 = now_ns();
		for (i = 0; i < n; i++)
			if (write(ab[1], &b, 1) != 1 || read(ba[0], &b, 1) != 1)
				break;
		if (r >= 0)
			v[r] = (double)(now_ns() - t0) / n;
	}
	close(ab[1]);
	waitpid(pid, NULL, 0);
	if (spin > 0) {
		kill(spin, SIGKILL);
		waitpid(spin, NULL, 0);
	}
	close(ba[0]);
	emit_cost(row, busy_target ?
		  "wake a SCHED_FIFO task onto a busy CPU and back, insns per round trip" :
		  "wake a task on an idle CPU and back, insns per round trip",
		  hk, n, reps, v, -1);
}

/* One prctl() enter + leave on @iso, retried without sleeping on EAGAIN. */
static void cost_cycle(int iso, long n, int reps)
{
	int r, eagain = 0;
	double v[64];
	long long t0;
	long i;

	if (!have_task_isolation()) {
		emit_na("cost", "isolation_enter_leave", "kernel");
		return;
	}
	pin_tid(0, iso);
	mlockall(MCL_CURRENT);
	if (isolate(&eagain)) {	/* warm up: the CPU quiet once */
		emit_na("cost", "isolation_enter_leave", "prctl failed");
		return;
	}
	prctl(PR_TASK_ISOLATION, 0, 0, 0, 0);
	eagain = 0;
	for (r = 0; r < reps; r++) {
		t0 = now_ns();
		for (i = 0; i < n; i++) {
			while (prctl(PR_TASK_ISOLATION, PR_TASK_ISOLATION_ENABLE |
				     PR_TASK_ISOLATION_SET_SIG(SIGUSR1), 0, 0, 0))
				if (errno == EAGAIN)
					eagain++;
				else
					break;
			prctl(PR_TASK_ISOLATION, 0, 0, 0, 0);
		}
		v[r] = (double)(now_ns() - t0) / n;
	}
	emit_cost("isolation_enter_leave", "prctl() enable + leave, insns per cycle",
		  iso, n, reps, v, eagain);
}

static int cmd_cost(int argc, char **argv)
{
	int hk, iso, reps;
	long n;

	if (argc < 4)
		return 2;
	hk = atoi(argv[0]);
	iso = atoi(argv[1]);
	n = atol(argv[2]);
	reps = atoi(argv[3]);
	if (reps < 1 || reps > 64 || n < 1)
		return 2;
	signal(SIGUSR1, SIG_IGN);
	cost_getppid("getppid_housekeeping", hk, n, reps);
	cost_getppid("getppid_nohz_full", iso, n, reps);
	cost_call("ipi_call_function", hk, iso, n / 10 + 1, reps);
	cost_pingpong("ipi_wakeup_idle", hk, iso, 0, n / 20 + 1, reps);
	cost_pingpong("ipi_resched_busy", hk, iso, 1, n / 20 + 1, reps);
	cost_cycle(iso, n / 20 + 1, reps);
	cost_call("ipi_call_function_used", hk, iso, n / 10 + 1, reps);
	return 0;
}

/* ---- part 3: time to enter isolation ----------------------------------- */

struct scale_arg {
	int cpu;
	atomic_int *start;
	long long ns;
	int eagain, err;
};

static void *scale_thread(void *p)
{
	struct scale_arg *a = p;
	long long t0;

	pin_tid(0, a->cpu);
	while (!atomic_load(a->start))
		;
	t0 = now_ns();
	a->err = -isolate(&a->eagain);
	a->ns = now_ns() - t0;
	if (!a->err)
		prctl(PR_TASK_ISOLATION, 0, 0, 0, 0);
	return NULL;
}

static int cmd_scale(int argc, char **argv)
{
	struct scale_arg args[16];
	pthread_t t[16];
	double v[64], e[64];
	char row[32], *p, *list;
	int cpus[16], n = 0, trials, r, i, err = 0;
	atomic_int start;

	if (argc < 2)
		return 2;
	trials = atoi(argv[1]);
	if (trials < 1 || trials > 64)
		return 2;
	list = strdup(argv[0]);
	for (p = strtok(list, ","); p && n < 16; p = strtok(NULL, ","))
		cpus[n++] = atoi(p);
	snprintf(row, sizeof(row), "enter_%d_cpu%s", n, n > 1 ? "s" : "");
	if (!have_task_isolation()) {
		emit_na("scale", row, "kernel");
		return 0;
	}
	signal(SIGUSR1, SIG_IGN);
	mlockall(MCL_CURRENT | MCL_FUTURE);
	for (r = 0; r < trials; r++) {
		atomic_store(&start, 0);
		for (i = 0; i < n; i++) {
			args[i] = (struct scale_arg){ .cpu = cpus[i], .start = &start };
			pthread_create(&t[i], NULL, scale_thread, &args[i]);
		}
		sleep_ms(100);
		atomic_store(&start, 1);
		v[r] = 0;
		e[r] = 0;
		for (i = 0; i < n; i++) {
			pthread_join(t[i], NULL);
			if (args[i].err)
				err = args[i].err;
			if (args[i].ns / 1e6 > v[r])
				v[r] = args[i].ns / 1e6;
			e[r] += args[i].eagain;
		}
	}
	if (err) {
		emit_na("scale", row, strerror(err));
		return 0;
	}
	{
		char line[512] = " part=scale";

		kv(line, sizeof(line), "row", row);
		kv(line, sizeof(line), "what",
		   "ms until the last of the CPUs is isolated (max over CPUs)");
		kv(line, sizeof(line), "cpus", argv[0]);
		kvi(line, sizeof(line), "reps", trials);
		qsort(v, trials, sizeof(double), cmp_double);
		qsort(e, trials, sizeof(double), cmp_double);
		snprintf(line + strlen(line), sizeof(line) - strlen(line),
			 " min=%.3f med=%.3f max=%.3f eagain_med=%.0f", v[0], v[trials / 2],
			 v[trials - 1], e[trials / 2]);
		kv(line, sizeof(line), "status", "ok");
		emit(line);
	}
	free(list);
	return 0;
}

/* ---- soak: isolated tasks held under a housekeeping load -------------- */

#define SOAK_INSTANCE	TRACEFS "instances/ti_soak/"
#define SOAK_MAX	16
#define SOAK_BUF	(1 << 20)
#define SOAK_PROGRESS_S	30

/* One per held CPU, in memory shared between the controller and holders. */
struct holder {
	atomic_int state;	/* 0 starting, 1 holding, -1 cannot pin */
	atomic_int stop;
	atomic_long losses;	/* isolation signals (SIGUSR1) handled */
	atomic_long enter_fail;	/* prctl() attempts that failed */
	int err;
};

static struct holder *soak_me;
static volatile sig_atomic_t soak_lost;

static void soak_on_lost(int sig)
{
	atomic_fetch_add(&soak_me->losses, 1);
	soak_lost = 1;
}

/*
 * A holder: its own process (no mm shared with anything that maps or
 * unmaps), pinned to @cpu, memory locked, polling a 1 MiB buffer of its
 * own node as a packet-processing loop would.  With task isolation it
 * isolates (SIGUSR1 caught) and, after each loss, isolates again; without
 * it, it is a plain nohz_full task.
 */
static void soak_holder(struct holder *h, int cpu, int ti)
{
	unsigned char *buf;
	unsigned long i = 0;
	int eagain = 0, r;

	soak_me = h;
	if (pin_tid(0, cpu)) {
		h->err = errno;
		atomic_store(&h->state, -1);
		_exit(1);
	}
	mlockall(MCL_CURRENT | MCL_FUTURE);
	buf = malloc(SOAK_BUF);
	if (!buf)
		_exit(1);
	memset(buf, 1, SOAK_BUF);
	signal(SIGUSR1, soak_on_lost);
	while (!atomic_load(&h->stop)) {
		/* Before the prctl(): a loss right after it must end this round */
		soak_lost = 0;
		if (ti) {
			r = isolate(&eagain);
			if (r) {
				h->err = -r;
				atomic_fetch_add(&h->enter_fail, 1);
				sleep_ms(100);
				continue;
			}
		}
		atomic_store(&h->state, 1);
		while (!soak_lost && !atomic_load_explicit(&h->stop, memory_order_relaxed)) {
			buf[i]++;
			i = (i + 64) & (SOAK_BUF - 1);
		}
	}
	if (ti && !soak_lost)
		prctl(PR_TASK_ISOLATION, 0, 0, 0, 0);
	_exit(0);
}

/*
 * ti_bench soak HK CPU,... SECONDS: hold a task on each CPU for SECONDS
 * while tools/soak-run.sh loads HK.  The window starts when every holder
 * holds and is bracketed by "ti_soak start"/"ti_soak end" markers in the
 * ti_soak trace instance (set up by the runner), so that the events it
 * counts are those of the window.  A progress line every 30 s; at the end
 * one line per CPU: losses, failed entries, interrupts taken by type.
 */
static int cmd_soak(int argc, char **argv)
{
	struct irqsnap *a, *b, *sa, *sb;
	struct holder *h;
	long before[SOAK_MAX], after[SOAK_MAX], fail_before[SOAK_MAX];
	pid_t pids[SOAK_MAX];
	int cpus[SOAK_MAX], n = 0, hk, seconds, ti, i, t, dead = 0;
	char *p, *list, line[2048];

	if (argc < 3)
		return 2;
	hk = atoi(argv[0]);
	seconds = atoi(argv[2]);
	list = strdup(argv[1]);
	for (p = strtok(list, ","); p && n < SOAK_MAX; p = strtok(NULL, ","))
		cpus[n++] = atoi(p);
	if (!n || seconds < 1)
		return 2;
	ti = have_task_isolation();
	a = calloc(4 * n, sizeof(*a));
	h = mmap(NULL, n * sizeof(*h), PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (!a || h == MAP_FAILED || pin_tid(0, hk))
		return 1;
	for (i = 0; i < n; i++) {
		pids[i] = fork();
		if (!pids[i])
			soak_holder(&h[i], cpus[i], ti);
	}
	for (t = 0; t < 600; t++) {
		for (i = 0; i < n && atomic_load(&h[i].state) == 1; i++)
			;
		if (i == n)
			break;
		sleep_ms(100);
	}
	if (i < n) {
		snprintf(line, sizeof(line), " part=soak_error reason=holder%%20on%%20cpu%d%%20not%%20holding%%20after%%2060%%20s%%20(%s)",
			 cpus[i], strerror(h[i].err));
		emit(line);
		for (i = 0; i < n; i++)
			kill(pids[i], SIGKILL);
		return 1;
	}
	if (write_file(SOAK_INSTANCE "trace_marker", "ti_soak start")) {
		emit(" part=soak_error reason=cannot%20write%20the%20start%20marker");
		for (i = 0; i < n; i++)
			kill(pids[i], SIGKILL);
		return 1;
	}
	for (i = 0; i < n; i++) {
		snapshot(cpus[i], &a[4 * i], &a[4 * i + 2]);
		before[i] = atomic_load(&h[i].losses);
		fail_before[i] = atomic_load(&h[i].enter_fail);
	}
	for (t = 1; t <= seconds && !dead; t++) {
		sleep_ms(1000);
		for (i = 0; i < n; i++)
			if (waitpid(pids[i], NULL, WNOHANG) == pids[i])
				dead = cpus[i] + 1;
		if (t % SOAK_PROGRESS_S && t != seconds)
			continue;
		line[0] = 0;
		for (i = 0; i < n; i++)
			snprintf(line + strlen(line), sizeof(line) - strlen(line),
				 " cpu%d:%ld", cpus[i], atomic_load(&h[i].losses) - before[i]);
		printf("SOAK %d/%d s, losses per CPU:%s\n", t, seconds, ti ? line : " (no task isolation)");
	}
	if (write_file(SOAK_INSTANCE "trace_marker", "ti_soak end"))
		emit(" part=soak_error reason=cannot%20write%20the%20end%20marker");
	for (i = 0; i < n; i++)
		after[i] = atomic_load(&h[i].losses);
	for (i = 0; i < n; i++) {
		char types[1024] = "", stypes[1024] = "";
		unsigned long long irqs, softs;

		b = &a[4 * i];
		sa = b + 2;
		sb = b + 3;
		snapshot(cpus[i], b + 1, sb);
		irqs = delta(b, b + 1, types, sizeof(types));
		softs = delta(sa, sb, stypes, sizeof(stypes));
		snprintf(line, sizeof(line), " part=soak");
		kvi(line, sizeof(line), "cpu", cpus[i]);
		kvi(line, sizeof(line), "isolation", ti);
		kvi(line, sizeof(line), "seconds", t - 1);
		kvi(line, sizeof(line), "losses", after[i] - before[i]);
		kvi(line, sizeof(line), "enter_fail", atomic_load(&h[i].enter_fail) - fail_before[i]);
		kvi(line, sizeof(line), "irqs", irqs);
		kv(line, sizeof(line), "irq_types", types);
		kvi(line, sizeof(line), "softirqs", softs);
		kv(line, sizeof(line), "softirq_types", stypes);
		emit(line);
	}
	for (i = 0; i < n; i++)
		atomic_store(&h[i].stop, 1);
	for (i = 0; i < n; i++)
		waitpid(pids[i], NULL, 0);
	if (dead) {
		snprintf(line, sizeof(line), " part=soak_error reason=holder%%20on%%20cpu%d%%20died", dead - 1);
		emit(line);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	unsigned int k;
	int rc = 2;

	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	if (argc >= 2 && !strcmp(argv[1], "quality"))
		rc = cmd_quality(argc - 2, argv + 2);
	else if (argc >= 2 && !strcmp(argv[1], "cost"))
		rc = cmd_cost(argc - 2, argv + 2);
	else if (argc >= 2 && !strcmp(argv[1], "scale"))
		rc = cmd_scale(argc - 2, argv + 2);
	else if (argc >= 2 && !strcmp(argv[1], "soak"))
		rc = cmd_soak(argc - 2, argv + 2);
	else if (argc >= 2 && !strcmp(argv[1], "rows"))
		for (k = 0, rc = 0; k < NROWS; k++)
			printf("%s\n", rows[k].name);
	if (rc == 2)
		fprintf(stderr, "usage: ti_bench quality HK ISO SECONDS [ROW...] |\n"
			"       ti_bench cost HK ISO N REPS | scale CPU,... TRIALS | rows |\n"
			"       ti_bench soak HK CPU,... SECONDS\n");
	return rc;
}
