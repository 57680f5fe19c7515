#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Judge a test boot from its serial console log.

Parses the KTAP the guest printed with the kernel tree's own KTAP parser
(tools/testing/kunit/kunit_parser.py), scans the whole console for crash
reports, prints the per-test results and a totals line
"N passed, N failed, N skipped", writes results.json and junit.xml, and
exits 0 only when every planned test ran and none failed, with no crash.
"""

import argparse
import json
import os
import re
import sys
from xml.sax.saxutils import escape, quoteattr

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TREE = os.path.join(os.environ.get('BUILD', os.path.join(TOP, 'build')), 'linux')

# Console patterns that fail a boot whatever the tests said (what LAVA,
# NIPA and syzkaller look for), with a short reason.  They are matched
# against every line of the console: the boot messages, the KTAP, the guest's
# dmesg dump and whatever the kernel prints after it (test/run.sh turns the
# console log level back up before the dump, so a WARNING at power-off shows).
CRASH_PATTERNS = [
    (r'Kernel panic - not syncing', 'kernel panic'),
    (r'BUG: KASAN:', 'KASAN report'),
    (r'UBSAN:', 'UBSAN report'),
    (r'possible recursive locking detected', 'lockdep report'),
    (r'WARNING: possible circular locking dependency', 'lockdep report'),
    (r'WARNING: .*lock', 'lockdep report'),
    (r'BUG: sleeping function called from invalid context', 'sleep in atomic context'),
    (r'INFO: rcu_tasks\w* detected stall', 'RCU Tasks stall'),
    (r'INFO: rcu_\w+ (self-)?detected (expedited )?stall', 'RCU stall'),
    (r'rcu: INFO:', 'RCU stall'),
    (r'INFO: task .* blocked', 'hung task'),
    (r'kernel BUG at', 'kernel BUG'),
    (r'BUG:', 'kernel BUG'),
    (r'Oops', 'kernel Oops'),
    (r'-\[ cut here \]-', 'kernel WARNING'),
    (r'WARNING:', 'kernel WARNING'),
    (r'Unhandled fault', 'unhandled fault'),
    (r'invalid opcode:', 'invalid opcode in kernel'),
]

DMESG_START = '=== guest dmesg ==='


def leaves(test, path=()):
    """Yield (name, status, log) for every test case (tests without subtests)."""
    name = '.'.join(p for p in path + (test.name,) if p)
    if not test.subtests:
        yield name, test.status.name, test.log
        return
    for sub in test.subtests:
        yield from leaves(sub, path + ((test.name,) if test.name else ()))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--console', required=True)
    ap.add_argument('--outdir', required=True)
    ap.add_argument('--suite-name', default='task_isolation')
    ap.add_argument('--verdict', default='', help='a failure already known (timeout, hang)')
    args = ap.parse_args()

    with open(args.console, errors='replace') as f:
        console = f.read().splitlines()

    reasons = []
    if args.verdict:
        reasons.append(args.verdict)
    # Every console line, not only the KTAP or the dmesg dump.
    for line in console:
        for pat, why in CRASH_PATTERNS:
            if re.search(pat, line):
                reasons.append(f'{why}: {line.strip()[:120]}')
                break
        else:
            continue
        break

    ktap = []
    for line in console:
        if DMESG_START in line:
            break
        ktap.append(line)

    sys.path.insert(0, os.path.join(TREE, 'tools', 'testing', 'kunit'))
    try:
        import kunit_parser
    except ImportError as e:
        print(f'boot-test: error: cannot load the kernel tree\'s KTAP parser: {e}', file=sys.stderr)
        return 3
    top = kunit_parser.parse_run_tests(ktap)

    cases = list(leaves(top)) if top.subtests else []
    passed = sum(1 for c in cases if c[1] == 'SUCCESS')
    skipped = sum(1 for c in cases if c[1] == 'SKIPPED')
    failed = len(cases) - passed - skipped

    def missing(test):
        n = 0
        if test.expected_count is not None and test.subtests:
            n += max(0, test.expected_count - len(test.subtests))
        return n + sum(missing(s) for s in test.subtests)

    if not top.subtests:
        reasons.append('no KTAP results on the console')
    elif top.expected_count is None:
        reasons.append('no KTAP plan line')
    short = missing(top)
    if short:
        reasons.append(f'{short} planned test(s) did not report')
    if failed:
        first = next(c[0] for c in cases if c[1] not in ('SUCCESS', 'SKIPPED'))
        reasons.append(f'{failed} test(s) failed, first: {first}')
    if top.counts.errors:
        reasons.append(f'{top.counts.errors} KTAP parse error(s)')

    print('\nper-test results:')
    for name, status, _ in cases:
        print(f'  {status:<12} {name}')

    with open(os.path.join(args.outdir, 'results.json'), 'w') as f:
        json.dump({'cases': [{'name': n, 'status': s} for n, s, _ in cases],
                   'passed': passed, 'failed': failed, 'skipped': skipped,
                   'reasons': reasons}, f, indent=1)
    with open(os.path.join(args.outdir, 'junit.xml'), 'w') as f:
        f.write('<?xml version="1.0" encoding="UTF-8"?>\n')
        f.write(f'<testsuite name={quoteattr(args.suite_name)} tests="{len(cases)}" '
                f'failures="{failed}" skipped="{skipped}">\n')
        for name, status, log in cases:
            f.write(f'  <testcase classname={quoteattr(args.suite_name)} name={quoteattr(name)}>')
            if status == 'SKIPPED':
                f.write('<skipped/>')
            elif status != 'SUCCESS':
                f.write(f'<failure message={quoteattr(status)}>{escape(chr(10).join(log))}</failure>')
            f.write('</testcase>\n')
        if reasons:
            f.write(f'  <system-err>{escape(chr(10).join(reasons))}</system-err>\n')
        f.write('</testsuite>\n')

    print(f'\nconsole: {args.console}\njunit:   {os.path.join(args.outdir, "junit.xml")}')
    print(f'{passed} passed, {failed} failed, {skipped} skipped')
    if reasons:
        print(f'boot-test: FAIL: {reasons[0]}' + (f' (+{len(reasons) - 1} more)' if len(reasons) > 1 else ''))
        for r in reasons[1:]:
            print(f'  also: {r}')
        return 1
    print('boot-test: PASS')
    return 0


if __name__ == '__main__':
    sys.exit(main())
