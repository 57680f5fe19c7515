#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Test the checks of the entry-code rule CONTEXT_TRACKING_WORK rests on:
# objtool's check of the keys x86 noinstr code tests, and the arm64 el0
# handler check (tools/arm64-entry-check.py), on fabricated objects and on
# the built kernels.
. "$(dirname "$0")/lib.sh"

usage() {
	cat <<EOF
usage: tools/entry-rules-test.sh [--obj DIR] [--arm64-obj DIR] [--arm-obj DIR]

Checks, as KTAP, the checkers of the rule CONTEXT_TRACKING_WORK rests on:
nothing that can be patched after boot runs on the way from user space
into the kernel before the deferred work is done.

x86_64: builds objtool from \$BUILD/linux (tools/objtool, into
\$BUILD/objtool), whose rule is: noinstr code tests no static key or
static call that can change after boot unless it is __ro_after_init or
named in ANNOTATE_NOINSTR_ALLOWED().  For each of
test/objtool/noinstr-key.S (static branches) and noinstr-static-call.S (a
static call) in .noinstr.text, objtool --noinstr --link must
  - report the key when it lives in .data (writable: the negative test),
    also a local key (section-relative), a likely branch on a key 8 bytes
    into its object, two keys in one function (both), a tail call, and
    a key in a function that objtool reports for something else too, and
    a key tested after instrumentation_end();
  - accept a key tested between instrumentation_begin() and _end() marks
    (the entry state is established there);
  - accept it in .data..ro_after_init,
  - accept it in .data when .discard.noinstr_allowed names it.
With a built x86_64 kernel (--obj DIR, default \$BUILD/obj/x86_64-debian
when it has vmlinux.o), its vmlinux.o must pass, and must fail once its
annotations are stripped (objcopy), naming __sched_clock_stable.

arm64: tools/arm64-entry-check.py --self-test (fabricated handlers), and
with a built arm64 kernel (--arm64-obj DIR, default \$BUILD/obj/arm64-debian)
its vmlinux must pass with test/arm64-entry-audit.txt and fail with an
empty audit.

arm: the syscall entry (vector_swi) leaves context tracking's user state
before it enables interrupts, as every other entry from user mode does:
with a built arm kernel (--arm-obj DIR, default \$BUILD/obj/arm-default)
whose config has CONTEXT_TRACKING_USER, the first call of
arm_enter_from_user (or user_exit_callable) in its disassembly must come
before the first "cpsie i"; the same check on v2's order (fabricated)
must fail.

Needs an x86_64 host (objtool decodes x86 here).  About 30 s, most of it
building objtool the first time.
Exit codes: 0 all pass, 1 a check failed, 2 usage, 3 missing tool,
5 no kernel tree.
EOF
}

obj="" arm64_obj="" arm_obj=""
while [ $# -gt 0 ]; do
	case $1 in
	--obj) need_value "$@"; obj=$2; shift 2 ;;
	--arm64-obj) need_value "$@"; arm64_obj=$2; shift 2 ;;
	--arm-obj) need_value "$@"; arm_obj=$2; shift 2 ;;
	-h | --help) usage; exit 0 ;;
	*) bad_usage "unknown option: $1" ;;
	esac
done
need_tools gcc make objcopy
[ "$(uname -m)" = x86_64 ] || die $E_TOOL "objtool decodes x86_64 objects; this host is $(uname -m)"
[ -f "$TREE/tools/objtool/check.c" ] || die $E_INPUT "no kernel tree in $TREE (run: make tree)"
[ -n "$obj" ] || obj=$BUILD/obj/x86_64-debian
[ -n "$arm64_obj" ] || arm64_obj=$BUILD/obj/arm64-debian
[ -n "$arm_obj" ] || arm_obj=$BUILD/obj/arm-default
start_log entry-rules-test

out=$BUILD/objtool
mkdir -p "$out/cases"
progress "building objtool from $TREE/tools/objtool into $out"
make -s -C "$TREE/tools/objtool" O="$out" >"$LOGDIR/objtool-build.log" 2>&1 ||
	die $E_FAIL "building objtool failed; see $LOGDIR/objtool-build.log"
OBJTOOL=$out/objtool

