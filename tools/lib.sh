# SPDX-License-Identifier: GPL-2.0
# Shared helpers for the scripts in tools/.  Source it; do not run it.
#
# Layout (all outside git, under $BUILD, default ./build):
#   $BUILD/base.git      bare repository holding only the imported base commit(s)
#   $BUILD/linux         the kernel work tree: topic branches + "tip"; its object
#                        store borrows the base objects from base.git (alternates)
#   $BUILD/obj/<arch>-<config>    out-of-tree kernel objects (make kernel)
#   $BUILD/patches/v<N>/ the exported mail (make patches, recipients, send)
#   $BUILD/boot/<arch>-<config>-<time>/   one boot test
#   $BUILD/obj/bench-<arch>-<kernel>/   the benchmark's kernels (base, off, on)
#   $BUILD/bench/<time>/ one benchmark run (make bench); bench/base-src: a
#                        worktree of the base, the benchmark's stock kernel
#   $BUILD/logs          one log per script run
# Every such name is made by a function below (obj_dir, kernel_image,
# rootfs_image, patch_dir, bench_obj_dir, ...): no script runs another to
# learn a path.
# <config> is the config variant: default or debug (CONFIG=, --config).
#
# Exit codes shared by every script:
#   0 success, 1 failure of the thing under test, 2 usage error,
#   3 missing tool or package, 4 refused to protect unsaved work,
#   5 bad input (wrong version, corrupt bundle, checksum mismatch)

set -euo pipefail

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BUILD:-${O:-$TOP/build}}
case $BUILD in /*) ;; *) BUILD=$PWD/$BUILD ;; esac
TREE=$BUILD/linux
BASE_GIT=$BUILD/base.git
LOGDIR=$BUILD/logs
SERIES_FILE=$TOP/topic-branches/series
BUNDLE_DIR=$TOP/topic-branches
TIP_BRANCH=tip

E_FAIL=1 E_USAGE=2 E_TOOL=3 E_UNSAVED=4 E_INPUT=5

# Identity and dates used for the deterministic base import.  Changing any
# of these changes the base commit id and invalidates every bundle.
IMPORT_NAME="Debian linux-source importer"
IMPORT_EMAIL="import@task-isolation.invalid"
IMPORT_DATE="2000-01-01T00:00:00+0000"

PROG=$(basename "$0" .sh)

msg() { printf '%s: %s\n' "$PROG" "$*" >&2; }
die() {
	local rc=$1
	shift
	printf '%s: error: %s\n' "$PROG" "$*" >&2
	exit "$rc"
}
# Option parsing, one style in every script: the script defines usage()
# and loops over its arguments with a case statement; an unknown option, a
# stray argument or a missing value ends in bad_usage: the reason, the usage
# on stderr, exit 2.
#   --arch) need_value "$@"; arch=$2; shift 2 ;;
#   -h | --help) usage; exit 0 ;;
#   *) bad_usage "unknown option: $1" ;;
bad_usage() {
	[ -z "${1:-}" ] || msg "$1"
	usage >&2
	exit $E_USAGE
}
# need_value OPT [VALUE...]: OPT must be followed by a value (not empty,
# not another option).
need_value() {
	[ $# -ge 2 ] && [ -n "$2" ] && [ "${2#-}" = "$2" ] || bad_usage "$1 needs a value"
}
# no_options "$@": for scripts that take none but --help.
no_options() {
	case ${1:-} in
	"") ;;
	-h | --help) usage; exit 0 ;;
	*) bad_usage "unknown option or argument: $1" ;;
	esac
	[ $# -le 1 ] || bad_usage "unexpected argument: $2"
}

# progress STEP...: a timestamped line for long steps.
progress() { printf '[%s] %s: %s\n' "$(date +%H:%M:%S)" "$PROG" "$*" >&2; }

# start_progress LABEL FN ARG: until stop_progress (or the end of this
# script), print "LABEL: <output of FN ARG>, <elapsed> s" every
# $PROGRESS_EVERY (default 30) seconds, from a background loop that only
# sleeps in between: the step it watches runs in the foreground.
start_progress() {
	local label=$1 fn=$2 arg=$3 parent=$$ every=${PROGRESS_EVERY:-30}
	stop_progress
	(
		trap - EXIT
		t0=$SECONDS next=$((SECONDS + every))
		while sleep 2; do
			kill -0 "$parent" 2>/dev/null || exit 0
			[ $SECONDS -ge $next ] || continue
			next=$((next + every))
			progress "$label: $("$fn" "$arg" 2>/dev/null), $((SECONDS - t0)) s"
		done
	) &
	PROGRESS_PID=$!
}
stop_progress() {
	[ -z "${PROGRESS_PID:-}" ] || kill "$PROGRESS_PID" 2>/dev/null || true
	PROGRESS_PID=""
}

# kbuild_count LOG: how far a kernel build is, from its (quiet) make log.
kbuild_count() {
	local n
	n=$(grep -cE '^  (CC|AS|CC \[M\])  ' "$1" || true)
	echo "$n objects compiled, last: $(grep -E '^  [A-Z]' "$1" | tail -n 1 | awk '{ print $NF }')"
}

# last_line LOG: the last non-empty line of LOG, shortened.
last_line() { grep -a . "$1" | tail -n 1 | tr -d '\r' | cut -c1-70; }

# start_log NAME: tee stderr and stdout into $LOGDIR/NAME-<time>.log.
start_log() {
	mkdir -p "$LOGDIR"
	LOGFILE=$LOGDIR/$1-$(date +%Y%m%d-%H%M%S).log
	exec > >(tee -a "$LOGFILE") 2> >(tee -a "$LOGFILE" >&2)
	msg "log: $LOGFILE"
}

need_tools() {
	local t missing=()
	for t in "$@"; do
		command -v "$t" >/dev/null 2>&1 || missing+=("$t")
	done
	[ ${#missing[@]} -eq 0 ] ||
		die $E_TOOL "missing tool(s): ${missing[*]} (run: make deps)"
}

# base_field KEY [FILE]: value of "key: value" in upstream-base.txt.
base_field() {
	local file=${2:-$TOP/upstream-base.txt}
	sed -n "s/^$1:[[:space:]]*//p" "$file" | head -n 1
}

