#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Who gets the series: scripts/get_maintainer.pl on the exported patches.
. "$(dirname "$0")/lib.sh"

usage() {
	cat <<EOF2
usage: tools/recipients.sh      (make recipients; runs make patches first)

Runs scripts/get_maintainer.pl (no git history: --no-git) on every patch of
\$BUILD/patches/v<N>/: maintainers and reviewers go to To:, mailing lists to
Cc:.  Prints both lines and writes them to <patch dir>/recipients.txt, which
'make send' uses.
EOF2
}
no_options "$@"
dir=$(patch_dir)
ls "$dir"/*.patch >/dev/null 2>&1 || die $E_INPUT "no patches in $dir (run: make patches)"
gm=(./scripts/get_maintainer.pl --no-git --no-git-fallback --no-rolestats)
mapfile -t patches < <(patch_list "$dir")
cd "$TREE"
to=$("${gm[@]}" --m --r --no-l "${patches[@]}" | sort -u | paste -sd, - | sed 's/,/, /g')
cc=$("${gm[@]}" --no-m --no-r --l "${patches[@]}" | sort -u | paste -sd, - | sed 's/,/, /g')
printf 'To: %s\nCc: %s\n' "$to" "$cc" | tee "$dir/recipients.txt"
