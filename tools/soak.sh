#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The soak (make soak): isolated tasks held for a long window under a real
# housekeeping load, on stock 6.12 and on the series, Debian's config, two
# NUMA nodes; every IPI, CSD and irq_work aimed at the isolated CPUs
# counted by callback, every loss by cause.
. "$(dirname "$0")/lib.sh"

usage() {
	cat <<EOF
usage: tools/soak.sh [--duration S] [--arch "x86_64 arm64"] [--no-build]
                     [--kernels "stock series"] [--report RUNDIR] [--timeout S]

Builds (incrementally) two kernels per architecture from Debian's config of
the pinned version (tools/kernel.sh --config debian):
  stock   the pinned base without the series (worktree \$BUILD/bench/base-src)
  series  the series (\$BUILD/linux as checked out), the make check kernel
and boots each on two NUMA nodes (CPUs 0-1 and 2-3) with the boot tests'
command line (CPU 0 housekeeping, 1-3 isolated).  In the guest
(test/bench/soak-run.sh) one task per isolated CPU polls its own memory
for --duration seconds (on the series: isolated, SIGUSR1 caught, isolated
again after each loss; on stock: a plain nohz_full task) while CPU 0 runs
stress-ng (fork, exec, mmap, vm, pthread, sock, timer, iomix, unshare,
seccomp), hackbench, trace event switches and trace buffer resizes,
and sysctl reads and writes (stat_refresh, drop_caches, compact_memory,
sysctl -a), after the documented admin steps (device interrupts to CPU 0,
vm.compact_unevictable_allowed=0).  Admin actions that reach every CPU by
design (set_event_pid, overcommit_memory=2, CPU hotplug, MSR reads) are
not in the load: each has a test of the suite.
Counted in the window: the ipi_send_cpu, ipi_send_cpumask and
csd_queue_cpu events aimed at CPUs 1-3, by callback; the interrupts CPUs
1-3 took (/proc/interrupts, /proc/softirqs); the losses by cause
(task_isolation_lost).  A progress line every 30 s.
Writes \$BUILD/soak/<time>/results.md, results.csv and soak.png (and
results.raw, each console under <arch>-<kernel>/), prints the table.

--duration S   the window, seconds (default: \$DURATION, else 600)
--arch LIST    architectures (default: x86_64 arm64)
--no-build     use the kernels already built (error if one is missing)
--kernels LIST only these kernels (stock, series; a one-sided run has
               no comparison: for iterating on the guest side)
--report DIR   only regenerate DIR's report from its results.raw
--timeout S    per boot (default: the window + 900 s)
Environment: BUILD, JOBS, TI_CACHE as for the other tools.
Exit codes: 0 the soak ran and the series lost isolation to nothing
unexplained, 1 a boot failed, gave no results, its guest side reported an
error (trace buffer overrun, a holder that could not isolate again, no
task isolation on the series) or the series had unexplained losses (all
named in the report), 2 usage, 3 missing tool, 5 missing input.
EOF
}

SOAK_ARCHES="x86_64 arm64"
duration=${DURATION:-600} arches=$SOAK_ARCHES kernels="stock series" build=1 report="" timeout=""
while [ $# -gt 0 ]; do
	case $1 in
	--duration) need_value "$@"; duration=$2; shift 2 ;;
	--arch) need_value "$@"; arches=$2; shift 2 ;;
	--no-build) build=0; shift ;;
	--kernels) need_value "$@"; kernels=$2; shift 2 ;;
	--report) need_value "$@"; report=$2; shift 2 ;;
	--timeout) need_value "$@"; timeout=$2; shift 2 ;;
	-h | --help) usage; exit 0 ;;
	*) bad_usage "unknown option: $1" ;;
	esac