n=0 bad=0 skipped=0
ok() { n=$((n + 1)); echo "ok $n $1"; }
skip() { n=$((n + 1)) skipped=$((skipped + 1)); echo "ok $n $1 # SKIP $2"; }
nok() { n=$((n + 1)) bad=$((bad + 1)); echo "not ok $n $1"; shift; printf '# %s\n' "$@"; }

# objtool_noinstr FILE: objtool --noinstr --link on FILE, its output on
# stdout; a crash or an error (objtool exits 0 on warnings) says so there
objtool_noinstr() {
	local rc=0
	"$OBJTOOL" --noinstr --link "$1" 2>&1 || rc=$?
	[ $rc = 0 ] || echo "objtool FAILED: exit $rc"
}

# case_obj NAME SOURCE WANT KEY CPPFLAGS...: WANT is clean, or the number
# of findings that must name KEY
case_obj() {
	local name=$1 src=$2 want=$3 key=$4 o report found
	shift 4
	o=$out/cases/$name.o
	gcc -c -x assembler-with-cpp "$@" "$TOP/test/objtool/$src" -o "$o"
	report=$(objtool_noinstr "$o")
	found=$(grep -c 'can change after boot' <<<"$report" || true)
	if grep -q 'objtool FAILED' <<<"$report"; then
		nok "$name: objtool failed" "$report"
	elif [ "$want" = clean ]; then
		if [ "$found" = 0 ]; then ok "$name: accepted"
		else nok "$name: reported, but the key is allowed" "$report"; fi
	elif [ "$found" = "$want" ] && grep -q "$key can change after boot" <<<"$report"; then
		ok "$name: reported ($found)"
	else
		nok "$name: $found finding(s), want $want naming $key" "objtool said: ${report:-nothing}"
	fi
}

# swi_order: reads a disassembly of vector_swi; prints "ok" when the
# entry call (arm_enter_from_user, or user_exit_callable without task
# isolation) comes before the first "cpsie i", else what came first
swi_order() {
	awk '/[ \t]bl[ \t].*<(arm_enter_from_user|user_exit_callable)>/ { print "ok"; found = 1; exit }
	     /[ \t]cpsie[ \t]+i([ \t]|$)/ { print "interrupts enabled first: " $0; found = 1; exit }
	     END { if (!found) print "neither the entry call nor cpsie i found" }'
}

echo "KTAP version 1"
echo "1..22"
case_obj key-writable noinstr-key.S 1 the_key -DKEY_SECTION=.data
case_obj key-ro-after-init noinstr-key.S clean the_key -DKEY_SECTION=.data..ro_after_init
case_obj key-annotated noinstr-key.S clean the_key -DKEY_SECTION=.data -DALLOW
case_obj key-local noinstr-key.S 1 the_key -DKEY_SECTION=.data -DLOCAL
case_obj key-local-annotated noinstr-key.S clean the_key -DKEY_SECTION=.data -DLOCAL -DALLOW
case_obj key-likely-in-struct noinstr-key.S 1 the_key -DKEY_SECTION=.data -DBRANCH=1 -DOFFSET=8
case_obj key-two-in-one-function noinstr-key.S 2 other_key -DKEY_SECTION=.data -DSECOND
case_obj key-in-instrumentation noinstr-key.S clean the_key -DKEY_SECTION=.data -DINSTR
case_obj key-after-instrumentation noinstr-key.S 1 other_key -DKEY_SECTION=.data -DINSTR -DSECOND
case_obj call-writable noinstr-static-call.S 1 __SCK__hook -DKEY_SECTION=.data
case_obj call-ro-after-init noinstr-static-call.S clean __SCK__hook -DKEY_SECTION=.data..ro_after_init
case_obj call-annotated noinstr-static-call.S clean __SCK__hook -DKEY_SECTION=.data -DALLOW
case_obj call-tail noinstr-static-call.S 1 __SCK__hook -DKEY_SECTION=.data -DTAIL
case_obj call-after-other-report noinstr-static-call.S 1 __SCK__hook -DKEY_SECTION=.data -DOTHER_CALL
case_obj call-in-instrumentation noinstr-static-call.S clean __SCK__hook -DKEY_SECTION=.data -DINSTR

