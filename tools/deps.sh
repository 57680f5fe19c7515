#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Install the Debian 12 packages every target needs (idempotent; root).
. "$(dirname "$0")/lib.sh"

PKGS=(git make gcc libc6-dev bc bison flex libelf-dev libssl-dev dwarves ccache
	xz-utils cpio kmod perl python3 rsync debootstrap e2fsprogs qemu-utils b4 sparse
	gnuplot-nox)
# plus, per architecture, its cross compiler and QEMU (tools/arches)
for a in $(arch_list); do
	arch_facts "$a"
	for p in $HOST_PKGS; do
		[[ " ${PKGS[*]} " == *" $p "* ]] || PKGS+=("$p")
	done
done

usage() {
	echo "usage: tools/deps.sh   install what is missing of: ${PKGS[*]}"
	echo "Exit codes: 0 ok, 2 usage, 3 not root or apt-get failed."
}
no_options "$@"
missing=()
for p in "${PKGS[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
[ "$(id -u)" = 0 ] || die $E_TOOL "missing packages: ${missing[*]}; run as root: apt-get install ${missing[*]}"
progress "apt-get update; installing ${missing[*]}"
mkdir -p "$LOGDIR"
apt-get update -q >"$LOGDIR/apt-update.log" 2>&1 || die $E_TOOL "apt-get update failed; see $LOGDIR/apt-update.log"
DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" \
	>"$LOGDIR/apt-install.log" 2>&1 || die $E_TOOL "apt-get install failed; see $LOGDIR/apt-install.log"
