#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Configure and build a test kernel from config fragments, out of tree, with ccache.
. "$(dirname "$0")/lib.sh"

usage() {
	cat <<EOF
usage: tools/kernel.sh [--arch $(arch_list | paste -sd"|" -)] [--config ${CONFIGS// /|}]
                       [--set CONFIG_FOO=val]... [--src DIR] [--obj DIR]
                       [--keys-advisory] [--print-image] [-- extra make arguments]

Builds the kernel in --src (default \$BUILD/linux, the checked-out branch)
into --obj (default \$BUILD/obj/<arch>-<config>), from allnoconfig plus
configs/common.config, configs/<arch>.config and, for --config debug,
configs/debug.config and configs/<arch>-debug.config, then --set lines.
--config debian and debian-rt start instead from Debian's own config of the
pinned version (flavour none or rt, tools/debian-config.sh) with every
module turned off (mod2noconfig), then configs/debian.config,
configs/<arch>-debian.config where it exists, and --set.
Every option that the suite's test/in-tree/config lists, that ARCH
defines and whose dependencies the config meets must be in the final
.config too (exit 5 otherwise), unless --set turns it off (=n, as the
benchmark's base and option-off kernels do); the others are named.
Every fragment line must survive into the final .config or the build stops
(exit 5) naming the symbols.  The config is regenerated only when the
fragments change; make itself is incremental; the compiler runs via ccache.
Also installs the uapi headers into <obj>/usr for the selftests.
After a build with CONFIG_CONTEXT_TRACKING_WORK, checks the entry-code rule
it rests on (exit 1 on a finding): on x86_64 objtool's check of the keys
noinstr code tests outside instrumentation_begin() regions (vmlinux.o,
<obj>/noinstr-keys.txt; without CONFIG_NOINSTR_VALIDATION, whose marks
show those regions, every test counts; --keys-advisory prints such
findings instead of failing), on arm64
tools/arm64-entry-check.py (test/arm64-entry-audit.txt).

--keys-advisory  print, rather than fail on, the objtool key findings of a
               kernel without CONFIG_NOINSTR_VALIDATION (the benchmark's).
--print-image  print the path of the kernel image and exit (no build).
Environment: BUILD, JOBS (default nproc), CCACHE_DIR.
Exit codes: 0 ok, 1 build failed, 2 usage, 3 missing tool, 5 bad config.
EOF
}

arch=$(arch_list | head -n 1) config=default src=$TREE obj="" print=0 keys_advisory=0 sets=() extra=()
while [ $# -gt 0 ]; do
	case $1 in
	--arch) need_value "$@"; arch=$2; shift 2 ;;
	--config) need_value "$@"; config=$2; shift 2 ;;
	--set) need_value "$@"; sets+=("$2"); shift 2 ;;
	--src) need_value "$@"; src=$2; shift 2 ;;
	--obj) need_value "$@"; obj=$2; shift 2 ;;
	--print-image) print=1; shift ;;
	--keys-advisory) keys_advisory=1; shift ;;
	-h | --help) usage; exit 0 ;;
	--) shift; extra=("$@"); break ;;
	*) bad_usage "unknown option: $1" ;;
	esac
done
check_config "$config"
arch_facts "$arch"
cross=$CROSS target=$IMAGE
obj=${obj:-$(obj_dir "$arch" "$config")}
case $obj in /*) ;; *) obj=$PWD/$obj ;; esac
image=$(kernel_image "$arch" "$config" "$obj")
if [ $print = 1 ]; then
	echo "$image"
	exit 0
fi
[ -f "$src/Makefile" ] || die $E_INPUT "no kernel tree in $src (run: make tree)"
need_tools make gcc "${cross}gcc" flex bison bc perl
mkdir -p "$obj"
start_log "kernel-$arch-$config"

# Paths below the build directory hash as relative ones, so that another
# clone (CI) hits the same cache entries.
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$BUILD}
export KBUILD_BUILD_TIMESTAMP="Thu Jan  1 00:00:00 UTC 2026"
export KBUILD_BUILD_USER=ti KBUILD_BUILD_HOST=qemu
kernel_make "$src" "$obj" "$arch"
kmake=("${KMAKE[@]}")

mapfile -t frags < <(config_fragments "$arch" "$config")
want=$obj/fragment.config
{
	cat "${frags[@]}"
	for s in "${sets[@]}"; do echo "$s"; done
} | sed -e 's/#.*//' -e '/^[[:space:]]*$/d' >"$want.new"