# series_topics: topic names in series order (comments, blanks and the
# "@NAME" mail-series markers skipped).
series_topics() {
	[ -f "$SERIES_FILE" ] || return 0
	sed -e 's/#.*//' -e 's/[[:space:]]*$//' -e '/^$/d' -e '/^@/d' "$SERIES_FILE"
}

bundle_path() { echo "$BUNDLE_DIR/$1.bundle"; }

# bundle_header BUNDLE: the text header of a v2/v3 git bundle (up to the
# blank line that precedes the pack).
bundle_header() { LC_ALL=C sed -n '/^$/q;p' "$1"; }

# bundle_intact BUNDLE: the file is a git bundle whose pack data is intact
# (its trailing SHA-1 matches).  'git bundle verify' only checks the
# prerequisites, and fetching skips a pack whose objects are already present,
# so a damaged bundle would otherwise go unnoticed until a fresh clone.
bundle_intact() {
	local b=$1 hlen want have
	case $(head -c 16 "$b" 2>/dev/null) in
	"# v2 git bundle"* | "# v3 git bundle"*) ;;
	*) return 1 ;;
	esac
	hlen=$(($(bundle_header "$b" | wc -c) + 1))
	[ "$(tail -c +$((hlen + 1)) "$b" | head -c 4)" = PACK ] || return 1
	want=$(tail -c 20 "$b" | od -An -tx1 | tr -d ' \n')
	have=$(tail -c +$((hlen + 1)) "$b" | head -c -20 | sha1sum | cut -d' ' -f1)
	[ "$want" = "$have" ]
}

# bundle_head BUNDLE NAME: the commit the bundle records for refs/heads/NAME.
bundle_head() {
	bundle_header "$1" | awk -v r="refs/heads/$2" '$2 == r { print $1 }'
}

# bundle_prereqs BUNDLE: prerequisite commit ids.
bundle_prereqs() { bundle_header "$1" | sed -n 's/^-\([0-9a-f]\{40\}\).*/\1/p'; }

tgit() { git -C "$TREE" "$@"; }

# base_ref VERSION: where base.git keeps the import of a package version.
base_ref() { echo "refs/bases/$(echo "$1" | tr '~:' '__')"; }

# tree_unsaved: print a description of work in $TREE that no bundle holds:
# commits on local branches not reachable from any bundle head (or the
# base), uncommitted edits and untracked files.  Prints nothing when safe.
tree_unsaved() {
	[ -d "$TREE/.git" ] || return 0
	local keep=() t b h ref name n
	for t in $(series_topics); do
		b=$(bundle_path "$t")
		[ -f "$b" ] || continue
		h=$(bundle_head "$b" "$t")
		[ -n "$h" ] && tgit cat-file -e "$h^{commit}" 2>/dev/null && keep+=("^$h")
	done
	for ref in $(tgit for-each-ref --format='%(objectname)' refs/heads/base); do
		keep+=("^$ref")
	done
	while read -r ref name; do
		n=$(tgit rev-list --count "$ref" "${keep[@]}" 2>/dev/null || echo 0)
		if [ "$n" -gt 0 ]; then
			echo "branch $name has $n commit(s) not saved in any bundle:"
			tgit log --oneline --no-decorate "$ref" "${keep[@]}" | head -n 10 |
				sed 's/^/    /'
		fi
	done < <(tgit for-each-ref --format='%(objectname) %(refname:short)' refs/heads/)
	local st
	st=$(tgit status --porcelain 2>/dev/null | head -n 20)
	if [ -n "$st" ]; then
		echo "uncommitted edits or untracked files:"
		printf '%s\n' "$st" | sed 's/^/    /'
	fi
}

