#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Guest side of tools/boot-test.sh: prepares the isolated CPUs, runs every
# test program on the test disk and prints one KTAP document on the console:
# the selftest suite as a nested KTAP subtest, each --extra program as a
# test of its own (exit 0 = pass, 4 = skip, anything else = fail).
cd "$(dirname "$0")" || exit 1
. ./ti.conf	# ISOLATE=<cpulist> HOLD=<seconds>, written by boot-test.sh
export TI_HOLD_SECONDS="${HOLD:-10}"

# Keep kernel messages off the console while KTAP is printed; they are
# dumped after the results, and the console log level is restored before
# the dump so that anything later (a WARNING at power-off) reaches the
# console too.  The host scans the whole console for crashes.
loglevel=$(cut -f1 /proc/sys/kernel/printk 2>/dev/null)
[ "${loglevel:-0}" -ge 5 ] 2>/dev/null || loglevel=7	# 5: warnings show
dmesg -n 1 2>/dev/null

# The deadline fair server arms a timer on every CPU that runs a fair
# task; isolated CPUs need it off (see Documentation/userspace-api/
# task_isolation.rst).
for f in /sys/kernel/debug/sched/fair_server/cpu*/runtime; do
	[ -w "$f" ] || continue
	cpu=${f#/sys/kernel/debug/sched/fair_server/cpu}
	cpu=${cpu%/runtime}
	if [ -n "$(echo ",$ISOLATE_EXPANDED," | grep ",$cpu,")" ]; then
		echo 0 >"$f" 2>/dev/null
	fi
done

progs=""
[ -x ./task_isolation_test ] && progs="task_isolation_test"
for p in extra/*; do
	[ -f "$p" ] && progs="$progs $p"
done
n=$(echo $progs | wc -w)

echo "KTAP version 1"
echo "1..$n"
i=0
for p in $progs; do
	i=$((i + 1))
	name=$(basename "$p")
	rcfile=/tmp/rc.$i
	if [ "$name" = task_isolation_test ]; then
		# The harness prints TAP 13 / KTAP: nest it as a subtest.
		{ ./"$p" 2>&1; echo $? >"$rcfile"; } | sed -u 's/^/  /'
	else
		{ ./"$p" 2>&1; echo $? >"$rcfile"; } | sed -u 's/^/# /'
	fi
	rc=$(cat "$rcfile")
	case $rc in
	0) echo "ok $i $name" ;;
	4) echo "ok $i $name # SKIP" ;;
	*) echo "not ok $i $name # exit status $rc" ;;
	esac
done
echo "# ti-run: done"
echo "=== guest dmesg ==="
# From here on the kernel prints on the console again; what it logged before
# this line is in the dump below.
dmesg -n "$loglevel" 2>/dev/null
dmesg --color=never
echo "=== end guest dmesg ==="
