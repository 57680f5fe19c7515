#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Write the exact mails of every exported series; send them only if SEND=1.
. "$(dirname "$0")/lib.sh"

usage() {
	cat <<EOF2
usage: tools/send.sh            (make send [SEND=1]; runs make recipients first)

Refuses (exit 5, one line saying what to set) when the submitter identity
(SUBMITTER="Name <addr>", else git config user.name/user.email) is missing
or a placeholder (.invalid, .example and other reserved domains, no-reply
addresses, team names).  Otherwise, for every exported series, turns each
patch of \$BUILD/patches/<series>/ into the mail that goes out,
<series dir>/mail/NNNN-<name>.eml: From: the submitter, To:/Cc: from that
series' recipients.txt (per patch; the union for the cover letter),
Message-Id:, and In-Reply-To:/References: the cover letter.
  default   dry run: writes the .eml files and prints each series' cover
            letter recipients; nothing is sent
  SEND=1    also sends them, series by series, with 'git send-email'
            (package git-email) through your sendemail.* configuration,
            with nothing added to the recipients (--suppress-cc=all)
Exit codes: 0 ok, 1 git send-email failed, 2 usage, 3 no git send-email,
5 no patches or recipients, or no usable identity.
EOF2
}
no_options "$@"
me=$(submitter)
why=$(ident_problem "$me")
[ -z "$why" ] ||
	die $E_INPUT "${me:+$me: }$why; set git config user.name and user.email (or SUBMITTER=\"Name <addr>\") to your own, then make patches again"
if [ "${SEND:-0}" = 1 ]; then
	git send-email --help >/dev/null 2>&1 ||
		die $E_TOOL "git send-email is missing (apt-get install git-email)"
fi
start_log send
mapfile -t dirs < <(patch_dirs)
[ ${#dirs[@]} -gt 0 ] || die $E_INPUT "no mail series (topic-branches/series is empty)"
for dir in "${dirs[@]}"; do
	ls "$dir"/*.patch >/dev/null 2>&1 || die $E_INPUT "no patches in $dir (run: make patches)"
	[ -f "$dir/recipients.txt" ] || die $E_INPUT "no $dir/recipients.txt (run: make recipients)"
	grep -qxF "From: $me" "$(ls "$dir"/*-0000-cover-letter.patch)" ||
		die $E_INPUT "$dir was exported for another submitter; run make patches again"
	out=$dir/mail
	rm -rf "$out"
	mkdir -p "$out"
	python3 - "$dir" "$out" "$me" <<'PY' || die $E_FAIL "could not write the mails of $dir"
import hashlib, os, re, sys
d, out, me = sys.argv[1:4]
rcpt, cur = {}, None
for line in open(os.path.join(d, 'recipients.txt')):
    line = line.rstrip('\n')
    if not line or line.startswith('#'):
        continue
    if line.startswith(('To: ', 'Cc: ', 'To:', 'Cc:')):
        k, _, v = line.partition(':')
        rcpt[cur][k] = v.strip()
    else:
        cur = line
        rcpt[cur] = {'To': '', 'Cc': ''}
files = sorted(f for f in os.listdir(d) if f.endswith('.patch'))
cover = files[0]
missing = [f for f in files if f not in rcpt]
if missing:
    sys.exit(f'recipients.txt does not cover {missing[0]}: run make recipients')
# Deterministic ids: a hash of the series, the submitter's domain.
h = hashlib.sha256(b''.join(open(os.path.join(d, f), 'rb').read() for f in files)).hexdigest()[:16]
domain = me.rsplit('@', 1)[1].rstrip('>')
series = os.path.basename(d.rstrip('/'))
def msgid(k):
    return f'<{series}-{k}-{h}@{domain}>'
def fold(name, v):
    out, line = [], f'{name}: '
    for a in [x.strip() for x in v.split(',') if x.strip()]:
        if len(line) + len(a) + 2 > 76 and line.strip() != f'{name}:':
            out.append(line.rstrip())
            line = ' '
        line += a + ', '
    out.append(line.rstrip().rstrip(','))
    return '\n'.join(out)
for k, f in enumerate(files):
    s = open(os.path.join(d, f)).read()
    if s.startswith('From ') and '\n' in s:
        s = s.split('\n', 1)[1]	# the mbox separator line
    head, sep, body = s.partition('\n\n')
    extra = []
    for name in ('To', 'Cc'):
        if rcpt[f][name]:
            extra.append(fold(name, rcpt[f][name]))
    extra.append(f'Message-Id: {msgid(k)}')
    if k:
        extra += [f'In-Reply-To: {msgid(0)}', f'References: {msgid(0)}']
    head = re.sub(r'^Subject:', '\n'.join(extra) + '\nSubject:', head, count=1, flags=re.M)
    name = re.sub(r'^v[0-9]+-', '', f)[:-len('.patch')]
    open(os.path.join(out, name + '.eml'), 'w').write(head + sep + body)
PY
	n=$(ls "$out"/*.eml | wc -l)
	progress "$(basename "$dir"): $n mail(s) in $out"
	first=$(ls "$out"/*.eml | head -n 1)
	sed -n '/^\(To\|Cc\):/,/^[A-Z][A-Za-z-]*: /p' "$first" | sed '$d' | cut -c1-120
	grep -m1 '^base-commit:' "$first" || true
	if [ "${SEND:-0}" = 1 ]; then
		progress "SEND=1: sending $(basename "$dir") with git send-email"
		git send-email --from="$me" --suppress-cc=all --no-thread --confirm=always \
			"$out"/*.eml || die $E_FAIL "git send-email failed for $out"
	fi
done
[ "${SEND:-0}" = 1 ] || progress "dry run: nothing was sent (SEND=1 sends)"
