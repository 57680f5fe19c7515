#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Guest side of tools/bench.sh: installed as run.sh on the bench disk, run
# by /sbin/ti-init.  Like test/run.sh it sets nothing up beyond the boot
# line: the fair server stays on, and both kernels show what it costs.  It
# runs one part of the benchmark with ti_bench and prints "BENCH ..." lines
# on the console, then the guest dmesg (the "task_isolation lost due to
# ..." lines) between markers.
cd "$(dirname "$0")" || exit 1
# bench.conf (from tools/bench.sh): PART=quality|cost, HK=0, ISOLATE_EXPANDED=1,2,3,
# WINDOW=<s>, ROWS="<row> ...", COST_N=<n>, REPS=<n>, TRIALS=<n>
. ./bench.conf

loglevel=$(cut -f1 /proc/sys/kernel/printk 2>/dev/null)
[ "${loglevel:-0}" -ge 5 ] 2>/dev/null || loglevel=7
dmesg -n 1 2>/dev/null

enc() { printf '%s' "$1" | od -An -tx1 -v | tr -s ' \n' ' ' | sed -e 's/^ //' -e 's/ $//' -e 's/ /%/g' -e 's/^/%/'; }
iso1=${ISOLATE_EXPANDED%%,*}
echo "BENCH part=info uname=$(enc "$(uname -r)") machine=$(uname -m) cpus=$(nproc --all) version=$(enc "$(cat /proc/version)") cmdline=$(enc "$(cat /proc/cmdline)") task_isolation=$(enc "$(cat /sys/devices/system/cpu/task_isolation 2>/dev/null || echo none)")"

case $PART in
quality)
	# shellcheck disable=SC2086 # ROWS is a word list
	./ti_bench quality "$HK" "$iso1" "$WINDOW" $ROWS
	;;
cost)
	./ti_bench cost "$HK" "$iso1" "$COST_N" "$REPS"
	./ti_bench scale "$iso1" "$TRIALS"
	./ti_bench scale "$ISOLATE_EXPANDED" "$TRIALS"
	;;
*)
	echo "BENCH part=error reason=unknown%20part%20$PART"
	;;
esac
echo "BENCH part=done rc=$?"
echo "=== guest dmesg ==="
dmesg -n "$loglevel" 2>/dev/null
dmesg --color=never
echo "=== end guest dmesg ==="