if [ ! -f "$obj/vmlinux.o" ] || ! grep -q '^CONFIG_CONTEXT_TRACKING_WORK=y' "$obj/.config" 2>/dev/null; then
	why="no x86_64 kernel with CONTEXT_TRACKING_WORK in $obj"
	skip "vmlinux.o: clean" "$why"
	skip "vmlinux.o without annotations: reported" "$why"
else
	v=$out/cases/vmlinux.o
	cp "$obj/vmlinux.o" "$v"
	report=$(objtool_noinstr "$v" | grep -E 'can change after boot|objtool FAILED' || true)
	if [ -z "$report" ]; then ok "vmlinux.o: clean"
	else nok "vmlinux.o: keys reported" "$report"; fi
	objcopy --remove-section=.discard.noinstr_allowed \
		--remove-section=.rela.discard.noinstr_allowed "$obj/vmlinux.o" "$v"
	report=$(objtool_noinstr "$v" | grep -E 'can change after boot|objtool FAILED' || true)
	if grep -q 'objtool FAILED' <<<"$report"; then
		nok "vmlinux.o without annotations: objtool failed" "$report"
	elif grep -q '__sched_clock_stable can change after boot' <<<"$report"; then
		ok "vmlinux.o without annotations: reported ($(wc -l <<<"$report") finding(s))"
	else nok "vmlinux.o without annotations: __sched_clock_stable not reported" "${report:-nothing}"; fi
	rm -f "$v"
fi
# arm64: the checker on fabricated handlers, then on the kernel
if report=$("$TOP/tools/arm64-entry-check.py" --self-test 2>&1); then
	ok "arm64-entry-check --self-test: $(tail -n 1 <<<"$report")"
else nok "arm64-entry-check --self-test" "$report"; fi
if [ ! -f "$arm64_obj/vmlinux" ] || ! grep -q '^CONFIG_CONTEXT_TRACKING_WORK=y' "$arm64_obj/.config" 2>/dev/null; then
	why="no arm64 kernel with CONTEXT_TRACKING_WORK in $arm64_obj"
	skip "arm64 vmlinux: clean" "$why"
	skip "arm64 vmlinux, empty audit: reported" "$why"
else
	if report=$("$TOP/tools/arm64-entry-check.py" --vmlinux "$arm64_obj/vmlinux" 2>&1); then
		ok "arm64 vmlinux: clean"
	else nok "arm64 vmlinux: calls reported" "$report"; fi
	: >"$out/cases/empty-audit.txt"
	if report=$("$TOP/tools/arm64-entry-check.py" --vmlinux "$arm64_obj/vmlinux" \
		--audit "$out/cases/empty-audit.txt" 2>&1); then
		nok "arm64 vmlinux, empty audit: not reported" "$report"
	else ok "arm64 vmlinux, empty audit: reported ($(grep -c 'before __ct_user_exit' <<<"$report") call(s))"; fi
fi
# arm: vector_swi's order, on v2's order (fabricated), then on the kernel
said=$(printf '%s\n' 'c00083b0:	cpsie	i' \
	'c00083b4:	bl	c0011fe0 <arm_enter_from_user>' | swi_order)
if [ "${said%%:*}" = "interrupts enabled first" ]; then ok "arm vector_swi check on v2's order: reported"
else nok "arm vector_swi check on v2's order: not reported" "${said:-nothing}"; fi
if [ ! -f "$arm_obj/vmlinux" ] || ! grep -q '^CONFIG_CONTEXT_TRACKING_USER=y' "$arm_obj/.config" 2>/dev/null; then
	skip "arm vector_swi: user context left before interrupts are enabled" \
		"no arm kernel with CONTEXT_TRACKING_USER in $arm_obj"
elif ! command -v arm-linux-gnueabihf-objdump >/dev/null; then
	skip "arm vector_swi: user context left before interrupts are enabled" \
		"no arm-linux-gnueabihf-objdump"
else
	said=$(arm-linux-gnueabihf-objdump -d --no-show-raw-insn --disassemble=vector_swi \
		"$arm_obj/vmlinux" | swi_order)
	if [ "$said" = ok ]; then ok "arm vector_swi: user context left before interrupts are enabled"
	else nok "arm vector_swi: user context left before interrupts are enabled" "$said"; fi
fi
echo "$((n - bad - skipped)) passed, $bad failed, $skipped skipped"
[ $bad = 0 ] || exit $E_FAIL
