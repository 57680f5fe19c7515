#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The benchmark (make bench): isolation quality and cost of the series side
# by side with the stock 6.12 base, same config, command line and rootfs.
. "$(dirname "$0")/lib.sh"

usage() {
	cat <<EOF
usage: tools/bench.sh [--quick] [--arch "x86_64 arm64"] [--parts quality,cost]
                      [--window S] [--rows "ROW ..."] [--no-build]
                      [--report RUNDIR] [--timeout S]

Builds (only when their source or config changed) three kernels per
architecture from configs/common.config + <arch>.config + bench.config
(+ <arch>-bench.config where it exists):
  base  the pinned base without the series (worktree \$BUILD/bench/base-src
        of branch base of \$BUILD/linux), CONFIG_TASK_ISOLATION=n
  off   the series (\$BUILD/linux as checked out) with CONFIG_TASK_ISOLATION=n
  on    the series with CONFIG_TASK_ISOLATION=y
and boots each under QEMU with the boot tests' command line (CPU 0
housekeeping, 1-3 isolated) and rootfs, with test/bench/ on the test disk:
  part 1 "quality" (base, on): a task pinned to CPU 1 spins in user space
      (on "on": task isolation, SIGUSR1 caught) for the window while CPU 0
      runs one disturber per row; interrupts on CPU 1 by type, losses and
      their reported cause;
  part 2 "cost" (base, off, on; QEMU -icount shift=0,sleep=off): guest
      instructions per getppid() on CPU 0 and CPU 1, per cross-CPU call and
      wakeup IPI with no task isolated, per isolation enter+leave;
  part 3 "scale" (same boots as part 2): time until 1 and 3 CPUs are
      isolated, entering at once (EAGAIN retries included).
Writes \$BUILD/bench/<time>/results.md, results.csv and interrupts.png (and
results.raw, every console under <arch>-<kernel>-<part>/), prints the table.

--quick        10 s window, fewer repetitions, x86_64 only (default: 60 s,
               x86_64 and arm64)
--arch LIST    architectures (x86_64, arm64)
--parts LIST   quality and/or cost (cost includes scale)
--window S     seconds per part 1 row
--rows LIST    only these part 1 rows (test/bench/ti_bench.c: rows[])
--no-build     use the kernels already built (error if one is missing)
--report DIR   only regenerate DIR's report from its results.raw
--timeout S    per boot (default: from the window and row count)
Environment: BUILD, JOBS, TI_CACHE as for the other tools.
Exit codes: 0 the benchmark ran (targets missed are reported, not fatal),
1 a boot failed or gave no results, 2 usage, 3 missing tool, 5 missing input.
EOF
}

# The architectures the benchmark knows (test/bench/ti_bench.c's expectations
# and bench-report.py's notes); their facts come from tools/arches.
BENCH_ARCHES="x86_64 arm64"

quick=0 arches="" parts=quality,cost window="" rows="" build=1 report="" timeout=""
while [ $# -gt 0 ]; do
	case $1 in
	--quick) quick=1; shift ;;
	--arch) need_value "$@"; arches=$2; shift 2 ;;
	--parts) need_value "$@"; parts=$2; shift 2 ;;
	--window) need_value "$@"; window=$2; shift 2 ;;
	--rows) need_value "$@"; rows=$2; shift 2 ;;
	--no-build) build=0; shift ;;
	--report) need_value "$@"; report=$2; shift 2 ;;
	--timeout) need_value "$@"; timeout=$2; shift 2 ;;
	-h | --help) usage; exit 0 ;;
	*) bad_usage "unknown option: $1" ;;
	esac
done

if [ $quick = 1 ]; then
	arches=${arches:-x86_64} window=${window:-10} cost_n=20000 reps=5 trials=5
else
	arches=${arches:-$BENCH_ARCHES} window=${window:-60} cost_n=100000 reps=9 trials=15
fi
case $window in '' | *[!0-9]* | 0) bad_usage "--window wants seconds, not '$window'" ;; esac
case $timeout in *[!0-9]* | 0) bad_usage "--timeout wants seconds, not '$timeout'" ;; esac
for a in $arches; do
	case " $BENCH_ARCHES " in *" $a "*) ;; *) bad_usage "--arch: $BENCH_ARCHES, not $a" ;; esac
done
for p in ${parts//,/ }; do
	case $p in quality | cost) ;; *) bad_usage "--parts: quality and/or cost, not $p" ;; esac
done

need_tools python3
if [ -n "$report" ]; then
	[ -f "$report/results.raw" ] || die $E_INPUT "no $report/results.raw"
	python3 "$TOP/tools/bench-report.py" --raw "$report/results.raw" --outdir "$report"
	msg "wrote $report/results.md, results.csv, interrupts.png"
	exit 0
fi
need_tools git mke2fs gnuplot
[ -d "$TREE/.git" ] || die $E_INPUT "no kernel tree in $TREE (run: make tree)"

