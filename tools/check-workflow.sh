#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Prove the fork workflow on a scratch clone: deterministic import, replay,
# idempotence, save/restore, and refusals that lose nothing.
. "$(dirname "$0")/lib.sh"

usage() {
	cat <<EOF
usage: tools/check-workflow.sh [--keep] [--quick] [--rebase VERSION]

Clones this repository (committed state) into \$BUILD/workflow-check and,
with a scratch build directory there, checks as KTAP:
  - 'make tree' imports the pinned base with the pinned id and replays
    every bundle (tip = last topic);
  - a second 'make tree' is fast and changes nothing;
  - an unsaved commit or edit makes 'make tree' refuse (exit 4) and keeps it;
  - 'make save' writes it into a bundle that survives 'rm -rf build';
  - a corrupt bundle, a wrong sha256 and a version apt does not offer each
    fail with exit 5 and a one-line error;
  - FORCE=1 drops unsaved work only after keeping a backup ref and a stash;
  - two restacks in a row (no save between) carry the later topics along;
  - tools/ktap-report.py --self-test: the boot-test judge fails an all-SKIP
    run, a suite with fewer results than planned, a WARNING after the dmesg
    dump, and passes a run with only the SKIPs test/expected-skips allows;
  - tools/soak-report.py --self-test: the soak report's sums and verdict
  - tools/bench-report.py --self-test: the benchmark report keeps n/a
    (config) rows n/a, computes the (b)/(a) ratios and judges the targets;
  - every tools/*.sh rejects an unknown option, and each of its options
    that takes a value when the value is missing, with its usage and exit 2
    (no script runs: the build directory given to them does not exist);
  - every test kernel must have the options of the suite's config that
    its architecture defines (tools/kernel.sh's check, on a fabricated
    tree), and a two-node guest gets a socket, half the CPUs and half the
    memory per node;
  - with --rebase VERSION: 'make rebase' moves the series to that version.
Takes about three minutes (two imports).  --quick runs only the checks that
need no kernel tree (the two self-tests and the option checks), in
seconds.  Prints "N passed, N failed, N skipped"; exit 0 when all pass.
EOF
}
keep=0 quick=0 rebase=""
while [ $# -gt 0 ]; do
	case $1 in
	--keep) keep=1; shift ;;
	--quick) quick=1; shift ;;
	--rebase) need_value "$@"; rebase=$2; shift 2 ;;
	-h | --help) usage; exit 0 ;;
	*) bad_usage "unknown option: $1" ;;
	esac
done
need_tools git
scratch=$BUILD/workflow-check
rm -rf "$scratch"
mkdir -p "$scratch"
start_log check-workflow
git clone -q "$TOP" "$scratch/repo"
R=$scratch/repo
SB=$scratch/build
T=$SB/linux
run() { BUILD=$SB "$@"; }

n=0 failed=0 skipped=0
mapfile -t scripts < <(cd "$R/tools" && ls -- *.sh | grep -vx lib.sh)
# judge, bench and soak reports, suite config, NUMA arguments, --domain-only
# command line: 6; options: one per script
planned=$((6 + ${#scripts[@]}))
[ $quick = 1 ] || planned=$((planned + 11))
[ -n "$rebase" ] && planned=$((planned + 1))
echo "KTAP version 1"
echo "1..$planned"
result() {	# result OK|FAIL NAME [detail]
	n=$((n + 1))
	if [ "$1" = OK ]; then
		echo "ok $n $2"
	else
		failed=$((failed + 1))
		echo "not ok $n $2${3:+ # $3}"
	fi
}
expect_rc() {	# expect_rc RC NAME CMD...: run CMD, compare its exit code
	local want=$1 name=$2 rc=0
	shift 2
	"$@" >"$scratch/out" 2>&1 || rc=$?
	sed 's/^/# /' "$scratch/out" | tail -n 4
	if [ "$rc" = "$want" ]; then result OK "$name"; else result FAIL "$name" "exit $rc, wanted $want"; fi
}

# option_cases SCRIPT: the argument lists SCRIPT must refuse with its usage
# and exit 2, one per line: an unknown option, and each option whose case
# arm takes a value ($2) given without one.
option_cases() {
	echo "--no-such-option"
	{ grep -oE -- '--[a-z-]+\) *(need_value|[a-z_]+\+?=\(?"?\$2)' "$1" || true; } |
		grep -oE -- '^--[a-z-]+' | sort -u || true	# none is fine
	case ${1##*/} in
	topic.sh) printf '%s\n' "add" "add NAME --after" "move NAME" "list extra" ;;
	rebase.sh | selftest-sync.sh) echo "" ;;	# a required argument missing
	esac
}

