#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Build every commit of the series, for every architecture, so that a
# bisection never lands on a commit that does not build.
. "$(dirname "$0")/lib.sh"

usage() {
	cat <<EOF
usage: tools/bisect-check.sh [--arch LIST] [--from COMMIT]

For each commit of base..$TIP_BRANCH (oldest first), in a scratch worktree
(\$BUILD/bisect), builds the test kernel of each architecture of LIST
(default: every row of tools/arches), with CONFIG_TASK_ISOLATION=y and again with
=n once the architecture supports the option (selects
HAVE_ARCH_TASK_ISOLATION), then rebuilds the .c files the commit touches
with W=1 and fails on a warning on a line the commit added or changed
(the files' other warnings are upstream's and only counted).
Before the architecture supports the option, the core commits are still
compiled: where init/Kconfig lets TASK_ISOLATION depend on COMPILE_TEST
(and, if it asks for GENERIC_ENTRY, the architecture selects it), the
build sets CONFIG_COMPILE_TEST=y and CONFIG_TASK_ISOLATION=y, and fails if
the resulting .config does not have CONFIG_TASK_ISOLATION=y.  Commits
before the option exists, and architectures that cannot compile-test it,
are built with it off.  A commit that changes no file an
architecture's build reads (only other arch/ trees, tools/testing/,
Documentation/) is not built again for it.  Objects live in
\$BUILD/obj/bisect-<arch>-{on,off}; ccache makes repeated runs cheap.
Stops at the first failure and names the commit and architecture.
Exit codes: 0 every commit builds, 1 a build failed, 5 no tree.
EOF
}
arches=$(arch_list | xargs) from=""
while [ $# -gt 0 ]; do
	case $1 in
	--arch) need_value "$@"; arches=$2; shift 2 ;;
	--from) need_value "$@"; from=$2; shift 2 ;;
	-h | --help) usage; exit 0 ;;
	*) bad_usage "unknown option: $1" ;;
	esac
done
[ -d "$TREE/.git" ] || die $E_INPUT "no tree in $TREE (run: make tree)"
start_log bisect-check
wt=$BUILD/bisect
t0=$(date +%s)
if [ ! -d "$wt/.git" ] && [ ! -f "$wt/.git" ]; then
	progress "creating worktree $wt"
	tgit worktree add -q --detach "$wt" base
fi

srcarch() { arch_facts "$1"; echo "$SRCARCH"; }

# in_build OBJDIR OBJ: OBJ (a path like kernel/fork.o) is linked into this
# configuration's vmlinux, i.e. listed in its directory's built-in.a or
# lib.a.  A stale OBJ left by an earlier configuration does not count.
in_build() {
	local list
	# thin archives list members as the archive path was given: relative
	list=$(cd "$1" && { ar t "$(dirname "$2")/built-in.a"; ar t "$(dirname "$2")/lib.a"; } 2>/dev/null || true)
	grep -qxF "$2" <<<"$list"
}

# supports ARCH: at the commit checked out, ARCH can enable the option.
supports() {
	grep -q "select HAVE_ARCH_TASK_ISOLATION" "$wt/arch/$(srcarch "$1")/Kconfig"
}

