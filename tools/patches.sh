#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Export the series as git format-patch mail, with cover-letter.txt.
. "$(dirname "$0")/lib.sh"

usage() {
	cat <<EOF
usage: tools/patches.sh [--print-dir]

Writes base..$TIP_BRANCH of \$BUILD/linux as 'git format-patch' mail into
\$BUILD/patches/v<N>/ (N = the Version: line of cover-letter.txt):
[PATCH vN 00/M] is cover-letter.txt (Subject: line, then the body, then
git's shortlog and diffstat), every patch carries a 'base-commit:' trailer
naming the pinned base.  Dates come from the commits, so running it again
gives byte-identical files.

--print-dir  print the output directory and exit
Exit codes: 0 ok, 2 usage, 5 no tree or bad cover letter.
EOF
}
print=0
while [ $# -gt 0 ]; do
	case $1 in
	--print-dir) print=1; shift ;;
	-h | --help) usage; exit 0 ;;
	*) bad_usage "unknown option: $1" ;;
	esac
done
cover=$COVER
ver=$(cover_field "$cover" Version)
subject=$(cover_field "$cover" Subject)
[ -n "$ver" ] && [ -n "$subject" ] || die $E_INPUT "cover-letter.txt needs 'Subject:' and 'Version:' lines"
out=$(patch_dir)
if [ $print = 1 ]; then
	echo "$out"
	exit 0
fi
[ -d "$TREE/.git" ] || die $E_INPUT "no tree in $TREE (run: make tree)"
base=$(tree_base)
[ "$base" = "$(base_field base-commit)" ] || die $E_INPUT "the tree is not on the pinned base"
rm -rf "$out"
mkdir -p "$out"
# The cover letter's date is the tip's, so the output does not depend on now.
date=$(tgit log -1 --format=%cD "$TIP_BRANCH")
GIT_COMMITTER_DATE=$date tgit format-patch -q -v"$ver" --cover-letter --no-thread \
	--no-signature --base="$base" -o "$out" "base..$TIP_BRANCH"
c=$(ls "$out"/*0000-cover-letter.patch)
# Body: everything after the header block of cover-letter.txt.
cover_body "$cover" >"$out/.body"
python3 - "$c" "$subject" "$out/.body" <<'PY'
import sys
path, subject, body = sys.argv[1], sys.argv[2], open(sys.argv[3]).read().rstrip('\n')
s = open(path).read()
s = s.replace('*** SUBJECT HERE ***', subject, 1).replace('*** BLURB HERE ***', body, 1)
open(path, 'w').write(s)
PY
rm -f "$out/.body"
n=$(ls "$out"/*.patch | wc -l)
progress "wrote $n files (cover + $((n - 1)) patches, v$ver) to $out"
