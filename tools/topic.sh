#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Manage the list of topics: list, add, remove, move, restack.
. "$(dirname "$0")/lib.sh"

usage() {
	cat <<EOF2
usage: tools/topic.sh list
       tools/topic.sh add NAME [--after TOPIC]   new empty topic branch (default: last)
       tools/topic.sh remove NAME                drop a topic; later topics are restacked
       tools/topic.sh move NAME --after TOPIC|--first
       tools/topic.sh restack                    rebase each topic onto the previous one

Topics are stacked branches in \$BUILD/linux, in the order of
topic-branches/series.  Each command edits the series file and the branches;
'make save' then writes the bundles, and you commit topic-branches/ here.
restack uses each bundle's recorded start as the old base, so an amended
earlier topic carries the later ones along.  On a conflict it stops inside
git rebase: resolve, 'git -C \$BUILD/linux rebase --continue', run restack again.
Exit codes: 0 ok, 1 conflict, 2 usage, 5 bad input.
EOF2
}

# Parse everything before touching anything.
cmd=${1:-list}
[ $# = 0 ] || shift
name="" after="" first=0
case $cmd in
list | restack) [ $# = 0 ] || bad_usage "$cmd takes no arguments" ;;
add | remove | move)
	[ $# -gt 0 ] && [ "${1#-}" = "$1" ] || bad_usage "$cmd needs a topic NAME"
	name=$1
	shift
	while [ $# -gt 0 ]; do
		case $cmd:$1 in
		add:--after | move:--after) need_value "$@"; after=$2; shift 2 ;;
		move:--first) first=1; shift ;;
		*) bad_usage "$cmd: unknown option or argument: $1" ;;
		esac
	done
	[ "$cmd" != move ] || [ -n "$after" ] || [ $first = 1 ] || bad_usage "move NAME --after TOPIC|--first"
	[ "$cmd" != move ] || [ -z "$after" ] || [ $first = 0 ] || bad_usage "move: --after or --first, not both"
	;;
-h | --help) usage; exit 0 ;;
*) bad_usage "unknown command: $cmd" ;;
esac
[ -d "$TREE/.git" ] || die $E_INPUT "no tree in $TREE (run: make tree)"

# old_start TOPIC: the commit the topic was last stacked on: the one the
# last restack recorded, while it is still below the branch (a second
# restack before 'make save' must not reuse the bundle's older start), else
# the one its saved bundle starts from.
old_start() {
	local s b
	s=$(tgit config "branch.$1.tistart" || true)
	if [ -n "$s" ] && tgit merge-base --is-ancestor "$s" "refs/heads/$1" 2>/dev/null; then
		echo "$s"
		return
	fi
	b=$(bundle_path "$1")
	[ ! -f "$b" ] || bundle_prereqs "$b" | head -n 1
}

# Topics that are not checked out are rebased in a worktree of their own
# ($RESTACK_WT), so that the files of $TREE keep their times and the next
# kernel build recompiles only what the new tip really changed: rebasing in
# $TREE itself would rewrite every file the later topics touch.  The
# checked-out branch is rebased in place; a checked-out tip is moved with
# 'git reset --keep' (only the files that differ; local edits kept, or it
# stops).
RESTACK_WT=$BUILD/restack-wt
restack() {
	local prev t start head where
	prev=$(tree_base)
	head=$(tgit symbolic-ref -q --short HEAD || true)
	for t in $(series_topics); do
		start=$(old_start "$t")
		[ -n "$start" ] || start=$(tgit merge-base "$prev" "refs/heads/$t")
		if [ "$start" != "$prev" ] && ! tgit merge-base --is-ancestor "$prev" "refs/heads/$t"; then
			progress "restacking $t onto $(tgit log -1 --format='%h %s' "$prev")"
			where=$TREE
			if [ "$t" != "$head" ]; then
				where=$RESTACK_WT
				[ -d "$where" ] || tgit worktree add -q --detach "$where" "$prev" ||
					die $E_FAIL "cannot add the worktree $where"
			fi
			if ! git -C "$where" rebase -q --onto "$prev" "$start" "$t"; then
				die $E_FAIL "conflict while moving topic $t: resolve in $where, 'git -C $where rebase --continue', then run 'tools/topic.sh restack' again"
			fi
			[ "$where" = "$TREE" ] || git -C "$where" checkout -q --detach
		fi
		tgit config "branch.$t.tistart" "$prev"
		prev=$(tgit rev-parse "refs/heads/$t")
	done
	[ ! -d "$RESTACK_WT" ] || tgit worktree remove --force "$RESTACK_WT"
	if [ "$head" = "$TIP_BRANCH" ]; then
		tgit reset -q --keep "$prev" ||
			die $E_UNSAVED "$TREE has local edits in files the new tip changes: commit or stash them, then run restack again"
	else
		tgit update-ref "refs/heads/$TIP_BRANCH" "$prev"
	fi
	progress "series restacked; run 'make save' to write the bundles"
}

case $cmd in
list)
	prev=$(tree_base)
	for t in $(series_topics); do
		n=$(tgit rev-list --count "$prev..refs/heads/$t" 2>/dev/null || echo "?")
		printf '%-28s %3s commit(s)\n' "$t" "$n"
		prev=$(tgit rev-parse -q --verify "refs/heads/$t" || echo "$prev")
	done
	;;
add)
	after=${after:-$(series_topics | tail -n 1)}
	series_topics | grep -qxF "$name" && die $E_INPUT "topic $name exists"
	if [ -n "$after" ]; then
		series_topics | grep -qxF "$after" || die $E_INPUT "no topic $after"
		start=$(tgit rev-parse "refs/heads/$after")
	else
		start=$(tree_base)
	fi
	tgit branch "$name" "$start"
	tgit config "branch.$name.tistart" "$start"
	if [ -n "$after" ]; then
		sed -i "/^$after\$/a $name" "$SERIES_FILE"
	else
		mkdir -p "$BUNDLE_DIR"
		echo "$name" >>"$SERIES_FILE"
	fi
	msg "topic $name added after ${after:-base}; commit on it (git -C $TREE switch $name), then make save"
	;;
remove)
	series_topics | grep -qxF "$name" || die $E_INPUT "no topic $name"
	protect_tree "remove a topic" "tree"
	sed -i "/^$name\$/d" "$SERIES_FILE"
	rm -f "$(bundle_path "$name")"
	tgit update-ref "refs/backup/removed/$name" "refs/heads/$name"
	tgit checkout -q --detach
	tgit branch -q -D "$name"
	restack
	tgit checkout -q "$TIP_BRANCH"
	msg "removed $name (kept as refs/backup/removed/$name); run make save and commit topic-branches/"
	;;
move)
	series_topics | grep -qxF "$name" || die $E_INPUT "no topic $name"
	[ $first = 1 ] || series_topics | grep -qxF "$after" || die $E_INPUT "no topic $after"
	protect_tree "move a topic" "tree"
	sed -i "/^$name\$/d" "$SERIES_FILE"
	if [ $first = 1 ]; then
		sed -i "0,/^[^#[:space:]]/s//$name\n&/" "$SERIES_FILE"
	else
		sed -i "/^$after\$/a $name" "$SERIES_FILE"
	fi
	tgit checkout -q --detach
	restack
	tgit checkout -q "$TIP_BRANCH"
	;;
restack) restack ;;
esac