done
case $duration in '' | *[!0-9]* | 0) bad_usage "--duration wants seconds, not '$duration'" ;; esac
case $timeout in *[!0-9]* | 0) bad_usage "--timeout wants seconds, not '$timeout'" ;; esac
for k in $kernels; do
	case $k in stock | series) ;; *) bad_usage "--kernels: stock and/or series, not $k" ;; esac
done
for a in $arches; do
	case " $SOAK_ARCHES " in *" $a "*) ;; *) bad_usage "--arch: $SOAK_ARCHES, not $a" ;; esac
done

need_tools python3
report_py() {	# report_py RUNDIR: the report; exit status 1 if the series lost
	python3 "$TOP/tools/soak-report.py" --raw "$1/results.raw" --outdir "$1"
}
if [ -n "$report" ]; then
	[ -f "$report/results.raw" ] || die $E_INPUT "no $report/results.raw"
	report_py "$report" || true
	exit 0
fi
need_tools git mke2fs gnuplot
[ -d "$TREE/.git" ] || die $E_INPUT "no kernel tree in $TREE (run: make tree)"

run=$BUILD/soak/$(date +%Y%m%d-%H%M%S)
mkdir -p "$run"
LOGDIR=$run
start_log soak
raw=$run/results.raw
: >"$raw"
isolate=1-3 expanded=1,2,3 hk=0 cpus=4 nodes=2
rec() { echo "BENCH $*" >>"$raw"; }
enc() { python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "$1"; }
rec "part=meta date=$(enc "$(date -u +%Y-%m-%dT%H:%M:%SZ)") duration_s=$duration arches=$(enc "$arches") isolated=$isolate nodes=$nodes host_cpus=$(nproc)"

base_worktree	# lib.sh: $BENCH_BASE_SRC

# The kernels: stock from the base worktree, the series as make check
# builds it (same object directory: nothing is built twice).
kernel_src() { [ "$1" = stock ] && echo "$BENCH_BASE_SRC" || echo "$TREE"; }
kernel_obj() { [ "$1" = stock ] && bench_obj_dir "$2" base-debian || obj_dir "$2" debian; }
build_kernel() {	# build_kernel ARCH LABEL
	local arch=$1 label=$2 src obj image args=()
	src=$(kernel_src "$label") obj=$(kernel_obj "$label" "$arch")
	image=$(kernel_image "$arch" debian "$obj")
	if [ $build = 0 ]; then
		[ -f "$image" ] || die $E_INPUT "no $image (run without --no-build)"
	else
		# The base has neither the option nor the deferral of IPIs to CPUs
		# in user space that configs/*.config asks for with it: say so, or
		# the fragment check stops.
		[ "$label" = series ] ||
			args=(--set CONFIG_TASK_ISOLATION=n --set CONFIG_CONTEXT_TRACKING_WORK=n)
		progress "$arch-$label: building from $src (incremental; log: $run/kernel-$arch-$label.log)"
		"$TOP/tools/kernel.sh" --arch "$arch" --config debian --src "$src" --obj "$obj" \
			"${args[@]}" >"$run/kernel-$arch-$label.log" 2>&1 || {
			tail -n 5 "$run/kernel-$arch-$label.log" >&2
			die $E_FAIL "$arch-$label kernel build failed; see $run/kernel-$arch-$label.log"
		}
	fi
	rec "part=version arch=$arch kernel=$label src=$(git -C "$src" rev-parse --short=12 HEAD)$(git -C "$src" diff --quiet HEAD || echo -dirty) config_sha256=$(sha256sum "$obj/.config" | cut -c1-16)"
}

