#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Run scripts/checkpatch.pl --strict on every exported patch; fail on any
# finding that checkpatch-allow.txt does not list with a reason.
. "$(dirname "$0")/lib.sh"

usage() {
	cat <<EOF2
usage: tools/checkpatch.sh      (make checkpatch; runs make patches first)

Checks each patch of every exported kernel series (\$BUILD/patches/v<N>/
and the other series' directories) with checkpatch.pl --strict from
\$BUILD/linux.  Prints every finding and the totals; a finding passes only if
checkpatch-allow.txt has "<subject> | <finding> | <reason>" for it, and an
allow-list line that matches nothing fails too.
Exit codes: 0 clean, 1 findings, 5 no patches.
EOF2
}
no_options "$@"
all=()
for dir in $(patch_dirs --kernel); do
	ls "$dir"/*.patch >/dev/null 2>&1 || die $E_INPUT "no patches in $dir (run: make patches)"
	mapfile -t -O ${#all[@]} all < <(patch_list "$dir")
done
mkdir -p "$LOGDIR"
allow=$TOP/checkpatch-allow.txt
used=$LOGDIR/checkpatch-allow-used
: >"$used"
errors=0 warnings=0 checks=0 allowed=0 bad=0
for p in "${all[@]}"; do
	subj=$(sed -n 's/^Subject: \[PATCH[^]]*\] //p' "$p" | head -n 1)
	out=$(cd "$TREE" && ./scripts/checkpatch.pl --strict --no-color --show-types "$p" 2>&1 || true)
	while IFS= read -r line; do
		case $line in ERROR:* | WARNING:* | CHECK:*) ;; *) continue ;; esac
		kind=${line%%:*}
		text=${line#*: }
		ok=0
		while IFS='|' read -r a_subj a_text a_why; do
			a_subj=$(echo "$a_subj" | sed 's/^ *//; s/ *$//')
			a_text=$(echo "$a_text" | sed 's/^ *//; s/ *$//')
			case $a_subj in "" | \#*) continue ;; esac
			if [ "${subj#"$a_subj"}" != "$subj" ] && [ "${text#*"$a_text"}" != "$text" ]; then
				ok=1
				echo "$a_subj|$a_text" >>"$used"
				break
			fi
		done <"$allow"
		case $kind in ERROR) errors=$((errors + 1)) ;; WARNING) warnings=$((warnings + 1)) ;; *) checks=$((checks + 1)) ;; esac
		if [ $ok = 1 ]; then
			allowed=$((allowed + 1))
			echo "allowed  $(basename "$p"): $line"
		else
			bad=$((bad + 1))
			echo "FINDING  $(basename "$p"): $line"
		fi
	done <<<"$out"
done
stale=0
while IFS='|' read -r a_subj a_text a_why; do
	a_subj=$(echo "$a_subj" | sed 's/^ *//; s/ *$//')
	a_text=$(echo "$a_text" | sed 's/^ *//; s/ *$//')
	case $a_subj in "" | \#*) continue ;; esac
	if ! grep -qxF "$a_subj|$a_text" "$used"; then
		echo "STALE    checkpatch-allow.txt: '$a_subj | $a_text' matches no finding"
		stale=$((stale + 1))
	fi
done <"$allow"
echo "checkpatch --strict: total $errors errors, $warnings warnings, $checks checks; $allowed allowed by checkpatch-allow.txt, $bad not allowed, $stale stale allow-list line(s)"
[ $bad = 0 ] && [ $stale = 0 ]
