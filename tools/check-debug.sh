#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make check-debug: the debug kernels (lockdep, KASAN, context tracking
# forced, entry and noinstr checks) build without objtool complaints about
# the series and run the whole suite without a splat, on every architecture.
. "$(dirname "$0")/lib.sh"

usage() {
	cat <<EOF
usage: tools/check-debug.sh [--arch LIST] [--no-boot]

For each architecture of LIST (default: every row of tools/arches):
 1. builds the debug variant of the test kernel (tools/kernel.sh --config
    debug: configs/debug.config, plus configs/<arch>-debug.config; on x86_64
    DEBUG_ENTRY, whose objtool run validates the noinstr sections);
 2. fails if the build printed an objtool warning that concerns the series:
    a warning on an object built from a file that base..$TIP_BRANCH touches,
    or a vmlinux.o warning naming a function defined in such a file;
 3. boots it with tools/boot-test.sh --config debug (single-node: on x86_64
    TCG's AMD CPU, without kPTI, the path where a lost kernel TLB flush
    shows), which fails on a failed
    test and on any WARNING, lockdep report, KASAN report, "sleeping function
    called from invalid context", RCU stall, BUG or Oops on the console.
Objects live in \$BUILD/obj/<arch>-debug (ccache: rebuilt only on change).
Run time with warm caches: about 15 minutes per architecture on 2 cores;
a cold debug build adds 25-35 minutes each.
--no-boot      steps 1 and 2 only
Exit codes: 0 clean, 1 a build failed, an objtool warning or a boot test
failed (the reason is on the last line), 2 usage, 5 no tree.
EOF
}
arches=$(arch_list | xargs) boot=1
while [ $# -gt 0 ]; do
	case $1 in
	--arch) need_value "$@"; arches=$2; shift 2 ;;
	--no-boot) boot=0; shift ;;
	-h | --help) usage; exit 0 ;;
	*) bad_usage "unknown option: $1" ;;
	esac
done
[ -d "$TREE/.git" ] || die $E_INPUT "no tree in $TREE (run: make tree)"
start_log check-debug
t0=$(date +%s)

# objtool_findings OBJ: objtool warnings of the build in OBJ that concern a
# file the series touches, one per line.
objtool_findings() {
	local log=$1/build.log touched fn w
	touched=$(tgit diff --name-only "base..$TIP_BRANCH" -- '*.c' '*.h' '*.S')
	grep -a 'warning: objtool:' "$log" 2>/dev/null | sort -u | while IFS= read -r w; do
		case ${w%%:*} in
		vmlinux.o)
			# "vmlinux.o: warning: objtool: fn+0x1c: call to ..."
			fn=$(sed -n 's/.*objtool: \([A-Za-z0-9_.]*\)[+:].*/\1/p' <<<"$w")
			[ -n "$fn" ] && [ -n "$touched" ] || continue
			# shellcheck disable=SC2086 # one path per word
			if (cd "$TREE" && grep -lqsE "^[a-z_ ].*[ *]$fn\(" $touched); then
				echo "$w"
			fi
			;;
		*)
			grep -qxF "${w%%:*}" <<<"$(sed 's/\.[cS]$/.o/' <<<"$touched")" && echo "$w"
			;;
		esac
	done || true
}

for a in $arches; do
	progress "$a: building the debug kernel"
	"$TOP/tools/kernel.sh" --arch "$a" --config debug ||
		die $E_FAIL "$a: the debug kernel does not build (see $(obj_dir "$a" debug)/build.log)"
	found=$(objtool_findings "$(obj_dir "$a" debug)")
	if [ -n "$found" ]; then
		echo "$found" >&2
		die $E_FAIL "$a: objtool warnings in code the series touches (above)"
	fi
	progress "$a: no objtool warning concerns the series"
	[ $boot = 1 ] || continue
	progress "$a: boot test of the debug kernel"
	# Single-node x86_64 guests run without kPTI: a lost TLB flush would show
	"$TOP/tools/boot-test.sh" --arch "$a" --config debug ||
		die $E_FAIL "$a: the debug boot test failed (its reason is above)"
done
progress "debug kernels clean on: $arches, in $(($(date +%s) - t0)) s"