boot() {	# boot ARCH LABEL
	local arch=$1 label=$2 dir image to attempt console artefact bad
	dir=$run/$arch-$label
	image=$(kernel_image "$arch" debian "$(kernel_obj "$label" "$arch")")
	mkdir -p "$dir/disk"
	install -m 0755 "$run/ti_bench-$arch" "$dir/disk/ti_bench"
	install -m 0755 "$TOP/test/bench/soak-run.sh" "$dir/disk/run.sh"
	printf 'HK=%s\nISOLATE=%s\nISOLATE_EXPANDED=%s\nDURATION=%s\n' \
		"$hk" "$isolate" "$expanded" "$duration" >"$dir/disk/soak.conf"
	mke2fs -q -t ext4 -d "$dir/disk" "$dir/soak.img" 16M || die $E_FAIL "mke2fs of the soak disk failed"
	QEMU_NODES=$nodes qemu_argv "$arch" "$image" "$cpus" "$(ti_cmdline "$arch" "$isolate")" \
		"$(rootfs_image "$arch"),snapshot=on" "$dir/soak.img,readonly=on"
	printf '%q ' "${QEMU_ARGV[@]}" >"$dir/qemu-cmdline"
	to=${timeout:-$((duration + 900))}
	console=$dir/console.log
	for attempt in 1 2 3; do
		progress "booting $arch-$label, $duration s window (timeout ${to} s); console: $console"
		QEMU_WATCH_RE='^SOAK|ti-init' QEMU_WATCH_EVERY=30 qemu_watch "$console" "$to" 300
		artefact=$(emulator_artefact "$console")	# lib.sh
		[ -n "$artefact" ] && [ -z "$QEMU_VERDICT" ] || break
		if [ $attempt = 3 ]; then
			QEMU_VERDICT="$artefact on 3 boots (host overloaded?)"
			break
		fi
		progress "$artefact (host too busy): booting again"
		mv "$console" "$console.attempt$attempt"
	done
	tr -d '\r' <"$console" | grep -a '^BENCH part=' |
		sed "s/^BENCH /BENCH arch=$arch kernel=$label /" >>"$raw" || true
	bad=$(console_reports "$console")	# lib.sh
	grep -aq '^BENCH part=done' <(tr -d '\r' <"$console") || QEMU_VERDICT=${QEMU_VERDICT:-no results}
	rec "part=boot arch=$arch kernel=$label verdict=$(enc "${QEMU_VERDICT:-ok}") reports=$(enc "${bad:--}")"
	if [ -n "$QEMU_VERDICT" ]; then
		msg "$arch-$label: $QEMU_VERDICT (console: $console)"
		failed=$((failed + 1))
	fi
}

failed=0
t0=$(date +%s)
for arch in $arches; do
	arch_facts "$arch"
	need_tools "$QEMU" "${CROSS}gcc"
	for label in $kernels; do build_kernel "$arch" "$label"; done
	if [ ! -f "$(rootfs_image "$arch")" ]; then
		progress "building the $arch rootfs"
		"$TOP/tools/rootfs.sh" --arch "$arch" --config debian >"$run/rootfs-$arch.log" 2>&1 ||
			die $E_FAIL "rootfs for $arch failed; see $run/rootfs-$arch.log"
	fi
	"${CROSS}gcc" -static -O2 -Wall -isystem "$(kernel_obj series "$arch")/usr/include" \
		-o "$run/ti_bench-$arch" "$TOP/test/bench/ti_bench.c" -lpthread \
		>"$run/ti_bench-$arch.log" 2>&1 ||
		die $E_FAIL "test/bench/ti_bench.c does not build for $arch; see $run/ti_bench-$arch.log"
	for label in $kernels; do boot "$arch" "$label"; done
done
rec "part=meta duration_total_s=$(($(date +%s) - t0))"

progress "writing $run/results.{md,csv} and soak.png"
lost=0
report_py "$run" || lost=$?
[ "$lost" -le 1 ] || die $E_FAIL "the report generator failed"
cat "$run/results.md"
progress "done in $(($(date +%s) - t0)) s: $run"
[ $failed = 0 ] || die $E_FAIL "$failed boot(s) failed or gave no results (see above)"
[ "$lost" = 0 ] || die $E_FAIL "unexplained losses or guest errors on the series: see the verdict in $run/results.md"
