#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Who gets each mail: scripts/get_maintainer.pl on every exported patch.
. "$(dirname "$0")/lib.sh"

usage() {
	cat <<EOF2
usage: tools/recipients.sh      (make recipients; runs make patches first)

For every exported series (\$BUILD/patches/v<N>/ and the other series'
directories) and every patch in it: scripts/get_maintainer.pl (no git
history) on that patch alone; maintainers and reviewers go to To:, mailing
lists to Cc:, and linux-api@vger.kernel.org to Cc: when the patch changes
include/uapi/.  The cover letter's own To:/Cc: lines are added to every
mail of its series (e.g. "Cc: stable@vger.kernel.org"; they are all a
series of files for another project gets).  Placeholder addresses (such as
a pseudonym at .invalid in MAINTAINERS) are dropped and named.  A mail
with nobody in To: gets its lists there instead.  The cover letter goes to
the union of its series.

Writes <series dir>/recipients.txt: per mail its file name, then its To:
and Cc: lines, then a blank line; 'make send' reads it.  Prints the cover
letters' recipients and how many each patch has.
Exit codes: 0 ok, 2 usage, 5 no patches or no tree.
EOF2
}
no_options "$@"
[ -f "$TREE/scripts/get_maintainer.pl" ] || die $E_INPUT "no tree in $TREE (run: make tree)"
gm=(./scripts/get_maintainer.pl --no-git --no-git-fallback --rolestats)
while read -r name first last; do
	[ "$name" != error ] || die $E_INPUT "topic-branches/series: the topics of mail series $first are not contiguous"
	dir=$(series_dir "$name")
	cover=$(cover_file "$name")
	ls "$dir"/*.patch >/dev/null 2>&1 || die $E_INPUT "no patches in $dir (run: make patches)"
	raw=$dir/.recipients.raw
	: >"$raw"
	for p in $(patch_list "$dir"); do
		f=$(basename "$p")
		if [ "$first" != - ]; then
			# "Name <addr> (maintainer:X)" or "list@host (open list:X)"
			(cd "$TREE" && "${gm[@]}" "$p") | while IFS= read -r line; do
				who=${line%% (*} role=${line#* (}
				case $role in
				"open list"* | "moderated list"* | "subscriber list"* | "list"*) echo "$f	Cc	$who" ;;
				*) echo "$f	To	$who" ;;
				esac
			done >>"$raw"
			! grep -q '^+++ b/include/uapi/' "$p" || echo "$f	Cc	linux-api@vger.kernel.org" >>"$raw"
		fi
		for k in To Cc; do
			v=$(cover_field "$cover" "$k")
			[ -z "$v" ] || echo "$f	$k	$v" >>"$raw"
		done
	done
	# Placeholder addresses are dropped (ident_problem, as for the sender).
	bad=$(cut -f3 "$raw" | tr ',' '\n' | sed 's/^ *//; s/ *$//' | sort -u | while IFS= read -r a; do
		addr=$(sed -n 's/.*<\(.*\)>.*/\1/p' <<<"$a")
		[ -n "$(ident_problem "x <${addr:-$a}>")" ] && echo "$a" || true
	done | paste -sd'|' -)
	python3 - "$raw" "$dir" "$bad" <<'PY'
import os, sys
raw, d, bad = sys.argv[1], sys.argv[2], set(filter(None, sys.argv[3].split('|')))
mails, order = {}, []
for line in open(raw):
    f, k, v = line.rstrip('\n').split('\t')
    if f not in mails:
        mails[f] = {'To': [], 'Cc': []}
        order.append(f)
    for a in (x.strip() for x in v.split(',')):
        if a and a not in bad and a not in mails[f]['To'] + mails[f]['Cc']:
            mails[f][k].append(a)
for m in mails.values():
    if not m['To']:
        m['To'], m['Cc'] = m['Cc'], []
cover = [x for x in sorted(os.listdir(d)) if x.endswith('-0000-cover-letter.patch')][0]
union = {'To': [], 'Cc': []}
for f in order:
    for k in ('To', 'Cc'):
        union[k] += [a for a in mails[f][k] if a not in union['To'] + union['Cc']]
union['Cc'] = [a for a in union['Cc'] if a not in union['To']]
with open(os.path.join(d, 'recipients.txt'), 'w') as out:
    out.write('# make recipients: To:/Cc: of each mail (scripts/get_maintainer.pl, linux-api\n'
              '# for include/uapi/, the cover letter\'s To:/Cc:); the cover letter gets the union.\n')
    for f, m in [(cover, union)] + [(f, mails[f]) for f in order]:
        out.write(f'{f}\nTo: {", ".join(m["To"])}\nCc: {", ".join(m["Cc"])}\n\n')
print(f'{d}/recipients.txt:')
print(f'  cover letter  To: {", ".join(union["To"])}')
print(f'                Cc: {", ".join(union["Cc"])}')
for f in order:
    print(f'  {f[:44]:44} {len(mails[f]["To"]):2} To, {len(mails[f]["Cc"]):2} Cc')
if bad:
    print('  dropped (placeholder addresses): ' + ', '.join(sorted(bad)))
PY
	rm -f "$raw"
done < <(mail_series)
