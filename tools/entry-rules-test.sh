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
before the first "cpsie i" (or "msr cpsr_c") and be followed by the reload
of r0-r3; fabricated disassemblies of the old order (ARMv7 and ARMv5),
of the right one and of neither check the check itself.

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
# isolation) comes before the first enabling of interrupts ("cpsie i",
# or "msr cpsr_c" before ARMv6) and the syscall's r0-r3 are reloaded from
# pt_regs after it, else what is wrong
swi_order() {
	awk '!call && /[ \t]bl[ \t].*<(arm_enter_from_user|user_exit_callable)>/ { call = NR }
	     !enable && /[ \t](cpsie[ \t]+i([ \t]|$)|msr[ \t]+(CPSR|cpsr)_c)/ { enable = NR; what = $0 }
	     call && NR > call && /[ \t]ldm[a-z]*[ \t]+sp, \{r0, r1, r2, r3\}/ { reload = 1 }
	     END {
		if (!call) print "no call of the entry function found"
		else if (!enable) print "no instruction that enables interrupts found"
		else if (enable < call) print "interrupts enabled first: " what
		else if (!reload) print "r0-r3 not reloaded from pt_regs after the entry call"
		else print "ok"
	     }'
}

echo "KTAP version 1"
echo "1..25"
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
# arm: vector_swi's order, on fabricated disassemblies, then on the kernel
# swi_case NAME WANT LINE...: WANT is the start of what swi_order must say
swi_case() {
	local name=$1 want=$2 said
	shift 2
	said=$(printf '%s\n' "$@" | swi_order)
	if [ "${said#"$want"}" != "$said" ]; then ok "arm vector_swi check, $name: $said"
	else nok "arm vector_swi check, $name: want \"$want\"" "said: ${said:-nothing}"; fi
}
swi_case "the old order" "interrupts enabled first" 'c00083b0:	cpsie	i' \
	'c00083b4:	bl	c0011fe0 <arm_enter_from_user>' 'c00083c4:	ldm	sp, {r0, r1, r2, r3}'
swi_case "the old order, ARMv5" "interrupts enabled first" 'c00083b0:	msr	CPSR_c, #19' \
	'c00083b4:	bl	c0011fe0 <user_exit_callable>' 'c00083c4:	ldm	sp, {r0, r1, r2, r3}'
swi_case "entry call first" "ok" 'c00083b0:	bl	c0011fe0 <arm_enter_from_user>' \
	'c00083b4:	cpsie	i' 'c00083c4:	ldm	sp, {r0, r1, r2, r3}'
swi_case "nothing to compare" "no call" 'c00083b4:	cpsie	i'
if [ ! -f "$arm_obj/vmlinux" ] || ! grep -q '^CONFIG_CONTEXT_TRACKING_USER=y' "$arm_obj/.config" 2>/dev/null; then
	skip "arm vector_swi: user context left before interrupts are enabled" \
		"no arm kernel with CONTEXT_TRACKING_USER in $arm_obj"
elif ! command -v arm-linux-gnueabihf-objdump >/dev/null; then
	skip "arm vector_swi: user context left before interrupts are enabled" \
		"no arm-linux-gnueabihf-objdump"
elif ! dis=$(arm-linux-gnueabihf-objdump -d --no-show-raw-insn --disassemble=vector_swi \
	"$arm_obj/vmlinux" 2>&1); then
	nok "arm vector_swi: user context left before interrupts are enabled" "objdump failed: $dis"
else
	said=$(swi_order <<<"$dis")
	if [ "$said" = ok ]; then ok "arm vector_swi: user context left before interrupts are enabled"
	else nok "arm vector_swi: user context left before interrupts are enabled" "$said"; fi
fi
echo "$((n - bad - skipped)) passed, $bad failed, $skipped skipped"
[ $bad = 0 ] || exit $E_FAIL
