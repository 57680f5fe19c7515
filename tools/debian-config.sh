#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Debian's own kernel config of the pinned version, for one architecture
# and flavour: the starting point of the debian and debian-rt test kernels.
. "$(dirname "$0")/lib.sh"

usage() {
	cat <<EOF
usage: tools/debian-config.sh [--arch $(arch_list | paste -sd"|" -)] [--flavour none|rt]

Prints the path of Debian's config for ARCH and FLAVOUR, of the package
linux-config-<series> at the version pinned in upstream-base.txt (the same
version as linux-source), e.g. config.amd64_none_amd64 or
config.arm64_rt_arm64, unpacked under \$CACHE/debian-config/<version>/.

The package of the guest's Debian architecture is fetched with apt-get
download through a private apt state (lists and cache under
\$CACHE/debian-config/apt-<debarch>/, APT::Architecture=<debarch>): the
host's sources and keyring are used read-only, so apt checks the
signature and the checksum as for any package, and nothing under /etc/apt
or /var/lib/apt changes; no foreign architecture is added to dpkg.
Once unpacked, the config is reused without any network access.

Exit codes: 0 ok, 2 usage, 3 missing tool, 5 no such package, version,
architecture or flavour.
EOF
}

arch=$(arch_list | head -n 1) flavour=none
while [ $# -gt 0 ]; do
	case $1 in
	--arch) need_value "$@"; arch=$2; shift 2 ;;
	--flavour) need_value "$@"; flavour=$2; shift 2 ;;
	-h | --help) usage; exit 0 ;;
	*) bad_usage "unknown option: $1" ;;
	esac
done
case $flavour in none | rt) ;; *) bad_usage "--flavour must be none or rt" ;; esac
path=$(debian_config_path "$arch" "$flavour")
arch_facts "$arch"
if [ -s "$path" ]; then
	echo "$path"
	exit 0
fi

need_tools apt-get dpkg-deb xz
version=$(base_field version)
pkg=$(base_field package | sed 's/^linux-source-/linux-config-/')
dir=$CACHE/debian-config
apt_dir=$dir/apt-$DEBARCH
mkdir -p "$apt_dir/lists/partial" "$apt_dir/archives/partial" "$dir/deb"
apt_opts=(-q -o "APT::Architecture=$DEBARCH" -o "APT::Architectures::=$DEBARCH"
	-o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache=$apt_dir"
	-o "Dir::State::status=/dev/null" -o Debug::NoLocking=1
	-o APT::Sandbox::User=root)
deb=$dir/deb/${pkg}_${version//:/%3a}_$DEBARCH.deb
if [ ! -s "$deb" ]; then
	mkdir -p "$LOGDIR"
	log=$LOGDIR/debian-config-$DEBARCH.log
	progress "fetching $pkg=$version ($DEBARCH) with a private apt state in $apt_dir"
	apt-get "${apt_opts[@]}" update >"$log" 2>&1 ||
		die $E_TOOL "apt-get update ($DEBARCH lists) failed; see $log"
	(cd "$dir/deb" && apt-get "${apt_opts[@]}" download "$pkg:$DEBARCH=$version") >>"$log" 2>&1 ||
		die $E_INPUT "$pkg:$DEBARCH=$version is not offered by apt; see $log"
	[ -s "$deb" ] || die $E_INPUT "apt-get download did not leave $deb; see $log"
fi
tmp=$(mktemp -d "$dir/unpack.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
dpkg-deb -x "$deb" "$tmp" || die $E_INPUT "$deb is not a valid package"
src=$(find "$tmp" -name "$(basename "$path").xz" | head -n 1)
[ -n "$src" ] || die $E_INPUT "$pkg ($DEBARCH) has no $(basename "$path"); it has: $(find "$tmp" -name 'config.*' -printf '%f ' )"
mkdir -p "$(dirname "$path")"
xz -dc "$src" >"$path.new"
mv "$path.new" "$path"
progress "Debian's $(basename "$path") of $version: $path"
echo "$path"
