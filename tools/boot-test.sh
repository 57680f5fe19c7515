#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Boot a test kernel under QEMU (TCG), run the selftest suite in the guest and
# judge the boot from its serial console.
. "$(dirname "$0")/lib.sh"

usage() {
	cat <<EOF
usage: tools/boot-test.sh [--arch x86_64|arm64|arm] [--kernel IMAGE]
                          [--config ${CONFIGS// /|}] [--cpus N] [--isolate LIST]
                          [--nodes N]
                          [--extra PROGRAM.c|BINARY]... [--timeout S]
                          [--hang S] [--hold S] [--no-suite] [--allow-skip NAME]...
                          [--tests "NAME ..."] [--bootargs "ARGS"] [--domain-only LIST2]
                          [--stress S [--stress-hold S]]

Boots IMAGE (default: what 'make kernel ARCH=<arch> CONFIG=<config>' built)
with the cached Debian 12 image of 'make rootfs ARCH=<arch>' and a test
disk made from test/ (built here for <arch>, statically), with N vCPUs
(default 4): CPU 0 does housekeeping, LIST (default 1-<N-1>) is isolated
with isolcpus=nohz,domain,managed_irq,LIST nohz_full=LIST rcu_nocbs=LIST and
no irqaffinity= (plus the bootargs of tools/arches: tsc=nowatchdog on x86_64).  A kernel
built with CONFIG_NUMA boots on two NUMA nodes (--nodes, default 2, else
1): the CPUs and memory split in halves, CPU 0 on node 0.
The guest prints KTAP on the serial console; each --extra program (a C file
is cross-compiled) runs as a test of its own: exit 0 pass, 4 skip.  Where
the architecture has a 32-bit user space (the compat column of
tools/arches), the suite is also built for it and its prctl fuzz
(prctl_fuzz.*) runs as task_isolation_test32.
Nothing is built but the test programs: a missing kernel or rootfs is an
error that names the make target to run.

The boot fails (exit 1, reason on the last line) on a failed test, a
missing plan or fewer results than planned (in the suite too), a missing
suite, /sys/devices/system/cpu/task_isolation not listing exactly LIST
(test isolated_cpus_match_cmdline), a SKIP that test/expected-skips does
not allow for <arch> and the kernel's .config (an --extra program's too),
a timeout (--timeout,
default 900 s; the guest is killed), no console output for --hang seconds
(default 300), a panic, Oops, BUG, WARNING, lockdep, KASAN, UBSAN, RCU
stall or hung task report anywhere on the console (power-off included).
Console log, KTAP, JSON and JUnit XML are kept in \$BUILD/boot/<arch>-<config>-<time>/.

--hold S          how long the "isolation holds" tests spin (default 10)
--no-suite        run only the --extra programs
--tests "NAME..." run only these tests of the suite (kselftest -t NAME: the
                  test's name without its fixture), for iterating on them
--bootargs "ARGS" instead of tools/arches' bootargs ("" for none)
--domain-only LIST2  also isolate LIST2 from the scheduler domains, without
                  nohz_full: isolcpus=domain,managed_irq,LIST,LIST2 (no nohz
                  flag) nohz_full=LIST, for the tests of CPUs that keep
                  their tick (slow_noise.domain_isolated_cpu_pulls_no_timers)
--stress S        stress mode: instead of the suite, its stress.* tests:
                  S seconds of entering and leaving isolation on every
                  isolated CPU under disturbance, then one task holding
                  isolation for --stress-hold seconds (default S) under
                  the housekeeping load that must leave it alone
--allow-skip NAME let test NAME (e.g. state_visible, or an --extra
                  program's name) SKIP in this run; repeatable
Exit codes: 0 passed, 1 failed, 2 usage, 3 missing tool, 5 missing input.
EOF
}

arch=x86_64 kernel="" variant=default cpus=4 isolate="" timeout=900 hang=300 nodes="" domain_only=""
hold=10 suite=1 tests="" bootargs=() extras=() allow_skip=() stress=0 stress_hold=0 timeout_set=0 hang_set=0
while [ $# -gt 0 ]; do
	case $1 in
	--arch) need_value "$@"; arch=$2; shift 2 ;;
	--kernel) need_value "$@"; kernel=$2; shift 2 ;;
	--config) need_value "$@"; variant=$2; shift 2 ;;
	--cpus) need_value "$@"; cpus=$2; shift 2 ;;
	--isolate) need_value "$@"; isolate=$2; shift 2 ;;
	--nodes) need_value "$@"; nodes=$2; shift 2 ;;
	--domain-only) need_value "$@"; domain_only=$2; shift 2 ;;
	--extra) need_value "$@"; extras+=("$2"); shift 2 ;;
	--timeout) need_value "$@"; timeout=$2; timeout_set=1; shift 2 ;;
	--hang) need_value "$@"; hang=$2; hang_set=1; shift 2 ;;
	--hold) need_value "$@"; hold=$2; shift 2 ;;
	--no-suite) suite=0; shift ;;
	--bootargs) [ $# -ge 2 ] && [ "${2#-}" = "$2" ] || bad_usage "$1 needs a value (\"\" for none)"
		bootargs=("$2"); shift 2 ;;
	--tests) need_value "$@"; tests=$2; shift 2 ;;
	--stress) need_value "$@"; stress=$2; shift 2 ;;
	--stress-hold) need_value "$@"; stress_hold=$2; shift 2 ;;
	--allow-skip) need_value "$@"; allow_skip+=(--allow-skip "$2"); shift 2 ;;
	-h | --help) usage; exit 0 ;;
	*) bad_usage "unknown option: $1" ;;
	esac