# The starting point: allnoconfig, or Debian's config with its modules off.
flavour=$(config_flavour "$config")
if [ -n "$flavour" ]; then
	debian=$("$TOP/tools/debian-config.sh" --arch "$arch" --flavour "$flavour")
	# The fragment file carries the starting point's checksum, so that a new
	# Debian config reconfigures like a changed fragment does.
	echo "# starting point: $(sha256sum <"$debian" | cut -c1-64)" >>"$want.new"
fi
# So does a change of the Kconfig files: olddefconfig on an old .config
# keeps what an earlier tree decided for a new symbol (an "imply" that a
# fresh configuration would not honour, say), and a fresh clone must get
# the same kernel as an incremental build.
echo "# Kconfig: $(git -C "$src" ls-files -z -- '*Kconfig*' | (cd "$src" && xargs -0 cat) | sha256sum | cut -c1-64)" >>"$want.new"
if [ ! -f "$obj/.config" ] || ! cmp -s "$want.new" "$want"; then
	mv "$want.new" "$want"
	if [ -n "$flavour" ]; then
		progress "configuring $arch-$config (Debian's $(basename "$debian"), mod2noconfig, ${#frags[@]} fragment(s))"
		cp "$debian" "$obj/.config"
		{
			"${kmake[@]}" mod2noconfig &&
				"$src/scripts/kconfig/merge_config.sh" -m -O "$obj" "$obj/.config" "$want" &&
				"${kmake[@]}" olddefconfig
		} >"$obj/config.log" 2>&1 ||
			die $E_INPUT "configuration failed; see $obj/config.log"
	else
		progress "configuring $arch-$config (allnoconfig + ${#frags[@]} fragment(s))"
		"${kmake[@]}" KCONFIG_ALLCONFIG="$want" allnoconfig >"$obj/config.log" 2>&1 ||
			die $E_INPUT "configuration failed; see $obj/config.log"
	fi
else
	rm -f "$want.new"
	"${kmake[@]}" olddefconfig >"$obj/config.log" 2>&1 ||
		die $E_INPUT "olddefconfig failed; see $obj/config.log"
fi

# Every requested value must be in the final config, and so must every
# option of the suite's own config that this architecture and config can
# have (suite_config_wanted in lib.sh).
bad=$(config_missing "$want" "$obj/.config")
[ -z "$bad" ] || die $E_INPUT "config symbols did not take (missing dependency or unknown symbol):
$bad
  fix configs/*.config (see $obj/.config)"
bad=$(suite_config_missing "$src" "$arch" "$obj/.config")
# A symbol the caller turned off with --set (the benchmark's base and
# option-off kernels) is not a suite kernel's missing option.
for s in "${sets[@]}"; do
	case $s in *=n) bad=$(grep -v "^ *${s%=n}:" <<<"$bad" || true) ;; esac
done
[ -z "$bad" ] || die $E_INPUT "the $arch-$config kernel lacks options the suite needs (test/in-tree/config):
$bad
  add them to the fragments of $config (configs/)"
bad=$(suite_config_wanted "$src" "$arch" "$obj/.config" unavailable | sed 's/=.*//' | xargs)
[ -z "$bad" ] || progress "options of test/in-tree/config whose dependencies $arch-$config does not meet (their tests skip): $bad"

progress "building $arch-$config $target in $obj (log: $obj/build.log)"
start=$(date +%s)
: >"$obj/build.log"
start_progress "building $arch-$config" kbuild_count "$obj/build.log"
if ! "${kmake[@]}" "$target" "${extra[@]}" >"$obj/build.log" 2>&1; then
	stop_progress
	grep -E 'error|Error' "$obj/build.log" | head -n 20 >&2 || true
	die $E_FAIL "kernel build failed; see $obj/build.log"
fi
stop_progress
"${kmake[@]}" headers_install INSTALL_HDR_PATH="$obj/usr" >>"$obj/build.log" 2>&1 ||
	die $E_FAIL "headers_install failed; see $obj/build.log"