# compile_testable ARCH: at the commit checked out, init/Kconfig lets
# TASK_ISOLATION be built for COMPILE_TEST on ARCH, which does not support
# it yet (its "depends on" names COMPILE_TEST, and GENERIC_ENTRY only if
# ARCH selects that).
compile_testable() {
	local dep
	dep=$(awk '/^config /{ in_ti = ($2 == "TASK_ISOLATION") }
		in_ti && /^[[:space:]]*depends on/' "$wt/init/Kconfig")
	[[ $dep == *COMPILE_TEST* ]] || return 1
	[[ $dep != *GENERIC_ENTRY* ]] ||
		grep -q "select GENERIC_ENTRY" "$wt/arch/$(srcarch "$1")/Kconfig"
}

# new_warnings COMMIT: of the compiler and kernel-doc warnings on stdin
# (PATH:LINE[:COL]: warning: ...), those on a line that COMMIT added or
# changed, by the hunks of its diff against its parent.
new_warnings() {
	local c=$1 line path n
	while IFS= read -r line; do
		path=${line%%:*}
		n=${line#*:}
		n=${n%%:*}
		case $n in '' | *[!0-9]*) echo "$line"; continue ;; esac
		path=${path#"$wt"/}
		if git -C "$wt" diff -U0 "$c^" "$c" -- "$path" |
			awk -v n="$n" '/^@@/ { split($3, a, ","); s = substr(a[1], 2) + 0
				k = (a[2] == "") ? 1 : a[2] + 0; if (n >= s && n < s + k) f = 1 }
				END { exit !f }'; then
			echo "$line"
		fi
	done
}

# build ARCH COMMIT ON|OFF: build the test kernel at COMMIT; then W=1 the
# touched files.
build() {
	local arch=$1 c=$2 mode=$3 obj=$BUILD/obj/bisect-$1-$3 set=() f objs=() want=""
	if [ "$mode" = off ]; then
		set=(--set CONFIG_TASK_ISOLATION=n)
	elif supports "$arch"; then
		want=y
	elif compile_testable "$arch"; then
		# COMPILE_TEST also makes PATTERN the default stack auto-init;
		# keep the real build's ZERO, so that only the option differs
		# (and ccache can share the objects of the real build).
		set=(--set CONFIG_COMPILE_TEST=y --set CONFIG_TASK_ISOLATION=y
			--set CONFIG_INIT_STACK_ALL_ZERO=y)
		want=y
	else
		set=(--set CONFIG_TASK_ISOLATION=n)
	fi
	BUILD=$BUILD "$TOP/tools/kernel.sh" --arch "$arch" --src "$wt" --obj "$obj" "${set[@]}" \
		>"$LOGDIR/bisect-$arch-$mode.log" 2>&1 ||
		die $E_FAIL "commit $(git -C "$wt" log -1 --format='%h %s' "$c") does not build for $arch ($mode${set:+: ${set[*]}}); see $obj/build.log and $LOGDIR/bisect-$arch-$mode.log"
	# kernel.sh checks the requested symbols too; this guards the claim
	# that the core code was compiled at all.
	if [ "$want" = y ] && ! grep -qx 'CONFIG_TASK_ISOLATION=y' "$obj/.config"; then
		die $E_FAIL "CONFIG_TASK_ISOLATION is not y in $obj/.config at $(git -C "$wt" log -1 --format='%h %s' "$c") ($arch): the option was dropped"
	fi
	for f in $(git -C "$wt" diff-tree --no-commit-id --name-only -r "$c" -- '*.c'); do
		case $f in arch/*) [[ $f == arch/$(srcarch "$arch")/* ]] || continue ;; esac
		in_build "$obj" "${f%.c}.o" || continue	# not built in this config
		objs+=("${f%.c}.o")
	done
	[ ${#objs[@]} -gt 0 ] || return 0
	for f in "${objs[@]}"; do touch "$wt/${f%.o}.c"; done	# force a W=1 recompile
	kernel_make "$wt" "$obj" "$arch"
	"${KMAKE[@]}" W=1 "${objs[@]}" >"$LOGDIR/bisect-w1.log" 2>&1 ||
		die $E_FAIL "W=1 build of ${objs[*]} failed at $(git -C "$wt" log -1 --format='%h %s' "$c") ($arch)"
	# Only what the commit adds counts: a warning on a line it added or
	# changed (the files' older warnings, such as kernel-doc of functions
	# it does not touch, are upstream's).
	grep -E 'warning:' "$LOGDIR/bisect-w1.log" | sort -u >"$LOGDIR/bisect-w1.all" || true
	new_warnings "$c" <"$LOGDIR/bisect-w1.all" >"$LOGDIR/bisect-w1.warn"
	if [ -s "$LOGDIR/bisect-w1.warn" ]; then
		cat "$LOGDIR/bisect-w1.warn" >&2
		die $E_FAIL "W=1 warnings on lines changed by $(git -C "$wt" log -1 --format='%h %s' "$c") ($arch)"
	fi
	[ ! -s "$LOGDIR/bisect-w1.all" ] ||
		progress "$(wc -l <"$LOGDIR/bisect-w1.all") W=1 warning(s) in touched files, none on a line $(git -C "$wt" log -1 --format=%h "$c") changed" 
}

# unchanged_for ARCH COMMIT: true if COMMIT changes no file that ARCH's
# kernel build reads (only other architectures, tools/testing/,
# Documentation/), so that its build equals the previous commit's.  The rest
# of tools/ is not exempt: objtool is built from it.
unchanged_for() {
	local f
	while read -r f; do
		case $f in
		arch/"$(srcarch "$1")"/*) return 1 ;;
		arch/* | tools/testing/* | Documentation/* | MAINTAINERS) ;;
		*) return 1 ;;
		esac
	done < <(git -C "$wt" diff-tree --no-commit-id --name-only -r "$2")
}

mapfile -t commits < <(tgit rev-list --reverse "base..$TIP_BRANCH")
started=${from:+0}
i=0 built=0 skipped=0
for c in "${commits[@]}"; do
	i=$((i + 1))
	if [ -n "$from" ] && [ "$started" = 0 ]; then
		[ "$(tgit rev-parse "$from")" = "$c" ] && started=1 || continue
	fi
	git -C "$wt" checkout -q --detach "$c"
	for a in $arches; do
		what="[$i/${#commits[@]}] $(git -C "$wt" log -1 --format='%h %s' "$c" | cut -c1-60): $a"
		# Skip only when this run built the previous commit for $a.
		if [ "$built" -gt 0 ] && unchanged_for "$a" "$c"; then
			progress "$what: no file of this build changed, skipped"
			skipped=$((skipped + 1))
			continue
		fi
		if supports "$a"; then
			progress "$what"
		elif compile_testable "$a"; then
			progress "$what, COMPILE_TEST"
		else
			progress "$what, CONFIG_TASK_ISOLATION=n (not supported yet)"
		fi
		build "$a" "$c" on
		if supports "$a"; then
			progress "$what, CONFIG_TASK_ISOLATION=n"
			build "$a" "$c" off
		fi
	done
	built=$((built + 1))
done
progress "${#commits[@]} commit(s) x ($arches) build with the option on (COMPILE_TEST before the architecture supports it, where Kconfig allows) and, where supported, off; W=1 clean in touched files ($skipped skipped: nothing they read changed); in $(($(date +%s) - t0)) s"