done
arch_facts "$arch"
[ "$cpus" -ge 2 ] 2>/dev/null || die $E_USAGE "--cpus must be at least 2"
isolate=${isolate:-1-$((cpus - 1))}
# Expand "1-3,5" into "1,2,3,5" for the guest.
cpus_of() { echo "$1" | tr ',' '\n' | while IFS=- read -r a b; do seq "$a" "${b:-$a}"; done; }
expanded=$(cpus_of "$isolate" | paste -sd, -)
case ",$expanded," in *,0,*) die $E_USAGE "CPU 0 is the housekeeping CPU; do not isolate it" ;; esac
if [ -n "$domain_only" ]; then
	[[ $domain_only =~ ^[0-9]+(-[0-9]+)?(,[0-9]+(-[0-9]+)?)*$ ]] ||
		die $E_USAGE "--domain-only takes a CPU list (1-3,5), not '$domain_only'"
	for c in $(cpus_of "$domain_only"); do
		[ "$c" -gt 0 ] && [ "$c" -lt "$cpus" ] ||
			die $E_USAGE "--domain-only: CPU $c is CPU 0 or not among the $cpus CPUs"
		case ",$expanded," in *,"$c",*) die $E_USAGE "--domain-only: CPU $c is in --isolate too" ;; esac
	done
fi
for n in "$stress" "$stress_hold"; do
	[[ $n =~ ^[0-9]+$ ]] || die $E_USAGE "--stress and --stress-hold take seconds, not '$n'"
done
if [ "$stress" -gt 0 ]; then
	[ $suite = 1 ] || die $E_USAGE "--stress runs the suite's stress tests: not with --no-suite"
	[ "$stress_hold" -gt 0 ] || stress_hold=$stress
	# Both stress tests, the boot and some slack (TCG under a busy host)
	[ $timeout_set = 1 ] || timeout=$((900 + stress + stress_hold))
	# The stress tests print a line a minute; a hold checks little in between
	[ $hang_set = 1 ] || hang=600
elif [ "$stress_hold" -gt 0 ]; then
	die $E_USAGE "--stress-hold needs --stress"
fi

need_tools "$QEMU" mke2fs python3
check_config "$variant"
kernel=${kernel:-$(kernel_image "$arch" "$variant")}
[ -f "$kernel" ] || die $E_INPUT "no kernel image $kernel: run 'make kernel ARCH=$arch CONFIG=$variant' (or pass --kernel)"
kernel=$(realpath "$kernel")
rootfs=$(rootfs_image "$arch")
[ -f "$rootfs" ] || die $E_INPUT "no rootfs image for $arch: run 'make rootfs ARCH=$arch'"
objdir=$(dirname "$kernel")
while [ ! -f "$objdir/.config" ] && [ "$objdir" != / ]; do objdir=$(dirname "$objdir"); done
hdrs=$objdir/usr/include
if [ -z "$nodes" ]; then
	nodes=1
	! grep -qx 'CONFIG_NUMA=y' "$objdir/.config" 2>/dev/null || nodes=2
fi
[[ $nodes =~ ^[1-9][0-9]*$ ]] || die $E_USAGE "--nodes takes a number of NUMA nodes, not '$nodes'"

mode=$variant
[ "$stress" = 0 ] || mode=$variant-stress
run=$BUILD/boot/$arch-$mode-$(date +%Y%m%d-%H%M%S)
mkdir -p "$run/disk/extra"
LOGDIR=$run
start_log boot-test

