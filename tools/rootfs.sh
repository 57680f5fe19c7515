#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Build (or find in the cache) the Debian 12 test guest image for one arch.
. "$(dirname "$0")/lib.sh"

usage() {
	cat <<EOF2
usage: tools/rootfs.sh [--arch $(arch_list | paste -sd"|" -)] [--config ${CONFIGS// /|}]
                      [--kernel IMAGE] [--print] [--check]

Builds a Debian 12 (bookworm) ext4 image from the recipe in rootfs/
(debootstrap --variant=minbase plus rootfs/packages and the arch's guestpkgs
from tools/arches, /sbin/ti-init as init)
and caches it as \$TI_CACHE/rootfs/<debarch>-<recipe hash>.ext4, so it is
rebuilt only when rootfs/ changes.  Foreign architectures are built with
"debootstrap --foreign"; the second stage then runs inside the guest under
qemu-system-<arch> with the kernel given by --kernel (default: the one that
'make kernel ARCH=<arch> CONFIG=<config>' builds, --config default).  No
binfmt_misc, no loop mounts.

--print  print the image path (building it if needed) as the last line.
--check  print the image path if it is built, else exit 1 (build nothing).
Environment: MIRROR (default http://deb.debian.org/debian), TI_CACHE.
Exit codes: 0 ok, 1 build failed, 2 usage, 3 missing tool.
EOF2
}

arch=$(arch_list | head -n 1) kernel="" check=0 config=default
while [ $# -gt 0 ]; do
	case $1 in
	--arch) need_value "$@"; arch=$2; shift 2 ;;
	--kernel) need_value "$@"; kernel=$2; shift 2 ;;
	--config) need_value "$@"; config=$2; shift 2 ;;
	--print) shift ;;
	--check) check=1; shift ;;
	-h | --help) usage; exit 0 ;;
	*) bad_usage "unknown option: $1" ;;
	esac
done
check_config "$config"
arch_facts "$arch"
img=$(rootfs_image "$arch")
if [ -f "$img" ]; then
	echo "$img"
	exit 0
fi
[ $check = 0 ] || exit 1
need_tools debootstrap mke2fs "$QEMU"
[ "$(id -u)" = 0 ] || die $E_TOOL "debootstrap needs root to build $img"
mkdir -p "$CACHE/rootfs" "$CACHE/debootstrap-$DEBARCH" "$BUILD"
start_log "rootfs-$arch"
foreign=()
[ "$DEBARCH" = "$(dpkg --print-architecture)" ] || foreign=(--foreign)
if [ ${#foreign[@]} -gt 0 ]; then
	kernel=${kernel:-$(kernel_image "$arch" "$config")}
	[ -f "$kernel" ] || die $E_FAIL "the $arch second stage boots a kernel: build it first (make kernel ARCH=$arch CONFIG=$config) or pass --kernel"
fi
dir=$BUILD/rootfs-$DEBARCH
rm -rf "$dir"
pkgs=$( (sed -e 's/#.*//' "$TOP/rootfs/packages"; echo "$GUEST_PKGS") | xargs | tr ' ' ',')
# stages: copy debootstrap's output to the log, and print a progress line
# when it enters a stage (Retrieving, Validating, Extracting, Installing,
# Unpacking, Configuring, ...) and every 30 s within one.
stages() {
	local line stage last="" t0=$SECONDS next=0
	while IFS= read -r line; do
		printf '%s\n' "$line"
		case $line in "I: "*) ;; *) continue ;; esac
		stage=${line#I: }
		stage=${stage%% *}
		if [ "$stage" != "$last" ] || [ $SECONDS -ge $next ]; then
			progress "debootstrap $DEBARCH, $((SECONDS - t0)) s: ${line#I: }"
			last=$stage next=$((SECONDS + 30))
		fi
	done
}
progress "debootstrap bookworm $DEBARCH (minbase + $pkgs) ${foreign[*]:-}"
debootstrap --variant=minbase --arch="$DEBARCH" "${foreign[@]}" --include="$pkgs" \
	--cache-dir="$CACHE/debootstrap-$DEBARCH" \
	bookworm "$dir" "${MIRROR:-http://deb.debian.org/debian}" 2>&1 |
	stages >"$LOGDIR/debootstrap-$DEBARCH.log" ||
	die $E_FAIL "debootstrap failed; see $LOGDIR/debootstrap-$DEBARCH.log"
install -m 0755 "$TOP/rootfs/ti-init" "$dir/sbin/ti-init"
install -m 0755 "$TOP/rootfs/second-stage" "$dir/sbin/ti-second-stage"
echo ti-guest >"$dir/etc/hostname"
# The second stage of a foreign build still needs the downloaded packages.
[ ${#foreign[@]} -gt 0 ] || rm -rf "$dir/var/cache/apt/archives"/*.deb
progress "writing ext4 image"
mke2fs -q -t ext4 -L tiroot -d "$dir" "$img.tmp" 2G ||
	die $E_FAIL "mke2fs failed"
if [ ${#foreign[@]} -gt 0 ]; then
	progress "second stage inside qemu ($QEMU, several minutes under TCG)"
	qemu_argv "$arch" "$kernel" 2 "root=/dev/vda rw init=/sbin/ti-second-stage" "$img.tmp"
	log=$LOGDIR/second-stage-$DEBARCH.log
	: >"$log"
	start_progress "second stage $DEBARCH" last_line "$log"
	timeout 1800 "${QEMU_ARGV[@]}" </dev/null >"$log" 2>&1 || true
	stop_progress
	grep -q 'TI-SECOND-STAGE: OK' "$log" ||
		die $E_FAIL "second stage failed or timed out; see $log"
fi
rm -rf "$dir"
mv "$img.tmp" "$img"
progress "rootfs ready: $img"
echo "$img"