# protect_tree ACTION: refuse ACTION when $TREE holds unsaved work, unless
# FORCE=1, in which case keep a backup ref and a stash of what is dropped.
protect_tree() {
	local report
	report=$(tree_unsaved)
	[ -n "$report" ] || return 0
	if [ "${FORCE:-0}" != 1 ]; then
		printf '%s\n' "$report" >&2
		die $E_UNSAVED "$TREE holds work that is not in topic-branches/*.bundle; refusing to $1.
  save it:    commit on the topic branch, then 'make save' (and git commit the bundles)
  discard it: 'make $2 FORCE=1' (keeps refs/backup/* and a git stash in $TREE)"
	fi
	local stamp ref name
	stamp=$(date +%Y%m%d-%H%M%S)
	while read -r ref name; do
		tgit update-ref "refs/backup/$stamp/$name" "$ref"
	done < <(tgit for-each-ref --format='%(objectname) %(refname:short)' refs/heads/)
	if [ -n "$(tgit status --porcelain | head -n 1)" ]; then
		tgit stash push --include-untracked -q -m "FORCE=1 backup $stamp"
		msg "uncommitted edits saved as: $(tgit stash list | head -n 1)"
	fi
	msg "FORCE=1: branch tips saved under refs/backup/$stamp/ in $TREE"
}

# ensure_package PACKAGE VERSION: make apt's PACKAGE be exactly VERSION.
ensure_package() {
	local pkg=$1 ver=$2 have
	have=$(dpkg-query -W -f='${Status} ${Version}' "$pkg" 2>/dev/null || true)
	[ "$have" = "install ok installed $ver" ] && return 0
	need_tools apt-get apt-cache
	if ! apt-cache madison "$pkg" 2>/dev/null | awk '{print $3}' | grep -qxF "$ver"; then
		[ "$(id -u)" = 0 ] && apt-get update -qq >/dev/null 2>&1 || true
	fi
	if ! apt-cache madison "$pkg" 2>/dev/null | awk '{print $3}' | grep -qxF "$ver"; then
		local offered
		offered=$(apt-cache madison "$pkg" 2>/dev/null | awk '{print $3}' | paste -sd' ' -)
		die $E_INPUT "$pkg version $ver is not offered by apt (offered: ${offered:-none}); pick one and run 'make rebase VERSION=<version>'"
	fi
	[ "$(id -u)" = 0 ] ||
		die $E_TOOL "$pkg $ver is not installed; run as root: apt-get install $pkg=$ver"
	progress "installing $pkg=$ver with apt"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --allow-downgrades \
		--no-install-recommends "$pkg=$ver" >"$LOGDIR/apt-$pkg.log" 2>&1 ||
		die $E_TOOL "apt-get install $pkg=$ver failed; see $LOGDIR/apt-$pkg.log"
}

# strip_debian_gitignore DIR: Debian's tarball appends "/*" and "!/debian/" to
# the top-level .gitignore (its packaging repository ignores the kernel
# tree).  Remove exactly that block so new files stay visible to git; the
# change is deterministic, so the base commit id stays reproducible.
strip_debian_gitignore() {
	local gi=$1/.gitignore
	[ -f "$gi" ] || return 0
	awk '
		{ line[NR] = $0 }
		/^# Debian packaging/ { k = NR }
		END {
			n = NR
			if (k && line[n] == "!/debian/" && line[n-1] == "/*") {
				n = k - 1
				if (line[n] == "#")
					n--
				while (n > 0 && line[n] == "")
					n--
			}
			for (i = 1; i <= n; i++) print line[i]
		}' "$gi" >"$gi.new"
	mv "$gi.new" "$gi"
}

# import_base VERSION SHA256 DEST: import linux-source-<series> VERSION into
# base.git as a deterministic commit and leave its unpacked tree in DEST
# (a new directory).  Prints the commit id.
import_base() {
	local ver=$1 sum=$2 dest=$3
	local pkg tarball have id tree
	pkg=$(base_field package)
	tarball=$(base_field tarball)
	ensure_package "$pkg" "$ver"
	progress "verifying sha256 of $tarball"
	have=$(sha256sum "$tarball" | cut -d' ' -f1)
	[ "$have" = "$sum" ] ||
		die $E_INPUT "sha256 of $tarball is $have, upstream-base.txt expects $sum; reinstall the package (apt-get install --reinstall $pkg=$ver) or fix the pin"
	[ ! -e "$dest" ] || die $E_FAIL "$dest exists; remove it first"
	mkdir -p "$dest"
	progress "unpacking $tarball (about 20 s)"
	tar -xf "$tarball" -C "$dest" --strip-components=1 --no-same-owner
	strip_debian_gitignore "$dest"
	[ -d "$BASE_GIT" ] || git init -q --bare "$BASE_GIT"
	progress "hashing the tree into $BASE_GIT (about a minute)"
	local gitx=(git -c core.autocrlf=false -c core.fileMode=true -c core.symlinks=true
		-c core.bigFileThreshold=512m --git-dir="$BASE_GIT" --work-tree="$dest")
	rm -f "$BUILD/import.index"
	GIT_INDEX_FILE=$BUILD/import.index "${gitx[@]}" add -A -f .
	tree=$(GIT_INDEX_FILE=$BUILD/import.index "${gitx[@]}" write-tree)
	id=$(GIT_AUTHOR_NAME=$IMPORT_NAME GIT_AUTHOR_EMAIL=$IMPORT_EMAIL \
		GIT_AUTHOR_DATE=$IMPORT_DATE GIT_COMMITTER_NAME=$IMPORT_NAME \
		GIT_COMMITTER_EMAIL=$IMPORT_EMAIL GIT_COMMITTER_DATE=$IMPORT_DATE \
		"${gitx[@]}" commit-tree --no-gpg-sign "$tree" \
		-m "Import $pkg $ver" \
		-m "Unpacked from /usr/src of Debian's $pkg package, version $ver.
The trailing Debian-packaging block of the top-level .gitignore is removed.")
	git --git-dir="$BASE_GIT" update-ref "$(base_ref "$ver")" "$id"
	echo "$id"
}

# tree_create BASE_ID SRC_DIR: make $TREE from an unpacked import (moved,
# not copied, with the import's index) and point it at base.git's objects.
tree_create() {
	local id=$1 src=$2
	mv "$src" "$TREE"
	git init -q "$TREE"
	echo "$BASE_GIT/objects" >"$TREE/.git/objects/info/alternates"
	tgit config core.autocrlf false
	tgit config sendemail.smtpserver /usr/sbin/sendmail
	tgit update-ref refs/heads/base "$id"
	tgit update-ref "refs/heads/$TIP_BRANCH" "$id"
	tgit symbolic-ref HEAD "refs/heads/$TIP_BRANCH"
	mv "$BUILD/import.index" "$TREE/.git/index"
	tgit update-index -q --refresh >/dev/null || true
}

# Caches that survive "rm -rf build": rootfs images, debootstrap debs, ccache.
CACHE=${TI_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/task-isolation}
export CCACHE_DIR=${CCACHE_DIR:-$CACHE/ccache}

# Config variants.  default and debug start from allnoconfig:
# configs/common.config + configs/<arch>.config, and for debug also
# configs/debug.config and configs/<arch>-debug.config.  debian and
# debian-rt start from Debian's own config of the pinned version (flavour
# none or rt, tools/debian-config.sh), with every module turned off
# (mod2noconfig) and only configs/debian.config added.
CONFIGS="default debug debian debian-rt"
check_config() {
	case " $CONFIGS " in *" $1 "*) ;; *) bad_usage "--config must be one of: $CONFIGS" ;; esac
}

# obj_dir ARCH CONFIG: where 'make kernel' builds.
obj_dir() { echo "$BUILD/obj/$1-$2"; }

# The benchmark (make bench): its runs under $BENCH_DIR/<time>/, the base's
# worktree, and bench_obj_dir ARCH KERNEL (base, off or on): where it builds.
BENCH_DIR=$BUILD/bench
BENCH_BASE_SRC=$BENCH_DIR/base-src
bench_obj_dir() { echo "$BUILD/obj/bench-$1-$2"; }

# base_worktree: check out the pinned base (branch base of $TREE) at
# $BENCH_BASE_SRC, the stock kernel that make bench and make soak compare
# the series with.  A detached worktree: no branch of its own, so nothing
# that 'make save' or the unsaved-work checks look at.
base_worktree() {
	local base_id
	base_id=$(git -C "$TREE" rev-parse -q --verify 'refs/heads/base^{commit}') ||
		die $E_INPUT "$TREE has no base branch (run: make tree)"
	if ! git -C "$BENCH_BASE_SRC" rev-parse --git-dir >/dev/null 2>&1; then
		rm -rf "$BENCH_BASE_SRC"
		git -C "$TREE" worktree prune
		progress "adding a worktree of the base at $BENCH_BASE_SRC"
		git -C "$TREE" worktree add -q --detach "$BENCH_BASE_SRC" "$base_id" ||
			die $E_FAIL "git worktree add $BENCH_BASE_SRC failed"
	elif [ "$(git -C "$BENCH_BASE_SRC" rev-parse HEAD)" != "$base_id" ]; then
		git -C "$BENCH_BASE_SRC" checkout -q --detach "$base_id"
	fi
}

# kernel_image ARCH CONFIG [OBJ]: the boot image 'make kernel' leaves.
kernel_image() {
	arch_facts "$1"
	echo "${3:-$(obj_dir "$1" "$2")}/arch/$SRCARCH/boot/$IMAGE"
}

# debian_config_path ARCH FLAVOUR: where tools/debian-config.sh unpacks
# Debian's config of ARCH and FLAVOUR (none or rt) for the pinned version.
debian_config_path() {
	local kflavour
	arch_facts "$1"
	case $DEBARCH in
	armhf) kflavour=armmp-lpae ;;
	*) kflavour=$DEBARCH ;;
	esac
	echo "$CACHE/debian-config/$(base_field version)/config.${DEBARCH}_$2_$kflavour"
}

# check_runs: what 'make check' boots, one "ARCH:CONFIG" a line, from the
# check column of tools/arches.
check_runs() {
	local a c
	for a in $(arch_list); do
		arch_facts "$a"
		for c in $CHECK_CONFIGS; do echo "$a:$c"; done
	done
}

# config_flavour CONFIG: the Debian flavour a config variant starts from
# (none or rt), or nothing for the allnoconfig-based ones.
config_flavour() {
	case $1 in
	debian) echo none ;;
	debian-rt) echo rt ;;
	esac
}

# config_fragments ARCH CONFIG: the fragments, in order (later lines win).
config_fragments() {
	if [ -n "$(config_flavour "$2")" ]; then
		echo "$TOP/configs/debian.config"
		[ ! -f "$TOP/configs/$1-debian.config" ] || echo "$TOP/configs/$1-debian.config"
		return
	fi
	echo "$TOP/configs/common.config"
	echo "$TOP/configs/$1.config"
	if [ "$2" = debug ]; then
		echo "$TOP/configs/debug.config"
		[ ! -f "$TOP/configs/$1-debug.config" ] || echo "$TOP/configs/$1-debug.config"
	fi
}

# config_missing WANT CONFIG: the lines "  CONFIG_X: wanted V, got W" of
# the assignments in WANT (a fragment; comments ignored) that CONFIG (a
# .config) does not have.  An absent symbol counts as "n".
config_missing() {
	awk -F= '
	NR == FNR { if ($0 ~ /^CONFIG_/) want[$1] = substr($0, length($1) + 2); next }
	/^CONFIG_/ { i = index($0, "="); have[substr($0, 1, i - 1)] = substr($0, i + 1) }
	END {
		for (k in want) {
			v = (k in have) ? have[k] : "n"
			if (v != want[k]) printf "  %s: wanted %s, got %s\n", k, want[k], v
		}
	}' "$1" "$2" | sort
}

# SUITE_CONFIG: the options the selftest suite needs (kselftest's "config"
# file of the in-tree suite).  It lists them for every architecture; an
# option that only some architectures define applies to those.
SUITE_CONFIG=$TOP/test/in-tree/config

# suite_config_wanted SRC ARCH CONFIG [unavailable]: the lines of
# SUITE_CONFIG that the Kconfig files of SRC define for ARCH (outside
# arch/, or under arch/<srcarch>/) and that CONFIG (a .config) shows as
# set or as "is not set", i.e. whose dependencies are met.  With
# "unavailable", those it defines whose dependencies CONFIG does not meet
# (transparent huge pages under PREEMPT_RT, say): the tests that need
# them skip, and test/expected-skips says when that is allowed.
suite_config_wanted() {
	local src=$1 defined visible invert=""
	arch_facts "$2"
	defined=$( {
		grep -rhoE --include='Kconfig*' --exclude-dir=arch --exclude-dir=tools \
			'^[[:space:]]*(menu)?config [A-Za-z0-9_]+' "$src"
		grep -rhoE --include='Kconfig*' '^[[:space:]]*(menu)?config [A-Za-z0-9_]+' "$src/arch/$SRCARCH"
	} | awk '{ print "CONFIG_" $2 "=" }' | sort -u)
	visible=$(sed -n -e 's/^\(CONFIG_[A-Za-z0-9_]*\)=.*/\1=/p' \
		-e 's/^# \(CONFIG_[A-Za-z0-9_]*\) is not set$/\1=/p' "$3")
	# grep -f with no pattern line would match everything
	visible=${visible:-(none)}
	[ "${4:-}" != unavailable ] || invert=-v
	grep -E '^CONFIG_' "$SUITE_CONFIG" | grep -F -f <(echo "$defined") |
		grep $invert -F -f <(echo "$visible") || true
}

# suite_config_missing SRC ARCH CONFIG: like config_missing, for the
# options suite_config_wanted gives.
suite_config_missing() {
	suite_config_wanted "$@" | config_missing /dev/stdin "$3"
}

# kernel_make SRC OBJ ARCH: set KMAKE to the kernel make command line for
# ARCH (cross compiler through ccache, -j\$JOBS); append targets to it.
kernel_make() {
	local cc
	arch_facts "$3"
	cc="${CROSS}gcc"
	! command -v ccache >/dev/null || cc="ccache $cc"
	KMAKE=(make -C "$1" O="$2" ARCH="$KARCH" CROSS_COMPILE="$CROSS" CC="$cc"
		HOSTCC="${HOSTCC:-gcc}" -j"${JOBS:-$(nproc)}")
}

# rootfs_image ARCH: the cached guest image for ARCH; its name carries a
# hash of the recipe (rootfs/ and the arch's guest packages).
rootfs_image() {
	local key
	arch_facts "$1"
	key=$( (echo "$DEBARCH"; [ -z "$GUEST_PKGS" ] || echo "$GUEST_PKGS"; cd "$TOP/rootfs" &&
		for f in $(ls); do echo "$f"; cat "$f"; done) | sha256sum | cut -c1-12)
	echo "$CACHE/rootfs/debian12-$DEBARCH-$key.ext4"
}

# The per-architecture facts live in one table, tools/arches.
ARCH_TABLE=$TOP/tools/arches

# arch_rows: the table without comments and blank lines.
arch_rows() { sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$ARCH_TABLE"; }

# arch_list: the test architectures, in table order (the first is the default).
arch_list() { arch_rows | awk '{ print $1 }'; }

# arch_facts ARCH: set, from ARCH's row of tools/arches, KARCH (the kernel's
# ARCH=), SRCARCH (its directory under arch/), CROSS (the compiler prefix,
# empty for the host), COMPAT_CROSS (that of its 32-bit user space, empty
# for none), IMAGE (the boot image, make target and path under
# arch/$SRCARCH/boot/), DEBARCH (Debian's name), QEMU, QEMU_MACHINE,
# QEMU_CPU, CONSOLE, HOST_PKGS, GUEST_PKGS and CHECK_CONFIGS (space-separated)
# and BOOTARGS.
arch_facts() {
	local row name f
	row=$(arch_rows | awk -v a="$1" '$1 == a')
	[ -n "$row" ] || die $E_USAGE "unknown arch '$1' (tools/arches has: $(arch_list | paste -sd' ' -))"
	read -r name KARCH SRCARCH CROSS COMPAT_CROSS IMAGE DEBARCH QEMU QEMU_MACHINE QEMU_CPU \
		CONSOLE HOST_PKGS GUEST_PKGS CHECK_CONFIGS BOOTARGS <<<"$row"
	for f in KARCH SRCARCH CROSS COMPAT_CROSS IMAGE DEBARCH QEMU QEMU_MACHINE QEMU_CPU CONSOLE HOST_PKGS \
		GUEST_PKGS CHECK_CONFIGS BOOTARGS; do
		[ "${!f}" != - ] || printf -v "$f" '%s' ""
	done
	HOST_PKGS=${HOST_PKGS//,/ } GUEST_PKGS=${GUEST_PKGS//,/ } CHECK_CONFIGS=${CHECK_CONFIGS//,/ }
	[ -n "$BOOTARGS$CHECK_CONFIGS" ] || die $E_INPUT "tools/arches: the row of $1 has too few columns"
}

# qemu_argv ARCH KERNEL CPUS CMDLINE DRIVE...: fill QEMU_ARGV for a TCG guest
# with a serial console on stdio.  Each DRIVE is "file[,opt...]" (virtio).
# With QEMU_NODES=N (default 1) the guest has N NUMA nodes: the CPUs and
# the 1 GiB of memory split evenly, in order, a last-level cache per node
# (4 CPUs, 2 nodes: CPUs 0-1 and 512 MiB on node 0, CPUs 2-3 and 512 MiB on
# node 1).
qemu_argv() {
	local arch=$1 kernel=$2 cpus=$3 cmdline=$4 d n nodes=${QEMU_NODES:-1} mem=1024 smp cpu_opt=""
	shift 4
	arch_facts "$arch"
	smp=$cpus
	if [ "$nodes" -gt 1 ]; then
		[ $((cpus % nodes)) = 0 ] || die $E_USAGE "$cpus CPUs do not split evenly over $nodes NUMA nodes"
		# The CPUs of one node must not share a last-level cache with
		# the other node's (x86 warns about an LLC across nodes): a
		# socket per node.  On x86 two sockets would cost the guest its
		# TSC clocksource (the TSC sync check between sockets fails
		# under TCG): one socket, no L3, and Intel's cache topology
		# (CPUID leaf 4: an L2 per core; QEMU's default vendor for TCG
		# reports the LLC per package).
		case $KARCH in
		x86_64) cpu_opt=,vendor=GenuineIntel,l3-cache=off ;;
		*) smp="$cpus,sockets=$nodes,cores=$((cpus / nodes)),threads=1" ;;
		esac
	fi
	QEMU_ARGV=("$QEMU" -accel tcg -smp "$smp" -m $mem -nographic -no-reboot
		-kernel "$kernel" -append "console=$CONSOLE panic=-1 $cmdline"
		-M "$QEMU_MACHINE" -cpu "$QEMU_CPU$cpu_opt")
	if [ "$nodes" -gt 1 ]; then
		for ((n = 0; n < nodes; n++)); do
			QEMU_ARGV+=(-object "memory-backend-ram,id=mem$n,size=$((mem / nodes))M"
				-numa "node,nodeid=$n,memdev=mem$n,cpus=$((n * cpus / nodes))-$(((n + 1) * cpus / nodes - 1))")
		done
	fi
	for d in "$@"; do
		QEMU_ARGV+=(-drive "file=$d,if=virtio,format=raw")
	done
}

# The mail.  A cover letter starts with "Key: value" lines up to the first
# blank line (Version:, Subject:, optionally To:, Cc:, Files:); the rest is
# its body.  The topics of topic-branches/series are exported as one or
# more numbered series: a line "@NAME" there starts series NAME, whose cover
# letter is cover-letters/NAME.txt; the topics before any such line, or
# after "@main", form the main series, whose cover letter is
# cover-letter.txt.  A cover letter in cover-letters/ with a "Files:" line
# (say "Files: man-pages/*.patch") is a series of patches kept in this
# repository for another project instead.
COVER=$TOP/cover-letter.txt
COVER_DIR=$TOP/cover-letters

# cover_field FILE KEY: a header field of a cover letter.
cover_field() { sed -n "1,/^\$/s/^$2:[[:space:]]*//p" "$1" | head -n 1; }

# cover_body FILE: the body of a cover letter.
cover_body() { sed '1,/^$/d' "$1"; }

# cover_file NAME: the cover letter of mail series NAME.
cover_file() {
	if [ "$1" = main ]; then echo "$COVER"; else echo "$COVER_DIR/$1.txt"; fi
}

# mail_series: one line per mail series, in series order: NAME FIRST LAST
# (its first and last topic), or NAME - - for a series of files (Files:).
mail_series() {
	[ -f "$SERIES_FILE" ] || return 0
	sed -e 's/#.*//' -e 's/[[:space:]]*$//' -e '/^$/d' "$SERIES_FILE" |
		awk 'BEGIN { cur = "main" }
			/^@/ { cur = substr($1, 2); if (cur == "") cur = "main"; next }
			{
				if (!(cur in first)) { first[cur] = $1; order[++n] = cur }
				else if (prev != cur) { print "error " cur; exit }
				last[cur] = $1; prev = cur
			}
			END { for (i = 1; i <= n; i++) print order[i], first[order[i]], last[order[i]] }'
	local c
	for c in "$COVER_DIR"/*.txt; do
		[ -f "$c" ] && [ -n "$(cover_field "$c" Files)" ] || continue
		echo "$(basename "$c" .txt) - -"
	done
}

# series_dir NAME: where 'make patches' writes mail series NAME: v<N> for
# the main series, NAME-v<N> for the others (N: the Version: line).
series_dir() {
	local v c
	c=$(cover_file "$1")
	[ -f "$c" ] || die $E_INPUT "mail series $1 (topic-branches/series) has no cover letter ${c#"$TOP"/}"
	v=$(cover_field "$c" Version)
	[ -n "$v" ] || die $E_INPUT "${c#"$TOP"/} has no Version: line"
	if [ "$1" = main ]; then echo "$BUILD/patches/v$v"; else echo "$BUILD/patches/$1-v$v"; fi
}

# patch_dir: the main series' directory.
patch_dir() { series_dir main; }

# patch_dirs [--kernel]: every mail series' directory, in series order
# (--kernel: only those of kernel topics, not of Files: series).
patch_dirs() {
	local name first last
	while read -r name first last; do
		[ "$name" != error ] || die $E_INPUT "topic-branches/series: the topics of mail series $first are not contiguous"
		[ "${1:-}" != --kernel ] || [ "$first" != - ] || continue
		series_dir "$name"
	done < <(mail_series)
}

# patch_list DIR: the patch files of an exported series, cover letter excluded.
patch_list() { ls "$1"/*.patch 2>/dev/null | grep -v -- '-0000-cover-letter\.patch$' || true; }

# upstream_version: the upstream kernel version the pinned package carries
# (the Debian version without its revision: 6.12.118-1~deb12u1 -> 6.12.118).
upstream_version() { base_field version | sed 's/-[^-]*$//'; }

# submitter: "Name <addr>" of whoever sends the mail: SUBMITTER, else git's
# user.name and user.email (as this repository sees them); empty if unset.
submitter() {
	local n e
	if [ -n "${SUBMITTER:-}" ]; then
		echo "$SUBMITTER"
		return
	fi
	n=$(git -C "$TOP" config user.name || true)
	e=$(git -C "$TOP" config user.email || true)
	[ -z "$n" ] || [ -z "$e" ] || echo "$n <$e>"
}

# ident_problem IDENT: why IDENT ("Name <addr>") cannot sign off or send
# mail to a public list, in a few words; nothing if it can.
ident_problem() {
	local id=$1 name addr dom
	if [ -z "$id" ]; then
		echo "no submitter identity"
		return
	fi
	if ! [[ $id =~ ^([^\<\>]*[^\<\>[:space:]])[[:space:]]*\<([^\<\>@[:space:]]+@[^\<\>@[:space:]]+\.[^\<\>@[:space:]]+)\>$ ]]; then
		echo "'$id' is not 'Name <user@domain>'"
		return
	fi
	name=${BASH_REMATCH[1]} addr=${BASH_REMATCH[2],,}
	dom=${addr#*@}
	case .$dom in
	*.invalid | *.example | *.test | *.localhost | *.local | *.localdomain | *.example.com | *.example.net | *.example.org)
		echo "$addr is a placeholder address (a reserved domain, RFC 2606)" ;;
	*noreply* | *no-reply*) echo "$addr is a no-reply address" ;;
	*)
		case $addr in
		*noreply* | *no-reply* | root@* | nobody@*) echo "$addr is not a personal address" ;;
		*)
			case ${name,,} in
			"your name" | "name" | "root" | *team* | *maintainers* | *placeholder*)
				echo "'$name' is not a person's name" ;;
			esac ;;
		esac ;;
	esac
}

# tree_base: the base commit the topics sit on (refs/heads/base of $TREE).
tree_base() { tgit rev-parse -q --verify refs/heads/base^{commit} || die $E_INPUT "$TREE has no base branch (run: make tree)"; }

# save_bundles BASE_ID: write every topic whose tip or start moved into its
# bundle, verify it, and prove that a replay onto a repository holding only
# the base objects reproduces every commit id.
save_bundles() {
	local base=$1 prev=$1 t b head changed=0 tmp
	for t in $(series_topics); do
		head=$(tgit rev-parse -q --verify "refs/heads/$t^{commit}") ||
			die $E_INPUT "topic $t (topic-branches/series) has no branch in $TREE"
		[ "$head" != "$prev" ] ||
			die $E_INPUT "topic $t has no commits: commit to it or 'tools/topic.sh remove $t'"
		tgit merge-base --is-ancestor "$prev" "$head" ||
			die $E_INPUT "topic $t does not sit on the previous topic's tip $(tgit log -1 --format=%h "$prev"): run 'tools/topic.sh restack'"
		b=$(bundle_path "$t")
		if [ -f "$b" ] && [ "$(bundle_head "$b" "$t")" = "$head" ] &&
			[ "$(bundle_prereqs "$b")" = "$prev" ]; then
			prev=$head
			continue
		fi
		tgit bundle create -q "$b.tmp" "refs/heads/$t" "^$prev" 2>/dev/null ||
			die $E_FAIL "git bundle create failed for $t"
		bundle_intact "$b.tmp" && tgit bundle verify -q "$b.tmp" >/dev/null 2>&1 ||
			die $E_FAIL "the new bundle for $t does not verify; the old one is untouched"
		mv "$b.tmp" "$b"
		progress "saved $t: $(tgit rev-list --count "$prev..$head") commit(s) -> ${b#"$TOP"/}"
		changed=$((changed + 1))
		prev=$head
	done
	tgit update-ref "refs/heads/$TIP_BRANCH" "$prev"

	# Fresh replay: a repository that sees only base.git's objects.
	tmp=$(mktemp -d "$BUILD/replay.XXXXXX")
	# shellcheck disable=SC2064 # expand now: $tmp is local
	trap "rm -rf '$tmp'" EXIT
	git init -q --bare "$tmp"
	echo "$BASE_GIT/objects" >"$tmp/objects/info/alternates"
	prev=$base
	for t in $(series_topics); do
		b=$(bundle_path "$t")
		git --git-dir="$tmp" fetch -q "$b" "refs/heads/$t:refs/heads/$t" 2>"$tmp/err" ||
			die $E_FAIL "fresh replay of $b failed: $(head -n 1 "$tmp/err")"
		head=$(git --git-dir="$tmp" rev-parse "refs/heads/$t")
		[ "$head" = "$(tgit rev-parse "refs/heads/$t")" ] ||
			die $E_FAIL "fresh replay of $t gives $head, not the branch tip"
		git --git-dir="$tmp" fsck --no-dangling --no-progress --connectivity-only "refs/heads/$t" >/dev/null 2>&1 ||
			die $E_FAIL "fresh replay of $t is not connected"
	done
	rm -rf "$tmp"
	progress "$changed bundle(s) written; fresh replay of $(series_topics | wc -l) topic(s) reproduces every commit id"
}

# ti_cmdline ARCH LIST [BOOTARGS]: the guest command line of the boot tests,
# CPUs LIST isolated (root on /dev/vda, /sbin/ti-init runs the test disk's
# run.sh), plus ARCH's bootargs from tools/arches, or BOOTARGS instead when
# given (boot-test.sh --bootargs).  The isolation parameters are those of
# Documentation/userspace-api/task_isolation.rst (nohz_full, isolcpus with
# domain and managed_irq), plus rcu_nocbs (which nohz_full implies) and
# minus irqaffinity=: the guests' device interrupts go where a distro kernel
# puts them by default, and the suite passes so.  With DOMAIN_ONLY=LIST2
# (boot-test.sh --domain-only) the CPUs of LIST2 are isolated from the
# scheduler domains only: isolcpus then lists both sets without its nohz
# flag, which would make LIST2 nohz_full too, and nohz_full= gives LIST.
ti_cmdline() {
	local flags=nohz,domain,managed_irq cpus=$2 c
	[ -z "${DOMAIN_ONLY:-}" ] || { flags=domain,managed_irq; cpus=$2,$DOMAIN_ONLY; }
	c="root=/dev/vda rw init=/sbin/ti-init isolcpus=$flags,$cpus nohz_full=$2 rcu_nocbs=$2"
	arch_facts "$1"
	[ $# -lt 3 ] || BOOTARGS=$3
	[ -z "$BOOTARGS" ] || c="$c $BOOTARGS"
	echo "$c"
}

# console_reports CONSOLE: the first three kernel splats on a guest console
# (panic, Oops, BUG, WARNING, hung task, RCU stall), joined with '|', or
# nothing.
console_reports() {
	tr -d '\r' <"$1" | { grep -aE -m 3 'Kernel panic|Oops|BUG:|WARNING:|INFO: task .* blocked|rcu_.*self-detected stall' || true; } | paste -sd'|' -
}

# emulator_artefact CONSOLE: print why a boot says nothing about the kernel
# under test, or nothing.  An overloaded host can make the emulated local
# APIC timer fail its boot-time calibration; the guest then has no per-CPU
# one-shot timer, hence no nohz_full and no task isolation.  It can also
# make the emulated TSC drift from the HPET by milliseconds, and the
# clocksource watchdog then marks the TSC unstable: sched_clock turns
# unstable, which sets a tick dependency on every nohz_full CPU for good, so
# that no task can be isolated any more.  Callers boot again.
emulator_artefact() {
	if grep -aq 'APIC timer disabled due to verification failure' "$1"; then
		echo "the emulated APIC timer failed calibration"
	elif grep -aq "Marking clocksource 'tsc' as unstable because the skew is too large" "$1"; then
		echo "the emulated TSC drifted from the HPET (clocksource watchdog)"
	fi
}

# qemu_watch CONSOLE TIMEOUT HANG: run QEMU_ARGV (see qemu_argv) with its
# console in CONSOLE until the guest powers off; kill it after TIMEOUT
# seconds, after HANG seconds without console output, or 2 s after a panic.
# Sets QEMU_VERDICT ("" when the guest powered off by itself).  A progress
# line every $QEMU_WATCH_EVERY s (default 60) shows the last console line
# matching $QEMU_WATCH_RE.
qemu_watch() {
	local console=$1 timeout=$2 hang=$3 start now size last_size=-1 last_change qpid
	local last_report
	start=$(date +%s)
	last_change=$start last_report=$start
	QEMU_VERDICT=""
	"${QEMU_ARGV[@]}" </dev/null >"$console" 2>&1 &
	qpid=$!
	while kill -0 "$qpid" 2>/dev/null; do
		sleep 2
		now=$(date +%s)
		size=$(stat -c %s "$console")
		if [ "$size" != "$last_size" ]; then
			last_size=$size last_change=$now
		fi
		if [ $((now - start)) -ge "$timeout" ]; then
			QEMU_VERDICT="timeout: no power-off after ${timeout} s (guest killed)"
			break
		fi
		if [ $((now - last_change)) -ge "$hang" ]; then
			QEMU_VERDICT="hung guest: no console output for ${hang} s (guest killed)"
			break
		fi
		if grep -aq -e 'Kernel panic - not syncing' "$console"; then
			QEMU_VERDICT="kernel panic"
			sleep 2
			break
		fi
		if [ $((now - last_report)) -ge "${QEMU_WATCH_EVERY:-60}" ]; then
			last_report=$now
			progress "$((now - start)) s: $(grep -aE "${QEMU_WATCH_RE:-ti-init}" "$console" | tail -n 1 | tr -d '\r' | cut -c1-90)"
		fi
	done
	if kill -0 "$qpid" 2>/dev/null; then
		kill "$qpid" 2>/dev/null || true
		sleep 1
		kill -9 "$qpid" 2>/dev/null || true
	fi
	wait "$qpid" 2>/dev/null || true
}
