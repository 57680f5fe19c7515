#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Guest side of tools/boot-test.sh: prepares the isolated CPUs, runs every
# test program on the test disk and prints one KTAP document on the console:
# first isolated_cpus_match_cmdline (the kernel offers task isolation on
# exactly the CPUs the command line isolates), then the selftest suite as a
# nested KTAP subtest ("not ok ... # missing" when it was meant to run but
# is not on the disk), then each --extra program as a test of its own
# (exit 0 = pass, 4 = skip, anything else = fail).
cd "$(dirname "$0")" || exit 1
. ./ti.conf	# ISOLATE=<cpulist> ISOLATE_EXPANDED=<cpu,...> HOLD=<seconds> SUITE=0|1
		# STRESS=<seconds> STRESS_HOLD=<seconds> TESTS="<name> ...", by boot-test.sh
export TI_HOLD_SECONDS="${HOLD:-10}"
SUITE=${SUITE:-1}
STRESS=${STRESS:-0}
# The suite's stress.* tests run only in stress mode, and then alone; the
# 32-bit build of the suite (task_isolation_test32, where the architecture
# has a 32-bit user space) runs its prctl fuzz.
if [ "$STRESS" -gt 0 ]; then
	export TI_STRESS_SECONDS="$STRESS" TI_STRESS_HOLD_SECONDS="${STRESS_HOLD:-$STRESS}"
	suite_args="-f stress"
else
	suite_args="-F stress"
fi
# boot-test.sh --tests: only these tests
if [ -n "${TESTS:-}" ]; then
	suite_args=$(for t in $TESTS; do printf -- '-t %s ' "$t"; done)
fi

# Keep kernel messages off the console while KTAP is printed; they are
# dumped after the results, and the console log level is restored before
# the dump so that anything later (a WARNING at power-off) reaches the
# console too.  The host scans the whole console for crashes.
loglevel=$(cut -f1 /proc/sys/kernel/printk 2>/dev/null)
[ "${loglevel:-0}" -ge 5 ] 2>/dev/null || loglevel=7	# 5: warnings show
dmesg -n 1 2>/dev/null

# One admin step of Documentation/userspace-api/task_isolation.rst is
# taken, as a deployment would: without irqaffinity= a device interrupt
# (here the console's UART) may have its vector on an isolated CPU, and its
# transmit interrupts then end the isolation of whichever test isolates a
# task there right after printing.  Every device interrupt that can move
# goes to the housekeeping CPUs; managed and per-CPU ones refuse, and stay.
# device_irq_on_isolated_cpu shows what happens without this step.
hk_cpus=$(for c in $(seq 0 $(($(nproc --all) - 1))); do
	case ",$ISOLATE_EXPANDED," in *",$c,"*) ;; *) printf '%s,' "$c" ;; esac
done)
hk_cpus=${hk_cpus%,}
for f in /proc/irq/*/smp_affinity_list; do
	echo "$hk_cpus" >"$f" 2>/dev/null
done
mask=0
for c in $(echo "$hk_cpus" | tr ',' ' '); do
	mask=$((mask | (1 << c)))
done
printf '%x' "$mask" >/proc/irq/default_smp_affinity	# interrupts set up later
# Besides that: no debugfs knob, no boot option beyond isolcpus=/nohz_full=
# (the suite's isolation_without_admin_steps checks).

# Why prctl() returned EAGAIN, kept for the record after the run: the
# task_isolation_refused event in a trace instance of its own, which the
# tests' own tracing (clearing and switching the top-level buffer) does not
# touch.  Enabled now, before any test isolates a task.
refused=/sys/kernel/tracing/instances/ti_refused
if mkdir "$refused" 2>/dev/null; then
	echo 1 >"$refused/events/task_isolation/task_isolation_refused/enable" 2>/dev/null
fi

# cpus LIST: a CPU list ("1-3,5" or "1,2,3,5") as sorted CPU numbers, one
# line.
cpus() {
	echo "$1" | tr ',' '\n' | while IFS=- read -r a b; do
		[ -n "$a" ] && seq "$a" "${b:-$a}"
	done | sort -n -u | paste -sd' ' -
}

progs=""
if [ -x ./task_isolation_test ] || [ "$SUITE" = 1 ]; then
	progs="task_isolation_test"
fi
if [ -x ./task_isolation_test32 ] && [ "$STRESS" = 0 ]; then
	progs="$progs task_isolation_test32"
fi
for p in extra/*; do
	[ -f "$p" ] && progs="$progs $p"
done
n=$((1 + $(echo $progs | wc -w)))

echo "KTAP version 1"
echo "1..$n"

# 1. Without task isolation on the isolated CPUs nearly every test SKIPs;
# that is a failure of the kernel, not a reason to skip.
sysfs=/sys/devices/system/cpu/task_isolation
if [ -r "$sysfs" ]; then
	have=$(cat "$sysfs" 2>/dev/null)
	echo "# $sysfs: \"$have\"; isolated on the command line: $ISOLATE"
	if [ "$(cpus "$have")" = "$(cpus "$ISOLATE_EXPANDED")" ]; then
		echo "ok 1 isolated_cpus_match_cmdline"
	else
		echo "not ok 1 isolated_cpus_match_cmdline # $sysfs is \"$have\", not \"$ISOLATE\""
	fi
else
	echo "not ok 1 isolated_cpus_match_cmdline # no $sysfs (kernel without task isolation?)"
fi

i=1
for p in $progs; do
	i=$((i + 1))
	name=$(basename "$p")
	rcfile=/tmp/rc.$i
	case $name in
	task_isolation_test) args=$suite_args ;;
	task_isolation_test32) args="-f prctl_fuzz" ;;
	*) args="" ;;
	esac
	if [ "$name" = task_isolation_test ] || [ "$name" = task_isolation_test32 ]; then
		if [ ! -x ./"$p" ]; then
			echo "# $p: not on the test disk"
			echo "not ok $i $name # missing"
			continue
		fi
		# The harness prints TAP 13 / KTAP: nest it as a subtest, named
		# as KTAP wants (so that a short run is seen as short).
		# shellcheck disable=SC2086 # $args: options, split on purpose
		{ ./"$p" $args 2>&1; echo $? >"$rcfile"; } |
			sed -u -e 's/^/  /' -e "s/^  TAP version [0-9]*\$/&\\n  # Subtest: $name/"
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
if [ -r "$refused/trace" ]; then
	echo "=== task_isolation_refused, last 30 ==="
	grep -v '^#' "$refused/trace" | tail -n 30
	echo "=== end task_isolation_refused ==="
fi
