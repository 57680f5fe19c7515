#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Prepare $BUILD/linux: the pinned base plus every topic bundle replayed.
. "$(dirname "$0")/lib.sh"

usage() {
	cat <<EOF
usage: tools/tree.sh [--help]

Prepare the kernel tree in \$BUILD/linux (BUILD=$BUILD):
  1. install the package version pinned in upstream-base.txt (apt, when missing),
  2. verify the tarball's sha256 and import it as a deterministic base commit
     whose id must equal upstream-base.txt's base-commit (done once; cached in
     \$BUILD/base.git),
  3. replay topic-branches/<topic>.bundle in the order of topic-branches/series:
     each topic becomes a branch, and branch "$TIP_BRANCH" holds the whole series.

Running it again with nothing changed changes nothing.  It refuses (exit 4)
when the tree holds commits or edits that no bundle has; FORCE=1 drops
them after saving refs/backup/<time>/<branch> and a git stash.

Environment: BUILD (or O) = build directory, FORCE=1.
Exit codes: 0 ok, 2 usage, 3 missing tool/package, 4 unsaved work, 5 bad input.
EOF
}

no_options "$@"

need_tools git tar xz sha256sum awk sed
mkdir -p "$BUILD"
start_log tree

ver=$(base_field version)
sum=$(base_field sha256)
pin=$(base_field base-commit)
[ -n "$ver" ] && [ -n "$sum" ] || die $E_INPUT "upstream-base.txt lacks version or sha256"

# 1+2: the base commit.
id=$(git --git-dir="$BASE_GIT" rev-parse -q --verify "$(base_ref "$ver")^{commit}" 2>/dev/null || true)
if [ -z "$id" ] || [ ! -d "$TREE/.git" ]; then
	if [ -n "$id" ] && [ ! -d "$TREE" ]; then
		progress "checking out base $ver into $TREE"
		git init -q "$TREE"
		echo "$BASE_GIT/objects" >"$TREE/.git/objects/info/alternates"
		tgit config core.autocrlf false
		tgit config sendemail.smtpserver /usr/sbin/sendmail
		tgit update-ref refs/heads/base "$id"
		tgit update-ref "refs/heads/$TIP_BRANCH" "$id"
		tgit checkout -q -f "$TIP_BRANCH"
	else
		[ ! -e "$TREE" ] || [ -d "$TREE/.git" ] ||
			die $E_INPUT "$TREE exists but is not a git tree; move it away"
		rm -rf "$BUILD/import"
		id=$(import_base "$ver" "$sum" "$BUILD/import")
		if [ -d "$TREE/.git" ]; then
			rm -rf "$BUILD/import" "$BUILD/import.index"
		else
			tree_create "$id" "$BUILD/import"
		fi
	fi
fi
if [ "$pin" != "$id" ]; then
	die $E_INPUT "the import of $ver is $id but upstream-base.txt pins base-commit: $pin
  (a different tarball, git or import procedure; if the new id is intended, put it in upstream-base.txt)"
fi
progress "base $ver is $id"
tgit update-ref refs/heads/base "$id"

# 3: replay the bundles.
protect_tree "rewrite its branches" tree

cur=$(tgit symbolic-ref -q --short HEAD || true)
tgit checkout -q --detach
prev=$id
for t in $(series_topics); do
	b=$(bundle_path "$t")
	[ -f "$b" ] || die $E_INPUT "topic $t is in topic-branches/series but $b is missing"
	bundle_intact "$b" ||
		die $E_INPUT "$b is damaged (not a bundle, or its pack checksum is wrong): restore it with 'git checkout -- $b' or re-save the topic"
	head=$(bundle_head "$b" "$t")
	[ -n "$head" ] || die $E_INPUT "$b has no refs/heads/$t: corrupt bundle? restore it with 'git checkout -- $b'"
	if ! tgit bundle verify -q "$b" >/dev/null 2>"$LOGDIR/verify.err"; then
		die $E_INPUT "$b does not verify ($(head -n 1 "$LOGDIR/verify.err")): restore it with 'git checkout -- $b' or re-save the topic"
	fi
	bundle_prereqs "$b" | grep -qxF "$prev" ||
		die $E_INPUT "$b does not start at the previous topic's tip ($prev); re-save with 'make save'"
	tgit fetch -q "$b" "refs/heads/$t:refs/bundles/$t" --force ||
		die $E_INPUT "cannot fetch $b: corrupt bundle? restore it with 'git checkout -- $b'"
	old=$(tgit rev-parse -q --verify "refs/heads/$t" || true)
	if [ "$old" != "$head" ]; then
		progress "topic $t -> $(tgit log -1 --format='%h %s' "$head")"
		tgit update-ref "refs/heads/$t" "$head"
	fi
	prev=$head
done
tgit update-ref "refs/heads/$TIP_BRANCH" "$prev"
# A branch of a topic that left the series: protect_tree found its commits
# saved (or, with FORCE=1, backed up under refs/backup/): drop it, so that
# the next run does not take it for unsaved work.
topics=" base $TIP_BRANCH $(series_topics | xargs) "
case $topics in *" ${cur:-$TIP_BRANCH} "*) ;; *) cur="" ;; esac
tgit checkout -q "${cur:-$TIP_BRANCH}"
for b in $(tgit for-each-ref --format='%(refname:short)' refs/heads/); do
	case $topics in *" $b "*) continue ;; esac
	tgit update-ref -d "refs/heads/$b"
	msg "dropped branch $b: not a topic of the series any more"
done
n=$(tgit rev-list --count "base..$TIP_BRANCH")
progress "$TREE ready: $(series_topics | wc -l) topic(s), $n commit(s) on $TIP_BRANCH, checked out: ${cur:-$TIP_BRANCH}"
