#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Guest side of tools/soak.sh (make soak): installed as run.sh on the soak
# disk, run by /sbin/ti-init.  Sets up the ti_soak trace instance, starts
# a mixed load on the housekeeping CPU, holds a task on every isolated CPU
# for the window (ti_bench soak), then prints "BENCH part=soak_event ..."
# lines: every IPI, CSD and irq_work aimed at an isolated CPU during the
# window, by callback, and every isolation loss by cause.  The counting is
# the deferral series': the ipi_send_cpu, ipi_send_cpumask and
# csd_queue_cpu tracepoints, filtered on the isolated CPUs.
cd "$(dirname "$0")" || exit 1
# soak.conf (from tools/soak.sh): HK=0, ISOLATE=1-3, ISOLATE_EXPANDED=1,2,3,
# DURATION=<s>
. ./soak.conf

loglevel=$(cut -f1 /proc/sys/kernel/printk 2>/dev/null)
[ "${loglevel:-0}" -ge 5 ] 2>/dev/null || loglevel=7
dmesg -n 1 2>/dev/null

enc() { printf '%s' "$1" | od -An -tx1 -v | tr -s ' \n' ' ' | sed -e 's/^ //' -e 's/ $//' -e 's/ /%/g' -e 's/^/%/'; }
echo "BENCH part=info uname=$(enc "$(uname -r)") machine=$(uname -m) cpus=$(nproc --all) nodes=$(ls -d /sys/devices/system/node/node[0-9]* 2>/dev/null | wc -l) cmdline=$(enc "$(cat /proc/cmdline)") task_isolation=$(enc "$(cat /sys/devices/system/cpu/task_isolation 2>/dev/null || echo none)") numa_balancing=$(cat /proc/sys/kernel/numa_balancing 2>/dev/null || echo none) thp=$(enc "$(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null || echo none)")"

T=/sys/kernel/tracing
I=$T/instances/ti_soak
fail() { echo "BENCH part=soak_error reason=$(enc "$1")"; echo "BENCH part=done rc=1"; exit 1; }