# Compiler and objtool (noinstr, unreachable code, ...) warnings
grep -E '^[^ ]+:[0-9]+:[0-9]+: warning:|warning: objtool:' "$obj/build.log" | sort -u >"$obj/warnings.txt" || true
progress "built $image in $(($(date +%s) - start)) s ($(wc -l <"$obj/warnings.txt") warning(s))"

# The rule CONTEXT_TRACKING_WORK rests on: noinstr code tests no static key
# or static call that changes after boot unless ANNOTATE_NOINSTR_ALLOWED()
# says why that is safe (include/linux/objtool.h).  objtool checks it on
# vmlinux.o, but kbuild runs that only with CONFIG_NOINSTR_VALIDATION
# (DEBUG_ENTRY); run it on every build that has objtool and the option.
# Only these findings count.  Keys tested between instrumentation_begin()
# and _end() are not findings (the entry state is established there), but
# the marks exist only with NOINSTR_VALIDATION: without it every test in
# noinstr code counts, also the tracepoints and perf keys of instrumentation
# regions the compiler inlined (a minimal config inlines some into
# exc_page_fault()): a stricter check, which the test configs pass.  A
# finding fails the build, unless --keys-advisory (the benchmark's minimal
# kernels) and the kernel has no marks: then it is printed.
if grep -q '^CONFIG_CONTEXT_TRACKING_WORK=y' "$obj/.config" && grep -q '^CONFIG_OBJTOOL=y' "$obj/.config"; then
	[ -x "$obj/tools/objtool/objtool" ] || die $E_FAIL "no objtool in $obj/tools/objtool: cannot check the noinstr keys"
	cp "$obj/vmlinux.o" "$obj/noinstr-keys.o"
	rc=0
	"$obj/tools/objtool/objtool" --noinstr --link "$obj/noinstr-keys.o" >"$obj/noinstr-keys.log" 2>&1 || rc=$?
	rm -f "$obj/noinstr-keys.o"
	# objtool exits 0 on warnings; anything else is a crash or an error
	[ $rc = 0 ] || die $E_FAIL "objtool --noinstr --link failed (exit $rc); see $obj/noinstr-keys.log"
	grep -E 'can change after boot|static call key of .* not found|ANNOTATE_NOINSTR_ALLOWED: |with no key' \
		"$obj/noinstr-keys.log" | sed "s|$obj/noinstr-keys.o|vmlinux.o|" >"$obj/noinstr-keys.txt" || true
	grep -h 'can change after boot' "$obj/build.log" >>"$obj/noinstr-keys.txt" || true
	if [ -s "$obj/noinstr-keys.txt" ] && { [ $keys_advisory = 0 ] || grep -q '^CONFIG_NOINSTR_VALIDATION=y' "$obj/.config"; }; then
		cat "$obj/noinstr-keys.txt" >&2
		die $E_FAIL "noinstr code tests keys that can change after boot (above, $obj/noinstr-keys.txt):
  make each __ro_after_init, or ANNOTATE_NOINSTR_ALLOWED() it with the reason"
	elif [ -s "$obj/noinstr-keys.txt" ]; then
		sed 's/^/  /' "$obj/noinstr-keys.txt" >&2
		progress "objtool: $(wc -l <"$obj/noinstr-keys.txt") key(s) above, not judged (--keys-advisory): without CONFIG_NOINSTR_VALIDATION (DEBUG_ENTRY) there are no instrumentation_begin() marks, so keys of inlined instrumentation count too"
	else
		progress "objtool: noinstr code tests only keys that are fixed after boot or annotated"
	fi
fi
# arm64, where objtool does not run: the el0 handlers call nothing before
# entering the kernel that test/arm64-entry-audit.txt does not allow.
if [ "$arch" = arm64 ] && grep -q '^CONFIG_CONTEXT_TRACKING_WORK=y' "$obj/.config"; then
	"$TOP/tools/arm64-entry-check.py" --vmlinux "$obj/vmlinux" --cross "$CROSS" >&2 ||
		die $E_FAIL "an el0 handler calls something before entering the kernel (above):
  audit it and add it to test/arm64-entry-audit.txt, or move it after enter_from_user_mode()"
fi
echo "$image"