# 10. Option parsing: every script, bad options and missing values.
check_options() {
	local s cases line args bad rc out
	for s in "${scripts[@]}"; do
		bad="" cases=0
		while IFS= read -r line; do
			read -r -a args <<<"$line"
			cases=$((cases + 1))
			rc=0
			out=$(cd "$R" && BUILD=$scratch/no-build timeout 60 "$R/tools/$s" "${args[@]}" 2>&1) || rc=$?
			if [ $rc != 2 ] || ! grep -q '^usage:' <<<"$out" || grep -q 'unbound variable' <<<"$out"; then
				bad="'${line:-(no arguments)}': exit $rc, $(grep -v '^usage:' <<<"$out" | head -n 1 | cut -c1-60)"
				break
			fi
		done < <(option_cases "$R/tools/$s")
		if [ -z "$bad" ]; then
			result OK "tools/$s refuses bad options and missing values with its usage, exit 2 ($cases case(s))"
		else
			result FAIL "tools/$s refuses bad options and missing values with its usage, exit 2" "$bad"
		fi
	done
}

# 8. The boot-test judge, offline: hand-made console logs (the KTAP parser
# comes from the scratch tree; with --quick from \$BUILD's tree, if any).
check_judge() {
	local name="ktap-report.py --self-test: all-SKIP and short runs fail, allowed SKIPs pass"
	if [ $quick = 0 ]; then
		expect_rc 0 "$name" run python3 "$R/tools/ktap-report.py" --self-test
	elif [ -d "$TREE/.git" ]; then
		expect_rc 0 "$name" env BUILD="$BUILD" python3 "$R/tools/ktap-report.py" --self-test
	else
		skipped=$((skipped + 1))
		result OK "$name # SKIP no kernel tree in $BUILD (make tree)"
	fi
}

# 9. The benchmark report, offline, on fabricated result lines (no tree
# needed: runs with --quick too).
check_bench() {
	expect_rc 0 "bench-report.py --self-test: ratios, n/a (config) rows, targets, PNG" \
		python3 "$R/tools/bench-report.py" --self-test
	expect_rc 0 "soak-report.py --self-test: per-source counts, losses explained or not, PNG" \
		python3 "$R/tools/soak-report.py" --self-test
}

# 11. The suite's config in every test kernel (suite_config_missing, the
# check tools/kernel.sh makes), and the NUMA guest's QEMU arguments, on
# a fabricated tree: an option the architecture defines and the config
# lacks is named, one only another architecture defines is not.
check_suite_config() {
	local t=$scratch/kconfig got want
	mkdir -p "$t/src/init" "$t/src/arch/x86" "$t/src/arch/arm"
	printf 'config FOO\n\tbool "foo"\n' >"$t/src/init/Kconfig"
	printf 'config BAR\n\tbool "bar"\n' >"$t/src/arch/x86/Kconfig"
	printf 'config BAZ\n\tbool "baz"\n' >"$t/src/arch/arm/Kconfig.cpu"
	printf 'CONFIG_FOO=y\nCONFIG_BAR=y\nCONFIG_BAZ=y\n' >"$t/suite.config"
	printf 'CONFIG_FOO=y\n# CONFIG_BAR is not set\n' >"$t/.config"
	got=$( (SUITE_CONFIG=$t/suite.config; . "$R/tools/lib.sh"; SUITE_CONFIG=$t/suite.config
		suite_config_missing "$t/src" x86_64 "$t/.config") 2>&1)
	want="  CONFIG_BAR: wanted y, got n"
	if [ "$got" = "$want" ]; then
		result OK "every test kernel has the suite's config options its architecture defines (x86_64: BAR named, arm's BAZ not)"
	else
		result FAIL "every test kernel has the suite's config options its architecture defines" "got '$got'"
	fi
	got=$( (. "$R/tools/lib.sh"; QEMU_NODES=2 qemu_argv arm64 /k 4 x /d; echo "${QEMU_ARGV[*]}") 2>&1)
	case $got in
	*"-smp 4,sockets=2,cores=2,threads=1 "*"-numa node,nodeid=0,memdev=mem0,cpus=0-1 "*"-numa node,nodeid=1,memdev=mem1,cpus=2-3 "*)
		result OK "a two-node guest: a socket, half the CPUs and half the memory per node" ;;
	*) result FAIL "a two-node guest: a socket, half the CPUs and half the memory per node" "got '$got'" ;;
	esac
	got=$( (. "$R/tools/lib.sh"; DOMAIN_ONLY=3 ti_cmdline x86_64 1-2 "") 2>&1)
	want="root=/dev/vda rw init=/sbin/ti-init isolcpus=domain,managed_irq,1-2,3 nohz_full=1-2 rcu_nocbs=1-2"
	if [ "$got" = "$want" ]; then
		result OK "boot-test --domain-only: isolcpus without its nohz flag covers both lists, nohz_full only --isolate's"
	else
		result FAIL "boot-test --domain-only: isolcpus without its nohz flag covers both lists" "got '$got'"
	fi
}

