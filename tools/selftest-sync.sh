#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Keep the in-tree kselftest (tools/testing/selftests/task_isolation in the
# series) identical to test/, which is the one source of truth.
. "$(dirname "$0")/lib.sh"

usage() {
	cat <<EOF2
usage: tools/selftest-sync.sh --check | --update | --build

--check   compare the series' tools/testing/selftests/task_isolation/ (on
          branch tip of \$BUILD/linux) with test/task_isolation_test.c and
          test/in-tree/*; exit 1 naming the files that differ
--update  copy test/ into the work tree of \$BUILD/linux (then commit it on
          the selftests topic and 'make save')
--build   build the in-tree kselftest the kernel way:
          make -C tools/testing/selftests TARGETS=task_isolation
Exit codes: 0 ok, 1 differs / does not build, 2 usage, 5 no tree.
EOF2
}
dir=tools/testing/selftests/task_isolation
# pairs "repo file:tree file"
pairs=("test/task_isolation_test.c:$dir/task_isolation_test.c"
	"test/in-tree/Makefile:$dir/Makefile"
	"test/in-tree/config:$dir/config"
	"test/in-tree/settings:$dir/settings"
	"test/in-tree/gitignore:$dir/.gitignore")
case ${1:-} in
--check | --update | --build) [ $# = 1 ] || bad_usage "unexpected argument: $2" ;;
-h | --help) usage; exit 0 ;;
"") bad_usage "which of --check, --update, --build?" ;;
*) bad_usage "unknown option: $1" ;;
esac
[ -d "$TREE/.git" ] || die $E_INPUT "no tree in $TREE (run: make tree)"
case $1 in
--check)
	bad=0
	for p in "${pairs[@]}"; do
		if ! tgit show "$TIP_BRANCH:${p#*:}" 2>/dev/null | cmp -s - "$TOP/${p%%:*}"; then
			msg "differs: ${p%%:*} vs $TIP_BRANCH:${p#*:}"
			bad=1
		fi
	done
	[ $bad = 0 ] || die $E_FAIL "the in-tree selftest is out of sync with test/: run tools/selftest-sync.sh --update, commit on the selftests topic, make save"
	msg "in-tree selftest matches test/"
	;;
--update)
	mkdir -p "$TREE/$dir"
	for p in "${pairs[@]}"; do cp "$TOP/${p%%:*}" "$TREE/${p#*:}"; done
	msg "copied test/ into $TREE/$dir; now commit it there and run make save"
	;;
--build)
	obj=$(obj_dir "$(arch_list | head -n 1)" default)
	[ -d "$obj/usr/include" ] || die $E_INPUT "no uapi headers in $obj/usr/include (run: make kernel)"
	out=$BUILD/kselftest
	mkdir -p "$out"
	make -C "$TREE/tools/testing/selftests" TARGETS=task_isolation O="$out" \
		KHDR_INCLUDES="-isystem $obj/usr/include" >"$out/build.log" 2>&1 ||
		die $E_FAIL "make -C tools/testing/selftests TARGETS=task_isolation failed; see $out/build.log"
	ls "$out"/kselftest/task_isolation/task_isolation_test >/dev/null 2>&1 ||
		die $E_FAIL "the build produced no task_isolation_test; see $out/build.log"
	msg "built $out/kselftest/task_isolation/task_isolation_test"
	;;
esac