# 1. The test disk: the suite, --extra programs, the runner and its config.
cc=${CROSS}gcc
need_tools "$cc"
if [ $suite = 1 ]; then
	progress "building the selftest suite for $arch"
	make -s -C "$TOP/test" CC="$cc" OUTPUT="$run/disk" KHDR_INCLUDES="-isystem $hdrs" \
		SELFTESTS="$TREE/tools/testing/selftests" >"$run/test-build.log" 2>&1 ||
		die $E_FAIL "the selftest suite does not build; see $run/test-build.log"
	# The 32-bit build uses its own C library's kernel headers: those of
	# a 64-bit kernel do not fit it (the suite defines what they lack).
	if [ -n "$COMPAT_CROSS" ] && [ "$stress" = 0 ]; then
		progress "building the selftest suite for $arch's 32-bit user space (${COMPAT_CROSS}gcc)"
		need_tools "${COMPAT_CROSS}gcc"	# from 'make deps'
		mkdir -p "$run/compat"
		make -s -C "$TOP/test" CC="${COMPAT_CROSS}gcc" OUTPUT="$run/compat" KHDR_INCLUDES= \
			SELFTESTS="$TREE/tools/testing/selftests" >>"$run/test-build.log" 2>&1 &&
			install -m 0755 "$run/compat/task_isolation_test" "$run/disk/task_isolation_test32" ||
			die $E_FAIL "the 32-bit selftest suite does not build; see $run/test-build.log"
	fi
fi
for x in "${extras[@]}"; do
	[ -f "$x" ] || die $E_INPUT "--extra $x: no such file"
	name=$(basename "$x")
	case $x in
	*.c)
		name=${name%.c}
		"$cc" -static -O2 -Wall -isystem "$hdrs" -I "$TOP/test" -o "$run/disk/extra/$name" "$x" \
			-lpthread >>"$run/test-build.log" 2>&1 ||
			die $E_FAIL "--extra $x does not build; see $run/test-build.log"
		;;
	*) install -m 0755 "$x" "$run/disk/extra/$name" ;;
	esac
done
install -m 0755 "$TOP/test/run.sh" "$run/disk/run.sh"
printf 'ISOLATE=%s\nISOLATE_EXPANDED=%s\nHOLD=%s\nSUITE=%s\nSTRESS=%s\nSTRESS_HOLD=%s\nTESTS="%s"\n' \
	"$isolate" "$expanded" "$hold" "$suite" "$stress" "$stress_hold" "$tests" >"$run/disk/ti.conf"
mke2fs -q -t ext4 -d "$run/disk" "$run/tests.img" 64M || die $E_FAIL "mke2fs of the test disk failed"

# 2. Boot.
boot_once() {
	local start
	start=$(date +%s)
	progress "booting $(basename "$kernel") ($arch, $cpus cpus on $nodes NUMA node(s), isolated $isolate${domain_only:+, scheduler domains only $domain_only}); console: $console"
	QEMU_WATCH_RE='^ *(not )?ok [0-9]+|ti-init' QEMU_WATCH_EVERY=30 \
		qemu_watch "$console" "$timeout" "$hang"	# lib.sh
	verdict=$QEMU_VERDICT
	# A panic is named by the judge, from the console, with its message
	[ "$verdict" != "kernel panic" ] || verdict=""
	progress "guest stopped after $(($(date +%s) - start)) s"
}

cmdline=$(DOMAIN_ONLY=$domain_only ti_cmdline "$arch" "$isolate" "${bootargs[@]}")	# lib.sh; plus tools/arches' bootargs
QEMU_NODES=$nodes qemu_argv "$arch" "$kernel" "$cpus" "$cmdline" "$rootfs,snapshot=on" "$run/tests.img,readonly=on"
console=$run/console.log
printf '%q ' "${QEMU_ARGV[@]}" >"$run/qemu-cmdline"
# An emulator artefact (emulator_artefact in lib.sh) is not the kernel under
# test: boot again (at most twice more) rather than report the tests it breaks,
# or the hang or timeout it may cause (a guest without a working local APIC
# timer can stall).
for attempt in 1 2 3; do
	boot_once
	artefact=$(emulator_artefact "$console")
	[ -n "$artefact" ] || break
	if [ $attempt = 3 ]; then
		verdict="$artefact on 3 boots (host overloaded?)${verdict:+; last boot: $verdict}"
		break
	fi
	progress "$artefact (host too busy)${verdict:+, then $verdict}: booting again"
	verdict=""
	mv "$console" "$console.attempt$attempt"
done

# 3. Judge: the allowed SKIPs are in test/expected-skips.
report_args=(--arch "$arch" --isolated-cpus "$expanded" "${allow_skip[@]}")
[ ! -f "$objdir/.config" ] || report_args+=(--kconfig "$objdir/.config")
[ $suite = 1 ] || report_args+=(--no-suite)
python3 "$TOP/tools/ktap-report.py" --console "$console" --outdir "$run" \
	--suite-name "task_isolation-$arch-$variant" --verdict "$verdict" "${report_args[@]}"
