#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Send the series with b4 (Debian 12's b4 0.12): a dry run unless SEND=1.
. "$(dirname "$0")/lib.sh"

usage() {
	cat <<EOF2
usage: tools/send.sh            (make send [SEND=1])

Prepares a b4 series in a scratch clone (\$BUILD/b4, branch task-isolation =
$TIP_BRANCH of \$BUILD/linux, enrolled on the pinned base with b4's cover
commit, so \$BUILD/linux is never touched), puts cover-letter.txt in as the
cover, fills To/Cc from scripts/get_maintainer.pl (b4 prep --auto-to-cc),
and runs 'b4 send':
  default   dry run: 'b4 send -o <patch dir>/b4 --no-sign' writes the exact
            mails (.eml) offline and the recipients are printed
  SEND=1    real send through your git sendemail/b4 configuration
Exit codes: 0 ok, 3 no b4, 5 no tree or bad cover letter.
EOF2
}
no_options "$@"
need_tools b4 git
[ -d "$TREE/.git" ] || die $E_INPUT "no tree in $TREE (run: make tree)"
cover=$COVER
ver=$(cover_field "$cover" Version)
[ -n "$ver" ] || die $E_INPUT "cover-letter.txt has no Version: line"
start_log send
d=$BUILD/b4
rm -rf "$d"
progress "preparing the b4 series in $d"
git clone -q --shared --no-checkout --single-branch -b "$TIP_BRANCH" "$TREE" "$d"
g() { git -C "$d" "$@"; }
g checkout -q -B task-isolation "origin/$TIP_BRANCH"
g branch -q -D "$TIP_BRANCH"
g branch ti-base "$(tree_base)"	# b4 wants a branch that holds the fork point
g config user.name "$(tgit log -1 --format=%an "$TIP_BRANCH")"
g config user.email "$(tgit log -1 --format=%ae "$TIP_BRANCH")"
g config sendemail.smtpserver "$(git config --get sendemail.smtpserver || echo /usr/sbin/sendmail)"
g config b4.send-no-patatt-sign yes
editor=$d/.git/ti-cover-editor
cat >"$editor" <<'EOS'
#!/bin/sh
# b4 prep --edit-cover hands us its cover file: write ours (subject, blank, body).
sed -n 's/^Subject:[[:space:]]*//p' "$TI_COVER" | head -n 1 >"$1"
echo >>"$1"
sed '1,/^$/d' "$TI_COVER" >>"$1"
EOS
chmod +x "$editor"
(
	cd "$d"
	b4 prep -e ti-base >"$LOGDIR/b4-prep.log" 2>&1
	[ "$ver" = 1 ] || b4 prep --force-revision "$ver" >>"$LOGDIR/b4-prep.log" 2>&1
	TI_COVER=$cover EDITOR=$editor b4 prep --edit-cover </dev/null >>"$LOGDIR/b4-prep.log" 2>&1
	b4 prep --auto-to-cc >>"$LOGDIR/b4-prep.log" 2>&1
) || die $E_FAIL "b4 prep failed; see $LOGDIR/b4-prep.log"
if [ "${SEND:-0}" = 1 ]; then
	progress "SEND=1: sending for real with b4"
	(cd "$d" && b4 send --no-sign) || die $E_FAIL "b4 send failed"
	exit 0
fi
out=$(patch_dir)/b4
rm -rf "$out"
(cd "$d" && b4 send -o "$out" --no-sign) >"$LOGDIR/b4-send.log" 2>&1 ||
	die $E_FAIL "b4 send -o failed; see $LOGDIR/b4-send.log"
first=$(ls "$out"/*.eml | head -n 1)
progress "dry run: $(ls "$out"/*.eml | wc -l) mails in $out (nothing was sent; SEND=1 sends)"
sed -n '/^To:/,/^[A-Z][a-zA-Z-]*: /p' "$first" | sed '$d'
sed -n '/^Cc:/,/^[A-Z][a-zA-Z-]*: /p' "$first" | sed '$d'
grep -m1 '^base-commit:' "$first"