finish() {
	[ $keep = 1 ] || rm -rf "$scratch"
	echo "$((n - failed - skipped)) passed, $failed failed, $skipped skipped"
	[ $failed = 0 ] && [ $n = $planned ]
}

if [ $quick = 1 ]; then
	check_judge
	check_bench
	check_options
	check_suite_config
	finish
	exit
fi

pin=$(base_field base-commit "$R/upstream-base.txt")
topics=$(cd "$R" && BUILD=$SB bash -c '. tools/lib.sh; series_topics')
last=$(echo "$topics" | tail -n 1)

# 1. Fresh tree: pinned base id, every bundle replayed.
progress "fresh 'make tree' in a scratch clone (imports the base)"
rc=0
run "$R/tools/tree.sh" >"$scratch/out" 2>&1 || rc=$?
tail -n 3 "$scratch/out" | sed 's/^/# /'
ok=OK
[ $rc = 0 ] || ok=FAIL
[ "$(git -C "$T" rev-parse base 2>/dev/null)" = "$pin" ] || ok=FAIL
if [ -n "$last" ]; then
	[ "$(git -C "$T" rev-parse tip)" = "$(bundle_head "$R/topic-branches/$last.bundle" "$last")" ] || ok=FAIL
fi
result $ok "fresh tree reproduces base $pin and replays $(echo "$topics" | grep -c . || true) topic(s)"

# 2. Idempotence.
before=$(git -C "$T" for-each-ref; git -C "$T" rev-parse HEAD; stat -c %Y "$T/Makefile")
t0=$(date +%s)
rc=0
run "$R/tools/tree.sh" >"$scratch/out" 2>&1 || rc=$?
t1=$(date +%s)
after=$(git -C "$T" for-each-ref; git -C "$T" rev-parse HEAD; stat -c %Y "$T/Makefile")
if [ $rc = 0 ] && [ "$before" = "$after" ] && [ $((t1 - t0)) -lt 20 ]; then
	result OK "second make tree changes nothing ($((t1 - t0)) s)"
else
	result FAIL "second make tree changes nothing" "rc $rc, $((t1 - t0)) s"
fi

# 3. An unsaved commit: refused, kept.
topic=${last:-scratch}
if [ -z "$last" ]; then
	(cd "$R" && run tools/topic.sh add scratch >/dev/null 2>&1)
fi
git -C "$T" switch -q "$topic"
echo "workflow check" >"$T/Documentation/workflow-check.txt"
git -C "$T" add Documentation/workflow-check.txt
git -C "$T" -c user.name=check -c user.email=check@invalid commit -q -m "Documentation: workflow check"
mine=$(git -C "$T" rev-parse HEAD)
expect_rc 4 "make tree refuses an unsaved commit" run "$R/tools/tree.sh"
[ "$(git -C "$T" rev-parse "$topic")" = "$mine" ] && result OK "the unsaved commit is still there" ||
	result FAIL "the unsaved commit is still there"