stamp=$(date +%Y%m%d-%H%M%S)
run=$BENCH_DIR/$stamp
mkdir -p "$run"
LOGDIR=$run
start_log bench
raw=$run/results.raw
: >"$raw"
isolate=1-3 expanded=1,2,3 hk=0 cpus=4
nrows=$(echo "$rows" | wc -w)
[ "$nrows" -gt 0 ] || nrows=$(grep -c '^	{ "' "$TOP/test/bench/ti_bench.c")
rec() { echo "BENCH $*" >>"$raw"; }
enc() { python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "$1"; }

arch_facts "${arches%% *}"	# QEMU: one version for all its system emulators
rec "part=meta date=$(enc "$(date -u +%Y-%m-%dT%H:%M:%SZ)") quick=$quick window_s=$window arches=$(enc "$arches") not_run=$(enc "$(for a in $BENCH_ARCHES; do case " $arches " in *" $a "*) ;; *) printf '%s ' "$a" ;; esac; done)") qemu=$(enc "$("$QEMU" --version 2>/dev/null | head -n 1)") host_cpus=$(nproc) isolated=$isolate"

# 1. Sources: the base as a worktree of $TREE.
base_src=$BENCH_BASE_SRC
base_worktree
series_head=$(git -C "$TREE" rev-parse HEAD)
series_branch=$(git -C "$TREE" symbolic-ref -q --short HEAD || echo detached)
[ "$series_head" = "$(git -C "$TREE" rev-parse -q --verify "refs/heads/$TIP_BRANCH")" ] ||
	msg "warning: $TREE has $series_branch checked out, not $TIP_BRANCH: measuring that"

# 2. Kernels, rebuilt only when the source or the config changed.
bench_fragments() {	# bench_fragments ARCH: the benchmark's config additions
	echo "$TOP/configs/bench.config"
	[ ! -f "$TOP/configs/$1-bench.config" ] || echo "$TOP/configs/$1-bench.config"
}
kernel_src() { [ "$1" = base ] && echo "$base_src" || echo "$TREE"; }
kernel_sets() {	# kernel_sets ARCH LABEL
	local s
	bench_fragments "$1" | xargs cat | sed -e 's/#.*//' -e '/^[[:space:]]*$/d' |
		while read -r s; do printf -- '--set\n%s\n' "$s"; done
	printf -- '--set\nCONFIG_TASK_ISOLATION=%s\n' "$([ "$2" = on ] && echo y || echo n)"
	# The series' deferral of IPIs to CPUs in user space (configs/<arch>.config
	# asks for it) comes with the option: base has no such symbol, and "off"
	# must cost what base does.
	[ "$2" = on ] || printf -- '--set\nCONFIG_CONTEXT_TRACKING_WORK=n\n'
}
source_state() {	# what a rebuild depends on, as one hash
	local src=$1 frags
	mapfile -t frags < <(config_fragments "$2" default)
	{
		git -C "$src" rev-parse HEAD
		git -C "$src" status --porcelain --untracked-files=no
		git -C "$src" diff HEAD
		bench_fragments "$2" | xargs cat "${frags[@]}" "$TOP/tools/kernel.sh"
		echo "$3"
	} | sha256sum | cut -c1-16
}
build_kernel() {	# build_kernel ARCH LABEL
	local arch=$1 label=$2 src obj state sets image
	src=$(kernel_src "$label") obj=$(bench_obj_dir "$arch" "$label")
	mapfile -t sets < <(kernel_sets "$arch" "$label")
	image=$(kernel_image "$arch" default "$obj")
	state=$(source_state "$src" "$arch" "$label")
	if [ $build = 0 ]; then
		[ -f "$image" ] || die $E_INPUT "no $image (run without --no-build)"
	elif [ -f "$image" ] && [ "$(cat "$obj/bench.state" 2>/dev/null)" = "$state" ]; then
		progress "$arch-$label: up to date ($obj)"
	else
		progress "$arch-$label: building from $src (log: $obj/build.log)"
		"$TOP/tools/kernel.sh" --arch "$arch" --src "$src" --obj "$obj" --keys-advisory "${sets[@]}" \
			>"$run/kernel-$arch-$label.log" 2>&1 || {
			tail -n 5 "$run/kernel-$arch-$label.log" >&2
			die $E_FAIL "$arch-$label kernel build failed; see $run/kernel-$arch-$label.log"
		}
		echo "$state" >"$obj/bench.state"
	fi
	rec "part=version arch=$arch kernel=$label src=$(git -C "$src" rev-parse --short=12 HEAD)$(git -C "$src" diff --quiet HEAD || echo -dirty) branch=$(enc "$([ "$label" = base ] && echo base || echo "$series_branch")") config_sha256=$(sha256sum "$obj/.config" | cut -c1-16)"
}

