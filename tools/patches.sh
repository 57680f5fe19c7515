#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Export the series as git format-patch mail, one numbered series per cover letter.
. "$(dirname "$0")/lib.sh"

usage() {
	cat <<EOF
usage: tools/patches.sh [--print-dir]

Writes base..$TIP_BRANCH of \$BUILD/linux as 'git format-patch' mail.  The
topics of topic-branches/series form one numbered series, or several when
that file has "@NAME" lines: the topics after "@NAME" are series NAME, with
cover letter cover-letters/NAME.txt and output \$BUILD/patches/NAME-v<N>/;
the others are the main series, cover-letter.txt, \$BUILD/patches/v<N>/
(N = the cover letter's Version: line).  A cover letter in cover-letters/
with a "Files: GLOB" line exports patch files kept in this repository
(say man-pages/*.patch, for another project) as a series of their own.

In each series, [PATCH vN 00/M] is the cover letter (Subject: line, body,
a generated paragraph on the base, then git's shortlog and diffstat); every
patch ends with 'base-commit:' (the pinned import) and, for a series that
sits on another one, its 'prerequisite-patch-id:' lines.

The submitter, SUBMITTER="Name <addr>" or else git config user.name and
user.email, is the From: of every mail and the cover letter's author; the
commit's author stays in the body (a From: line, which git am keeps), and
the submitter's Signed-off-by: is added to every patch that lacks it.
Nothing else in the commit messages changes.  Without an identity, or with
a placeholder one (see 'tools/send.sh --help'), the patches are written
without a sender (a warning says so) and 'make send' refuses.
Dates come from the commits: the same identity gives byte-identical files.

--print-dir  print the main series' output directory and exit
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
if [ $print = 1 ]; then
	patch_dir
	exit 0
fi
[ -d "$TREE/.git" ] || die $E_INPUT "no tree in $TREE (run: make tree)"
base=$(tree_base)
[ "$base" = "$(base_field base-commit)" ] || die $E_INPUT "the tree is not on the pinned base"

me=$(submitter)
why=$(ident_problem "$me")
if [ -n "$why" ]; then
	# A placeholder signs nothing off: export without a sender.
	msg "warning: ${me:+$me: }$why: no sender From:/Signed-off-by: added (set git config user.name/user.email, or SUBMITTER=\"Name <addr>\"); make send will refuse"
	me=""
	# format-patch still needs a committer for the cover letter
	GIT_COMMITTER_NAME=$(tgit log -1 --format=%cn "$TIP_BRANCH")
	GIT_COMMITTER_EMAIL=$(tgit log -1 --format=%ce "$TIP_BRANCH")
else
	GIT_COMMITTER_NAME=${me%% <*}
	GIT_COMMITTER_EMAIL=${me##*<}
	GIT_COMMITTER_EMAIL=${GIT_COMMITTER_EMAIL%>}
fi
export GIT_COMMITTER_NAME GIT_COMMITTER_EMAIL

# rewrite_mail DIR COVER SUBJECT BASE_TEXT: fill in the cover letter; add
# the submitter's sign-off to every patch that lacks it.
rewrite_mail() {
	python3 - "$@" "$me" <<'PY'
import glob, os, sys
d, cover_txt, subject, extra, me = sys.argv[1:6]
lines = open(cover_txt).read().split('\n')
body = '\n'.join(lines[lines.index('') + 1:] if '' in lines else []).rstrip('\n')
if extra:
    body += '\n\n' + extra.rstrip('\n')
for path in sorted(glob.glob(os.path.join(d, '*.patch'))):
    s = open(path).read()
    if path.endswith('-0000-cover-letter.patch'):
        s = s.replace('*** SUBJECT HERE ***', subject, 1)
        s = s.replace('*** BLURB HERE ***', body, 1)
    elif me:
        head, sep, rest = s.partition('\n\n')
        msg, sep2, diff = rest.partition('\n---\n')
        sob = 'Signed-off-by: ' + me
        if sob not in msg.split('\n'):
            msg = msg.rstrip('\n') + '\n' + sob
        s = head + sep + msg + sep2 + diff
    open(path, 'w').write(s)
PY
}

# base_text AFTER: the paragraph on the base, and on the series this one
# applies on top of (AFTER, its subject), if any.
base_text() {
	local ver up
	ver=$(base_field version)
	up=$(upstream_version)
	cat <<EOT
Base
----
Linux $up as Debian 12 ships it: $(base_field package) $ver,
upstream v$up plus Debian's patches.  On plain upstream 6.12.y, apply
the series to v$up with 'git am -3' (or 'b4 am').  base-commit: below is
a deterministic git import of that package's source, not upstream's.
EOT
	[ -z "$1" ] || printf '\nIt applies on top of "%s",\nsent separately (prerequisite-patch-id: below).\n' "$1"
}

# export_topics NAME LAST START: the mail series NAME, START..LAST.
export_topics() {
	local name=$1 last=$2 start=$3 cover out ver subject date after="" n
	cover=$(cover_file "$name")
	ver=$(cover_field "$cover" Version)
	subject=$(cover_field "$cover" Subject)
	[ -n "$ver" ] && [ -n "$subject" ] || die $E_INPUT "${cover#"$TOP"/} needs 'Subject:' and 'Version:' lines"
	out=$(series_dir "$name")
	[ "$start" = "$base" ] || after=$prev_subject
	rm -rf "$out"
	mkdir -p "$out"
	# The cover letter's date is the last commit's: the output does not depend on now.
	date=$(tgit log -1 --format=%cD "refs/heads/$last")
	GIT_COMMITTER_DATE=$date tgit format-patch -q -v"$ver" --cover-letter --no-thread \
		--no-signature ${me:+--from="$me"} --base="$base" -o "$out" "$start..refs/heads/$last"
	rewrite_mail "$out" "$cover" "$subject" "$(base_text "$after")"
	n=$(ls "$out"/*.patch | wc -l)
	progress "$name: wrote $n files (cover + $((n - 1)) patches, v$ver) to $out"
	prev_subject=$subject
}

# export_files NAME: a series of patch files kept in this repository (the
# cover letter's Files: glob, in name order), for another project whose tree
# is not here: renumbered as [PATCH vN k/M], From: the submitter (the
# author stays in the body), the submitter's sign-off added, and a cover
# letter listing them.
export_files() {
	local name=$1 cover out ver subject files
	cover=$(cover_file "$name")
	ver=$(cover_field "$cover" Version)
	subject=$(cover_field "$cover" Subject)
	[ -n "$ver" ] && [ -n "$subject" ] || die $E_INPUT "${cover#"$TOP"/} needs 'Subject:' and 'Version:' lines"
	# shellcheck disable=SC2046 # the glob is meant to expand
	mapfile -t files < <(cd "$TOP" && ls -d -- $(cover_field "$cover" Files) 2>/dev/null)
	[ ${#files[@]} -gt 0 ] || die $E_INPUT "${cover#"$TOP"/}: 'Files: $(cover_field "$cover" Files)' matches no file"
	out=$(series_dir "$name")
	rm -rf "$out"
	mkdir -p "$out"
	(cd "$TOP" && COVER_TXT=$cover python3 - "$out" "$ver" "$subject" "$me" "${files[@]}") <<'PY' ||
import email.utils, os, re, sys
out, ver, subject, me = sys.argv[1:5]
files = sys.argv[5:]
n = len(files)
w = len(str(n))
msgs = []
for f in files:
    s = open(f).read()
    head, _, rest = s.partition('\n\n')
    hdr = {}
    key = None
    for line in head.split('\n'):
        if line.startswith((' ', '\t')) and key:
            hdr[key] += ' ' + line.strip()
        elif ':' in line and not line.startswith('From '):
            key, _, v = line.partition(':')
            key = key.lower()
            hdr[key] = v.strip()
    if 'subject' not in hdr or 'from' not in hdr or '\n---\n' not in rest:
        sys.exit(f'{f}: not a git format-patch file')
    subj = re.sub(r'^\[[^]]*\]\s*', '', hdr['subject'])
    body, _, diff = rest.partition('\n---\n')
    if body.startswith('From: '):
        author, _, body = body.partition('\n\n')
        author = author[6:]
    else:
        author = hdr['from']
    if me and 'Signed-off-by: ' + me not in body.split('\n'):
        body = body.rstrip('\n') + '\nSigned-off-by: ' + me
    msgs.append((f, author, hdr.get('date', ''), subj, body, diff))
date = max((m[2] for m in msgs), key=lambda d: email.utils.parsedate_to_datetime(d))
sender = me or msgs[0][1]
def mail(k, subj, d, body):
    return (f'From: {sender}\nDate: {d}\nSubject: [PATCH v{ver} {k:0{w}}/{n}] {subj}\n'
            'MIME-Version: 1.0\nContent-Type: text/plain; charset=UTF-8\n'
            f'Content-Transfer-Encoding: 8bit\n\n{body}')
cover = open(os.environ['COVER_TXT']).read().split('\n')
blurb = '\n'.join(cover[cover.index('') + 1:]).rstrip('\n')
short = '\n'.join(f'  {m[3]} ({m[0]})' for m in msgs)
open(os.path.join(out, f'v{ver}-{0:04d}-cover-letter.patch'), 'w').write(
    mail(0, subject, date, f'{blurb}\n\n{short}\n'))
for k, (f, author, d, subj, body, diff) in enumerate(msgs, 1):
    inbody = f'From: {author}\n\n' if author != sender else ''
    slug = re.sub(r'[^A-Za-z0-9]+', '-', subj).strip('-')[:52]
    open(os.path.join(out, f'v{ver}-{k:04d}-{slug}.patch'), 'w').write(
        mail(k, subj, d, inbody + body + '\n---\n' + diff))
PY
		die $E_INPUT "the files of ${cover#"$TOP"/} are not all git format-patch files"
	progress "$name: wrote $((${#files[@]} + 1)) files (cover + ${#files[@]} patches, v$ver) to $out"
}

rm -rf "$BUILD/patches"	# no series of an earlier run lingers
prev_subject=""
while read -r name first last; do
	[ "$name" != error ] || die $E_INPUT "topic-branches/series: the topics of mail series $first are not contiguous"
	if [ "$first" = - ]; then
		export_files "$name"
		continue
	fi
	start=$base	# the tip of the topic before the series' first one
	for t in $(series_topics); do
		[ "$t" != "$first" ] || break
		start=$(tgit rev-parse "refs/heads/$t")
	done
	export_topics "$name" "$last" "$start"
done < <(mail_series)
[ -z "$me" ] || msg "every patch is signed off by $me"
