#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Move the series onto another version of the distro package.
. "$(dirname "$0")/lib.sh"

usage() {
	cat <<EOF2
usage: tools/rebase.sh VERSION        (make rebase VERSION=<debian version>)

Installs \$package=VERSION (package from upstream-base.txt), imports it as a
deterministic base commit, and rebases every topic of topic-branches/series
onto it, in order.  On a conflict it stops and names the topic and commit:
resolve it in \$BUILD/linux, 'git rebase --continue', then run the same
command again (finished topics are skipped).  Only when every topic is
rebased does it rewrite upstream-base.txt (version, sha256, base-commit)
and the bundles; commit both afterwards.
Exit codes: 0 ok, 1 conflict, 2 usage, 3 missing package, 4 unsaved work, 5 bad input.
EOF2
}
case ${1:-} in
-h | --help) usage; exit 0 ;;
"") bad_usage "VERSION is missing" ;;
-*) bad_usage "unknown option: $1" ;;
esac
[ $# = 1 ] || bad_usage "unexpected argument: $2"
ver=$1
need_tools git tar sha256sum
[ -d "$TREE/.git" ] || die $E_INPUT "no tree in $TREE (run: make tree first)"
start_log rebase
state=$BUILD/rebase-in-progress
if [ ! -f "$state" ] || [ "$(cat "$state")" != "$ver" ]; then
	protect_tree "rebase the series" tree
fi
[ -z "$(tgit status --porcelain --untracked-files=no | head -n 1)" ] ||
	[ -d "$TREE/.git/rebase-merge" ] || [ -d "$TREE/.git/rebase-apply" ] ||
	die $E_UNSAVED "$TREE has uncommitted edits; commit or stash them"
[ ! -d "$TREE/.git/rebase-merge" ] && [ ! -d "$TREE/.git/rebase-apply" ] ||
	die $E_FAIL "a git rebase is still in progress in $TREE: finish it (git rebase --continue) first"
echo "$ver" >"$state"

pkg=$(base_field package)
old=$(tree_base)
new=$(git --git-dir="$BASE_GIT" rev-parse -q --verify "$(base_ref "$ver")^{commit}" 2>/dev/null || true)
if [ -z "$new" ]; then
	ensure_package "$pkg" "$ver"
	sum=$(sha256sum "$(base_field tarball)" | cut -d' ' -f1)
	rm -rf "$BUILD/import"
	new=$(import_base "$ver" "$sum" "$BUILD/import")
	rm -rf "$BUILD/import" "$BUILD/import.index"
fi
sum=$(sha256sum "$(base_field tarball)" | cut -d' ' -f1)
progress "rebasing the series from $(tgit log -1 --format=%s "$old") onto $ver ($new)"

tgit checkout -q --detach
prev=$new
for t in $(series_topics); do
	b=$(bundle_path "$t")
	start=$(bundle_prereqs "$b" | head -n 1)
	if ! tgit merge-base --is-ancestor "$prev" "refs/heads/$t"; then
		progress "rebasing topic $t"
		if ! tgit rebase -q --onto "$prev" "$start" "$t" >"$LOGDIR/rebase-$t.log" 2>&1; then
			c=$(tgit rev-parse -q --verify REBASE_HEAD 2>/dev/null || echo "?")
			die $E_FAIL "conflict in topic $t at commit $(tgit log -1 --format='%h %s' "$c" 2>/dev/null || echo "$c")
  resolve it in $TREE (git status), 'git -C $TREE rebase --continue',
  then run 'make rebase VERSION=$ver' again; 'git -C $TREE rebase --abort' gives up on this topic"
		fi
	fi
	prev=$(tgit rev-parse "refs/heads/$t")
done
tgit update-ref refs/heads/base "$new"
save_bundles "$new"
sed -i -e "s/^version:.*/version: $ver/" -e "s/^sha256:.*/sha256: $sum/" \
	-e "s/^base-commit:.*/base-commit: $new/" "$TOP/upstream-base.txt"
tgit checkout -q "$TIP_BRANCH"
rm -f "$state"
progress "series now on $pkg $ver ($new); commit upstream-base.txt and topic-branches/"