# 3. One boot: a disk with the bench program, runner and bench.conf.
boot() {	# boot ARCH LABEL PART
	local arch=$1 label=$2 part=$3 dir obj image rootfs to attempt console
	dir=$run/$arch-$label-$part obj=$(bench_obj_dir "$arch" "$label")
	image=$(kernel_image "$arch" default "$obj")
	mkdir -p "$dir/disk"
	install -m 0755 "$run/ti_bench-$arch" "$dir/disk/ti_bench"
	install -m 0755 "$TOP/test/bench/bench-run.sh" "$dir/disk/run.sh"
	printf 'PART=%s\nHK=%s\nISOLATE_EXPANDED=%s\nWINDOW=%s\nROWS="%s"\nCOST_N=%s\nREPS=%s\nTRIALS=%s\n' \
		"$part" "$hk" "$expanded" "$window" "$rows" "$cost_n" "$reps" "$trials" >"$dir/disk/bench.conf"
	mke2fs -q -t ext4 -d "$dir/disk" "$dir/bench.img" 16M || die $E_FAIL "mke2fs of the bench disk failed"
	rootfs=$(rootfs_image "$arch")
	qemu_argv "$arch" "$image" "$cpus" "$(ti_cmdline "$arch" "$isolate")" \
		"$rootfs,snapshot=on" "$dir/bench.img,readonly=on"
	# shellcheck disable=SC2054 # one QEMU option with commas
	[ "$part" = cost ] && QEMU_ARGV+=(-icount shift=0,sleep=off)
	printf '%q ' "${QEMU_ARGV[@]}" >"$dir/qemu-cmdline"
	if [ "$part" = quality ]; then
		to=${timeout:-$((300 + nrows * (window + 20)))}
	else
		to=${timeout:-1500}
	fi
	console=$dir/console.log
	for attempt in 1 2 3; do
		progress "booting $arch-$label for part $part (timeout ${to} s); console: $console"
		QEMU_WATCH_RE='^BENCH|ti-init' qemu_watch "$console" "$to" 300
		grep -aq 'APIC timer disabled due to verification failure' "$console" || break
		[ -n "$QEMU_VERDICT" ] && break
		if [ $attempt = 3 ]; then
			QEMU_VERDICT="the guest's APIC timer failed verification three times"
			break
		fi
		progress "the guest's APIC timer failed verification: booting again"
		mv "$console" "$console.attempt$attempt"
	done
	tr -d '\r' <"$console" | grep -a '^BENCH part=' |
		sed "s/^BENCH /BENCH arch=$arch kernel=$label boot=$part /" >>"$raw" || true
	local bad
	bad=$(console_reports "$console")	# lib.sh
	if ! grep -aq '^BENCH part=done' <(tr -d '\r' <"$console"); then
		QEMU_VERDICT=${QEMU_VERDICT:-no results}
	fi
	rec "part=boot arch=$arch kernel=$label boot=$part verdict=$(enc "${QEMU_VERDICT:-ok}") reports=$(enc "${bad:--}")"
	if [ -n "$QEMU_VERDICT" ]; then
		msg "$arch-$label part $part: $QEMU_VERDICT (console: $console)"
		failed=$((failed + 1))
	fi
}

failed=0
t0=$(date +%s)
for arch in $arches; do
	arch_facts "$arch"
	need_tools "$QEMU" "${CROSS}gcc"
	labels="base on"
	case ,$parts, in *,cost,*) labels="base off on" ;; esac
	for label in $labels; do build_kernel "$arch" "$label"; done
	if [ ! -f "$(rootfs_image "$arch")" ]; then
		progress "building the $arch rootfs"
		"$TOP/tools/rootfs.sh" --arch "$arch" >"$run/rootfs-$arch.log" 2>&1 ||
			die $E_FAIL "rootfs for $arch failed; see $run/rootfs-$arch.log"
	fi
	"${CROSS}gcc" -static -O2 -Wall -isystem "$(bench_obj_dir "$arch" on)/usr/include" \
		-o "$run/ti_bench-$arch" "$TOP/test/bench/ti_bench.c" -lpthread \
		>"$run/ti_bench-$arch.log" 2>&1 ||
		die $E_FAIL "test/bench/ti_bench.c does not build for $arch; see $run/ti_bench-$arch.log"
	case ,$parts, in *,quality,*)
		boot "$arch" base quality
		boot "$arch" on quality ;;
	esac
	case ,$parts, in *,cost,*)
		boot "$arch" base cost
		boot "$arch" off cost
		boot "$arch" on cost ;;
	esac
done
rec "part=meta duration_s=$(($(date +%s) - t0))"

progress "writing $run/results.{md,csv} and interrupts.png"
python3 "$TOP/tools/bench-report.py" --raw "$raw" --outdir "$run" ||
	die $E_FAIL "the report generator failed"
cat "$run/results.md"
progress "done in $(($(date +%s) - t0)) s: $run"
[ $failed = 0 ] || die $E_FAIL "$failed boot(s) failed or gave no results (see above)"