# 4. Save, wipe the build directory, rebuild: the commit comes back.
expect_rc 0 "make save writes the bundle" run "$R/tools/save.sh"
rm -rf "$SB"
progress "rm -rf build; make tree (imports the base again)"
run "$R/tools/tree.sh" >"$scratch/out" 2>&1 || true
if [ "$(git -C "$T" rev-parse "$topic" 2>/dev/null)" = "$mine" ]; then
	result OK "saved commit survives rm -rf build && make tree (same id)"
else
	result FAIL "saved commit survives rm -rf build && make tree"
fi

# 5. Bad input, one line each.
b=$R/topic-branches/$topic.bundle
cp "$b" "$scratch/good.bundle"
printf 'garbage' | dd of="$b" bs=1 seek=$(($(stat -c %s "$b") / 2)) conv=notrunc status=none
git -C "$T" checkout -q --detach base
git -C "$T" update-ref -d "refs/heads/$topic"
git -C "$T" update-ref -d refs/heads/tip
expect_rc 5 "corrupt bundle: exit 5" run "$R/tools/tree.sh"
cp "$scratch/good.bundle" "$b"

cp "$R/upstream-base.txt" "$scratch/base.good"
sed -i 's/^sha256: .*/sha256: 0000000000000000000000000000000000000000000000000000000000000000/' "$R/upstream-base.txt"
expect_rc 5 "wrong sha256: exit 5" env BUILD="$scratch/build-sha" "$R/tools/tree.sh"
cp "$scratch/base.good" "$R/upstream-base.txt"
sed -i 's/^version: .*/version: 6.12.999-1~deb12u1/' "$R/upstream-base.txt"
expect_rc 5 "version apt does not offer: exit 5" env BUILD="$scratch/build-ver" "$R/tools/tree.sh"
cp "$scratch/base.good" "$R/upstream-base.txt"

# 6. FORCE=1 keeps a backup of what it drops.
run "$R/tools/tree.sh" >/dev/null 2>&1 || true
echo "edit" >>"$T/README"
rc=0
FORCE=1 run "$R/tools/tree.sh" >"$scratch/out" 2>&1 || rc=$?
if [ $rc = 0 ] && git -C "$T" stash list | grep -q "FORCE=1 backup" &&
	git -C "$T" for-each-ref refs/backup | grep -q .; then
	result OK "FORCE=1 keeps a stash and backup refs"
else
	result FAIL "FORCE=1 keeps a stash and backup refs" "rc $rc"
fi

# 7. Amend the first topic twice, restacking after each and saving in
# neither: the second restack must start from where the first left the
# later topics, not from their bundles (replaying the first amendment
# onto the second would conflict).
first=$(echo "$topics" | head -n 1)
if [ -n "$last" ] && [ "$first" != "$last" ]; then
	want=$(git -C "$T" rev-list --count "$first..$last")
	rc=0
	for i in 1 2; do
		git -C "$T" switch -q "$first"
		echo "restack check $i" >"$T/Documentation/restack-check.txt"
		git -C "$T" add Documentation/restack-check.txt
		git -C "$T" -c user.name=check -c user.email=check@invalid commit -q --amend --no-edit
		run "$R/tools/topic.sh" restack >"$scratch/out" 2>&1 || { rc=$?; break; }
	done
	got=$(git -C "$T" rev-list --count "$first..$last")
	if [ $rc = 0 ] && [ "$got" = "$want" ] &&
		[ "$(git -C "$T" show "$last:Documentation/restack-check.txt")" = "restack check 2" ]; then
		result OK "two restacks before a save keep every later topic's commits"
	else
		sed 's/^/# /' "$scratch/out" | tail -n 4
		result FAIL "two restacks before a save keep every later topic's commits" "rc $rc, $got of $want commits"
	fi
else
	skipped=$((skipped + 1))
	result OK "two restacks before a save # SKIP needs two topics"
fi

check_judge
check_bench
check_options
check_suite_config

if [ -n "$rebase" ]; then
	expect_rc 0 "make rebase VERSION=$rebase" run "$R/tools/rebase.sh" "$rebase"
fi

finish
