#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Write the topic branches of $BUILD/linux back into topic-branches/*.bundle.
. "$(dirname "$0")/lib.sh"

usage() {
	cat <<EOF2
usage: tools/save.sh [--help]

For every topic in topic-branches/series whose branch in \$BUILD/linux moved,
write topic-branches/<topic>.bundle (commits from the previous topic's tip to
this topic's tip), verify it with 'git bundle verify', then replay all
bundles into an empty repository that holds only the base and check that
every commit id comes back identical.  Then 'git add topic-branches' and
commit in this repository.  Uncommitted edits in the tree are not saved:
they are listed so that you can commit them to a topic first.

Exit codes: 0 saved, 1 verification failed, 2 usage, 5 bad series/tree.
EOF2
}
no_options "$@"
need_tools git
[ -d "$TREE/.git" ] || die $E_INPUT "no tree in $TREE (run: make tree)"
start_log save
base=$(tree_base)
[ "$base" = "$(base_field base-commit)" ] ||
	die $E_INPUT "$TREE sits on $base, upstream-base.txt pins $(base_field base-commit); use 'make rebase'"
# Commits on "tip" that are neither on the last topic nor in a bundle would
# be lost when save moves tip: refuse.
last=$(series_topics | tail -n 1)
if [ -n "$last" ] && tgit rev-parse -q --verify "refs/heads/$TIP_BRANCH" >/dev/null; then
	excl=("^refs/heads/$last")
	for t in $(series_topics); do
		h=$(bundle_head "$(bundle_path "$t")" "$t" 2>/dev/null || true)
		[ -n "$h" ] && tgit cat-file -e "$h^{commit}" 2>/dev/null && excl+=("^$h")
	done
	if [ -n "$(tgit rev-list -n 1 "refs/heads/$TIP_BRANCH" "${excl[@]}")" ]; then
		die $E_INPUT "branch $TIP_BRANCH has commits that are on no topic and in no bundle; move them onto a topic branch first (e.g. git branch -f $last $TIP_BRANCH)"
	fi
fi
save_bundles "$base"
st=$(tgit status --porcelain | head -n 10)
[ -z "$st" ] || msg "note: uncommitted edits in $TREE were NOT saved:
$st"