# 1. The counters: filtered events in an instance of our own, with room
# for the whole window (the overruns are reported, never silently lost).
mkdir -p $I || fail "no tracefs instance"
echo 16384 >$I/buffer_size_kb || fail "cannot size the trace buffer"
# The scheduler events name the tasks that land on an isolated CPU (the
# reschedule IPIs of enqueue_task() have no callback).
for ev in ipi/ipi_send_cpu:cpu csd/csd_queue_cpu:cpu ipi/ipi_send_cpumask:cpumask \
	sched/sched_migrate_task:dest_cpu sched/sched_wakeup:target_cpu; do
	e=${ev%%:*} field=${ev#*:}
	[ -d $I/events/$e ] || fail "no $e event"
	echo "$field & CPUS{$ISOLATE}" >$I/events/$e/filter || fail "filter '$field & CPUS{$ISOLATE}' refused by $e"
	echo 1 >$I/events/$e/enable || fail "cannot enable $e"
done
if [ -d $I/events/task_isolation/task_isolation_lost ]; then
	echo 1 >$I/events/task_isolation/task_isolation_lost/enable || fail "cannot enable task_isolation_lost"
fi

# 2. The documented admin steps (Documentation/userspace-api/
# task_isolation.rst, "Admin steps"): device interrupts off the isolated
# CPUs (the boot line has no irqaffinity=), compaction kept away from
# locked memory (the holders mlockall()).
steps="irqs-to-cpu$HK"
for f in /proc/irq/*/smp_affinity_list; do
	echo "$HK" >"$f" 2>/dev/null	# per-CPU and managed ones refuse
done
printf '%x' $((1 << HK)) >/proc/irq/default_smp_affinity	# interrupts set up later
if echo 0 >/proc/sys/vm/compact_unevictable_allowed 2>/dev/null; then
	steps="$steps compact_unevictable_allowed=0"
fi
echo "BENCH part=steps steps=$(enc "$steps")"

# 3. The load, all on the housekeeping CPU, for longer than the window.
# stress-ng: fork/exec, mmap/munmap, page faults and reclaim of a working
# set, thread create/exit, TCP sockets, POSIX timers, file I/O, namespaces
# (netns among them), seccomp BPF filters loaded.  Not in it: the admin
# actions that run something on every CPU by design (set_event_pid,
# vm.overcommit_memory=2, CPU hotplug, MSR reads): each has a test of its
# own that shows the loss reported with its cause, and a documented step.
hk_run() { taskset -c "$HK" "$@"; }
rest=$((DURATION + 120))
hk_run stress-ng --timeout "${rest}s" --temp-path /tmp --quiet \
	--fork 1 --exec 1 --mmap 1 --mmap-bytes 32M --vm 1 --vm-bytes 64M \
	--pthread 1 --sock 1 --timer 1 --iomix 1 --iomix-bytes 16M \
	--unshare 1 --seccomp 1 >/tmp/stress-ng.log 2>&1 &
loadpids=$!
# hackbench: scheduler messaging between many tasks
(while :; do hk_run hackbench -g 2 -f 10 -l 200 >/dev/null 2>&1; done) &
loadpids="$loadpids $!"
# Tracing: an event switched on and off (its static key flips: text
# patching; not one the ti_soak instance has on), a trace buffer resized.
(while :; do
	echo 1 >$T/events/signal/signal_deliver/enable; sleep 1
	echo 0 >$T/events/signal/signal_deliver/enable; sleep 1
	echo 2048 >$T/buffer_size_kb; echo 1408 >$T/buffer_size_kb
done) &
loadpids="$loadpids $!"
# sysctl reads and writes of an administrator or a monitoring agent
(while :; do
	cat /proc/sys/vm/stat_refresh >/dev/null 2>&1
	echo 1 >/proc/sys/vm/drop_caches
	echo 1 >/proc/sys/vm/compact_memory 2>/dev/null
	sysctl -a >/dev/null 2>&1
	sleep 5
done) &
loadpids="$loadpids $!"
echo "SOAK load started on CPU $HK: stress-ng, hackbench, trace and sysctl writes"

# 4. The window.
./ti_bench soak "$HK" "$ISOLATE_EXPANDED" "$DURATION"
rc=$?
# shellcheck disable=SC2086 # a list of pids
kill $loadpids 2>/dev/null
pkill -f stress-ng 2>/dev/null
echo 0 >$I/tracing_on

# 5. The counts: events between the window's markers, by event and source
# (the callback, the call site where the callback is NULL, the task for
# the scheduler events), and losses by cause.
for c in $(seq 0 $(($(nproc --all) - 1))); do
	o=$(sed -n 's/^overrun: //p' $I/per_cpu/cpu$c/stats 2>/dev/null)
	[ "${o:-0}" = 0 ] || echo "BENCH part=soak_error reason=$(enc "trace buffer of CPU $c overran: $o events lost")"
done
awk '
function enc(s) { gsub(/%/, "%25", s); gsub(/ /, "%20", s); gsub(/=/, "%3D", s); gsub(/,/, "%2C", s); return s }
function field(name,    i) { for (i = 1; i <= NF; i++) if (index($i, name "=") == 1) return substr($i, length(name) + 2); return "" }
function sym(s) { sub(/\+0x[0-9a-f]+\/0x[0-9a-f]+$/, "", s); return s }
/tracing_mark_write: ti_soak start/ { on = 1; started = 1; next }
/tracing_mark_write: ti_soak end/ { on = 0; ended = 1; next }
!on { next }
/ (ipi_send_cpu|ipi_send_cpumask|csd_queue_cpu|sched_migrate_task|sched_wakeup): / {
	for (i = 1; i <= NF; i++) if ($i ~ /^(ipi_send_cpu|ipi_send_cpumask|csd_queue_cpu|sched_migrate_task|sched_wakeup):$/) { ev = substr($i, 1, length($i) - 1); break }
	# The IPI that carries queued CSDs: each CSD is counted by csd_queue_cpu
	if (field("callback") ~ /^generic_smp_call_function/) next
	if (ev ~ /^sched_/) src = "task " field("comm")
	else src = ev == "csd_queue_cpu" ? sym(field("func")) : sym(field("callback"))
	if (src == "" || src == "0x0") src = "(none) from " sym(field("callsite"))
	n[ev " " src]++
	next
}
/ task_isolation_lost: / {
	# Remote causes are reported by the sender, the task of the line.  Addresses
	# and offsets vary from run to run: the cause keeps their kind only.
	c = $0; sub(/.*cause=/, "", c); sub(/ from_cpu=.*/, "", c)
	gsub(/0x[0-9a-f]+/, "ADDR", c); gsub(/\+ADDR\/ADDR/, "", c)
	if (field("from_cpu") != "-1") {
		who = $1; sub(/-[0-9]+$/, "", who); gsub(/[0-9]+/, "N", who)
		c = c " (sent by " who ")"
	}
	l[c]++
}
END {
	if (!started || !ended)
		printf "BENCH part=soak_error reason=%s\n", enc("the window markers are not in the trace (start " started ", end " ended ")")
	for (k in n) { split(k, p, " "); s = substr(k, length(p[1]) + 2); printf "BENCH part=soak_event event=%s source=%s count=%d\n", p[1], enc(s), n[k] }
	for (k in l) printf "BENCH part=soak_loss cause=%s count=%d\n", enc(k), l[k]
}' $I/trace
echo "BENCH part=done rc=$rc"
echo "=== stress-ng ==="
tail -n 20 /tmp/stress-ng.log
echo "=== guest dmesg ==="
dmesg -n "$loglevel" 2>/dev/null
dmesg --color=never
echo "=== end guest dmesg ==="
