#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Apply the exported patches with 'git am' onto a fresh checkout of the pinned
# base and check that every step gives the same tree as the topic bundles.
. "$(dirname "$0")/lib.sh"

usage() {
	cat <<EOF2
usage: tools/am-check.sh        (make am-check; runs make patches first)

Checks out the pinned base in a scratch worktree (\$BUILD/am-check), applies
the patches of every exported kernel series (\$BUILD/patches/v<N>/ and the
other series' directories, in series order) with 'git am', and compares the
tree and the author of each resulting commit with those of the corresponding
commit of base..$TIP_BRANCH.
Exit codes: 0 identical, 1 a patch does not apply or a tree or author
differs, 2 usage, 5 no patches.
EOF2
}
no_options "$@"
patches=()
for dir in $(patch_dirs --kernel); do
	ls "$dir"/*.patch >/dev/null 2>&1 || die $E_INPUT "no patches in $dir (run: make patches)"
	mapfile -t -O ${#patches[@]} patches < <(patch_list "$dir")
done
wt=$BUILD/am-check
start_log am-check
tgit worktree remove --force "$wt" 2>/dev/null || rm -rf "$wt"
tgit worktree prune
progress "checking out base $(tree_base | cut -c1-12) in $wt"
tgit worktree add -q --detach "$wt" "$(tree_base)"
trap 'git -C "$TREE" worktree remove --force "$wt" 2>/dev/null || true' EXIT
progress "git am ${#patches[@]} patches"
git -C "$wt" -c user.name=am-check -c user.email=am-check@invalid am -q "${patches[@]}" ||
	die $E_FAIL "git am failed at $(git -C "$wt" am --show-current-patch=diff 2>/dev/null | head -n 0; ls "$wt/.git" >/dev/null 2>&1; cat "$(git -C "$wt" rev-parse --git-path rebase-apply/next)" 2>/dev/null || echo '?')"
mapfile -t want < <(tgit rev-list --reverse "base..$TIP_BRANCH")
mapfile -t have < <(git -C "$wt" rev-list --reverse "$(tree_base)..HEAD")
[ ${#want[@]} = ${#have[@]} ] || die $E_FAIL "git am made ${#have[@]} commits, the series has ${#want[@]}"
for i in "${!want[@]}"; do
	a=$(tgit rev-parse "${want[$i]}^{tree}")
	b=$(git -C "$wt" rev-parse "${have[$i]}^{tree}")
	[ "$a" = "$b" ] || die $E_FAIL "patch $((i + 1)) ($(tgit log -1 --format=%s "${want[$i]}")) gives tree $b, the bundle has $a"
	a=$(tgit log -1 --format='%an <%ae>' "${want[$i]}")
	b=$(git -C "$wt" log -1 --format='%an <%ae>' "${have[$i]}")
	[ "$a" = "$b" ] || die $E_FAIL "patch $((i + 1)) ($(tgit log -1 --format=%s "${want[$i]}")) is authored by $b, the bundle by $a"
done
progress "${#want[@]} patches apply with git am and give the same trees and authors as the topic bundles"
