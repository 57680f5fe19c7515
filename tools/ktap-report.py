#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Judge a test boot from its serial console log.

Parses the KTAP the guest printed with the kernel tree's own KTAP parser
(tools/testing/kunit/kunit_parser.py), scans the whole console for crash
reports, prints the per-test results and a totals line
"N passed, N failed, N skipped", writes results.json and junit.xml, and
exits 0 only when every planned test ran and none failed, the selftest
suite ran (unless --no-suite) and reported all it planned, no test was
skipped that test/expected-skips does not allow, and nothing crashed.
Exit codes: 0 passed, 1 failed (reason on the last line), 2 usage,
3 no KTAP parser, 5 bad test/expected-skips.  --self-test checks this
judge on hand-made console logs.
"""

import argparse
import fnmatch
import json
import os
import re
import subprocess
import sys
import tempfile
from xml.sax.saxutils import escape, quoteattr

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TREE = os.path.join(os.environ.get('BUILD', os.path.join(TOP, 'build')), 'linux')

# The selftest binary that test/run.sh nests as a KTAP subtest.
SUITE = 'task_isolation_test'
# The one table of SKIPs that do not fail a boot (format in the file).
EXPECTED_SKIPS = os.path.join(TOP, 'test', 'expected-skips')

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
# How many of a failed test's last log lines the report repeats.
FAIL_LOG_WIDTH = 600
FAIL_LOG_LINES = 25
SKIP_LINE = re.compile(r'^\s*(?:not )?ok [0-9]+ (?:- )?(.*?) # SKIP\s*(.*)$')
RESULT_LINE = re.compile(r'^\s*(?:not )?ok [0-9]+ (?:- )?([^#]*?)\s*(?:# (.*))?$')


def leaves(test, path=()):
    """Yield (name, status, log) for every test case (tests without subtests).

    A test the parser had to make up because its parent planned more than
    were reported has no name: it is yielded as "<parent>.#<n>", MISSING."""
    name = '.'.join(p for p in path + (test.name,) if p)
    if not test.subtests:
        yield name, test.status.name, test.log
        return
    sub_path = path + ((test.name,) if test.name else ())
    for i, sub in enumerate(test.subtests, 1):
        if not sub.name and not sub.subtests:
            yield '.'.join(sub_path + (f'#{i}',)), 'MISSING', sub.log
        else:
            yield from leaves(sub, sub_path)


def short(name):
    """A case's name without the "main.", suite and "global." prefixes."""
    for prefix in ('main.', SUITE + '.', 'global.'):
        if name.startswith(prefix):
            name = name[len(prefix):]
    return name


def matches(name, pattern):
    """NAME (a full dotted case name) is PATTERN or ends in ".PATTERN"."""
    return name == pattern or name.endswith('.' + pattern)


def expand_cpus(cpus):
    """"1-3,5" -> {1, 2, 3, 5}."""
    out = set()
    for part in filter(None, cpus.split(',')):
        a, _, b = part.partition('-')
        out.update(range(int(a), int(b or a) + 1))
    return out


def load_kconfig(path):
    """The CONFIG_ symbols set (y or m or a value) in a kernel's .config."""
    have = set()
    with open(path) as f:
        for line in f:
            m = re.match(r'(CONFIG_[A-Za-z0-9_]+)=', line)
            if m:
                have.add(m.group(1))
    return have


def load_cmdline(console):
    """The words of the guest's kernel command line as the kernel printed it
    on CONSOLE (a list of lines), or None when it did not."""
    for line in console:
        m = re.search(r'Kernel command line: (.*)', line)
        if m:
            return m.group(1).split()
    return None


def load_expected_skips(path, arch, isolated, kconfig=None, cmdline=None):
    """The names test/expected-skips allows to skip here, with its why.

    kconfig is the set of symbols the kernel under test has (None: unknown,
    so that a "!CONFIG_X" line allows nothing); cmdline the words of its
    command line (None: unknown, so that a "cmdline:WORD" line allows
    nothing).  WORD may be a shell pattern (isolcpus=nohz,*)."""
    allowed = {}
    with open(path) as f:
        for no, line in enumerate(f, 1):
            if not line.strip() or line.lstrip().startswith('#'):
                continue
            fields = line.split(None, 3)
            if len(fields) < 3:
                raise ValueError(f'{path}:{no}: want "arch test when [why]"')
            arches, name, when = fields[:3]
            why = fields[3].strip() if len(fields) > 3 else ''
            m = re.fullmatch(r'always|isolated<([0-9]+)|!(CONFIG_[A-Za-z0-9_]+)|cmdline:(\S+)', when)
            if not m:
                raise ValueError(f'{path}:{no}: "when" is always, isolated<N, !CONFIG_X or '
                                 f'cmdline:WORD, not {when!r}')
            if arches != '*' and arch not in arches.split(','):
                continue
            if m.group(1) and (isolated is None or isolated >= int(m.group(1))):
                continue
            if m.group(2) and (kconfig is None or m.group(2) in kconfig):
                continue
            if m.group(3) and (cmdline is None or
                               not any(fnmatch.fnmatchcase(w, m.group(3)) for w in cmdline)):
                continue
            allowed[name] = why or when
    return allowed


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0], epilog=(
        'Exit codes: 0 passed, 1 failed (the reason on the last line), 2 usage, '
        '3 no KTAP parser in $BUILD/linux (make tree), 5 bad test/expected-skips.'))
    ap.add_argument('--console', help='the serial console log')
    ap.add_argument('--outdir', help='where results.json and junit.xml go')
    ap.add_argument('--suite-name', default='task_isolation', help='the JUnit test suite name')
    ap.add_argument('--verdict', default='', help='a failure already known (timeout, hang)')
    ap.add_argument('--arch', default='', help='the guest architecture, for test/expected-skips')
    ap.add_argument('--isolated-cpus', default=None, metavar='LIST',
                    help='the isolated CPUs, for "isolated<N" in test/expected-skips')
    ap.add_argument('--allow-skip', action='append', default=[], metavar='NAME',
                    help='a test that may SKIP in this run too (repeatable)')
    ap.add_argument('--no-suite', action='store_true',
                    help=f'{SUITE} was not meant to run (boot-test.sh --no-suite)')
    ap.add_argument('--kconfig', metavar='FILE',
                    help='the .config of the kernel under test, for "!CONFIG_X" in test/expected-skips')
    ap.add_argument('--expected-skips', default=EXPECTED_SKIPS, metavar='FILE', help=argparse.SUPPRESS)
    ap.add_argument('--self-test', action='store_true',
                    help='judge hand-made console logs and check the verdicts (needs the KTAP parser)')
    args = ap.parse_args(argv)
    if args.self_test:
        return self_test()
    if not args.console or not args.outdir:
        ap.error('--console and --outdir are required')

    with open(args.console, errors='replace') as f:
        console = f.read().splitlines()

    isolated = len(expand_cpus(args.isolated_cpus)) if args.isolated_cpus is not None else None
    try:
        kconfig = load_kconfig(args.kconfig) if args.kconfig else None
        allowed = load_expected_skips(args.expected_skips, args.arch, isolated, kconfig,
                                      load_cmdline(console))
    except (OSError, ValueError) as e:
        print(f'boot-test: error: {e}', file=sys.stderr)
        return 5
    for name in args.allow_skip:
        allowed[name] = 'allowed with --allow-skip'

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

    # What the result lines said after "# SKIP" or "#" (the parser drops it).
    directive = {}
    for line in ktap:
        m = SKIP_LINE.match(line)
        if m:
            directive[m.group(1).strip()] = m.group(2).strip()
            continue
        m = RESULT_LINE.match(line)
        if m and m.group(2):
            directive[m.group(1)] = m.group(2).strip()

    cases = list(leaves(top)) if top.subtests else []
    passed = sum(1 for c in cases if c[1] == 'SUCCESS')
    skipped = sum(1 for c in cases if c[1] == 'SKIPPED')
    failed = len(cases) - passed - skipped	# MISSING ones too
    not_reported = sum(1 for c in cases if c[1] == 'MISSING')

    def said(name):
        """The directive of NAME's result line (it names only the last part)."""
        parts = name.split('.')
        return next((directive[k] for k in ('.'.join(parts[i:]) for i in range(len(parts)))
                     if k in directive), '')

    def skip_reason(name, log):
        why = said(name)
        if not why:	# an --extra program: its last line of output
            lines = [x.strip().lstrip('#').strip() for x in log]
            why = next((x for x in reversed(lines) if x), 'no reason given')
        return why

    skips = {}	# name -> (reason, allowed why or None)
    for name, status, log in cases:
        if status == 'SKIPPED':
            ok = next((why for pat, why in allowed.items() if matches(name, pat)), None)
            skips[name] = (skip_reason(name, log), ok)

    if not top.subtests:
        reasons.append('no KTAP results on the console')
    elif top.expected_count is None:
        reasons.append('no KTAP plan line')
    suite = next((t for t in top.subtests if t.name == SUITE), None)
    if not args.no_suite and top.subtests:
        if suite is None:
            reasons.append(f'the selftest suite {SUITE} did not report at all')
        elif not suite.subtests:
            why = said(SUITE)
            reasons.append(f'the selftest suite {SUITE} printed no test results'
                           + (f' ({why})' if why else ''))
    if not_reported:
        i = next(i for i, c in enumerate(cases) if c[1] == 'MISSING')
        reasons.append(f'{not_reported} planned test(s) did not report, first: {cases[i][0]}'
                       + (f' (the last that did: {short(cases[i - 1][0])})' if i else ''))
    really_failed = [c[0] for c in cases if c[1] not in ('SUCCESS', 'SKIPPED', 'MISSING')]
    if really_failed:
        first = really_failed[0]
        why = said(first)
        reasons.append(f'{len(really_failed)} test(s) failed, first: {first}' + (f' ({why})' if why else ''))
    unexpected = [(n, r) for n, (r, ok) in skips.items() if ok is None]
    if unexpected:
        by_reason = {}
        for n, r in unexpected:
            by_reason.setdefault(r, []).append(short(n))
        parts = []
        for r, names in by_reason.items():
            more = f' (+{len(names) - 6} more)' if len(names) > 6 else ''
            parts.append(f'{", ".join(names[:6])}{more}: "{r}"')
        where = f' on {args.arch}' if args.arch else ''
        reasons.append(f'{len(unexpected)} test(s) skipped that test/expected-skips does not allow{where}: '
                       + '; '.join(parts))
    if top.counts.errors:
        reasons.append(f'{top.counts.errors} KTAP parse error(s)')

    print('\nper-test results:')
    for name, status, _ in cases:
        note = ''
        if name in skips:
            r, ok = skips[name]
            note = f'  # {r}' + (f' [expected: {ok}]' if ok else ' [NOT EXPECTED]')
        print(f'  {status:<12} {name}{note}')

    with open(os.path.join(args.outdir, 'results.json'), 'w') as f:
        json.dump({'cases': [dict({'name': n, 'status': s},
                                  **({'skip_reason': skips[n][0], 'skip_expected': skips[n][1] is not None}
                                     if n in skips else {}))
                             for n, s, _ in cases],
                   'passed': passed, 'failed': failed, 'skipped': skipped,
                   'unexpected_skips': len(unexpected),
                   'reasons': reasons}, f, indent=1)
    with open(os.path.join(args.outdir, 'junit.xml'), 'w') as f:
        f.write('<?xml version="1.0" encoding="UTF-8"?>\n')
        f.write(f'<testsuite name={quoteattr(args.suite_name)} tests="{len(cases)}" '
                f'failures="{failed}" skipped="{skipped}">\n')
        for name, status, log in cases:
            f.write(f'  <testcase classname={quoteattr(args.suite_name)} name={quoteattr(name)}>')
            if status == 'SKIPPED':
                f.write(f'<skipped message={quoteattr(skips[name][0])}/>')
            elif status != 'SUCCESS':
                f.write(f'<failure message={quoteattr(status)}>{escape(chr(10).join(log))}</failure>')
            f.write('</testcase>\n')
        if reasons:
            f.write(f'  <system-err>{escape(chr(10).join(reasons))}</system-err>\n')
        f.write('</testsuite>\n')

    # What each failed test said (its TH_LOG and EXPECT lines), so that the
    # tail of a CI log names the cause without the console at hand.
    for name, status, log in cases:
        if status in ('SUCCESS', 'SKIPPED', 'MISSING'):
            continue
        said_lines = [x.strip() for x in log if x.strip().lstrip('#').strip()]
        print(f'\n{name} said ({min(len(said_lines), FAIL_LOG_LINES)} of {len(said_lines)} lines):')
        # Long enough for a kernel log line quoted whole (the cause of a
        # loss of isolation names its sender at the end).
        for x in said_lines[-FAIL_LOG_LINES:]:
            print(f'  {x[:FAIL_LOG_WIDTH]}')

    print(f'\nconsole: {args.console}\njunit:   {os.path.join(args.outdir, "junit.xml")}')
    print(f'{passed} passed, {failed} failed, {skipped} skipped')
    if reasons:
        # The first reason goes on the last line; the others just above it.
        for r in reasons[1:]:
            print(f'boot-test: also: {r}')
        print(f'boot-test: FAIL: {reasons[0]}' + (f' (+{len(reasons) - 1} more above)' if len(reasons) > 1 else ''))
        return 1
    print('boot-test: PASS')
    return 0


# --self-test: hand-made console logs, shaped like test/run.sh's output, and
# the verdict each must get (PASS, or FAIL with a phrase of its reason).
def _log(results, plan=None, arch='x86_64', after='', cmdline=''):
    """A console log: the CPU check, a nested suite with RESULTS
    (name, SKIP reason or '') and PLAN (default: as many as results), a dmesg dump
    and AFTER, a line printed after the dump; CMDLINE, the kernel's command
    line as it prints it."""
    plan = len(results) if plan is None else plan
    out = ['[    0.000000] Linux version 6.12.0 (selftest)',
           f'[    0.000000] Kernel command line: root=/dev/vda nohz_full=1-3 {cmdline}',
           f'ti-init: guest up: 6.12.0 on {arch}, 4 cpus',
           'KTAP version 1', '1..2', '# isolated CPUs: 1-3', 'ok 1 isolated_cpus_match_cmdline']
    out += ['  TAP version 13', f'  # Subtest: {SUITE}', f'  1..{plan}']
    for i, (name, skip, *said) in enumerate(results, 1):
        out.append(f'  #  RUN           global.{name} ...')
        if skip:
            out.append(f'  #      SKIP      {skip}')
        if said:	# a failure, and what the test said
            out.append(f'  # task_isolation_test.c:1:{name}:{said[0]}')
            out.append(f'  #          FAIL  global.{name}')
            out.append(f'  not ok {i} global.{name}')
            continue
        out.append(f'  #            OK  global.{name}')
        out.append(f'  ok {i} global.{name}' + (f' # SKIP {skip}' if skip else ''))
    out += [f'ok 2 {SUITE}', '# ti-run: done', DMESG_START,
            '[    0.000000] Linux version 6.12.0 (selftest)', '=== end guest dmesg ===',
            'ti-init: run.sh exited with 0']
    if after:
        out.append(after)
    out.append('[   99.000000] reboot: Power down')
    return '\n'.join(out) + '\n'


NOISO = 'no CPU can run isolated tasks (see /sys/devices/system/cpu/task_isolation)'
TLB = 'TLB invalidation is broadcast in hardware here: no IPI'
CGROUP = 'no cgroup v2 freezer'
FREEZER = 'resumed.freezer_cgroup_default.isolation_signal_after_resume'
WDOG = 'no clocksource watchdog runs'
DOMAIN = 'no CPU isolated from the scheduler domains only'
DOMAIN_TEST = 'slow_noise.domain_isolated_cpu_pulls_no_timers'
NAMES = ['prctl_einval', 'tlb_flush_munmap', 'tlb_flush_mprotect', 'state_visible']
SELF_TESTS = [
    # (what, console, extra arguments, expected verdict, phrase of the reason
    #  [, phrase the output shows above the verdict])
    ('all but one test skip (x86_64)',
     _log([(n, NOISO if n != 'prctl_einval' else '') for n in NAMES]),
     ['--arch', 'x86_64'], 'FAIL', 'test(s) skipped that test/expected-skips does not allow'),
    ('fewer results than the plan',
     _log([(n, '') for n in NAMES[:2]], plan=4),
     ['--arch', 'x86_64'], 'FAIL', '2 planned test(s) did not report'),
    ('only the TLB skips that arm64 allows',
     _log([(n, TLB if n.startswith('tlb_') else '') for n in NAMES], arch='aarch64'),
     ['--arch', 'arm64'], 'PASS', ''),
    ('the same TLB skips on x86_64',
     _log([(n, TLB if n.startswith('tlb_') else '') for n in NAMES]),
     ['--arch', 'x86_64'], 'FAIL', 'tlb_flush_munmap, tlb_flush_mprotect: "' + TLB),
    ('a WARNING after the dmesg dump',
     _log([(n, '') for n in NAMES], after='[   98.000000] WARNING: CPU: 0 PID: 1 at kernel/reboot.c:1 x'),
     ['--arch', 'x86_64'], 'FAIL', 'kernel WARNING'),
    ('no suite at all',
     'KTAP version 1\n1..2\nok 1 isolated_cpus_match_cmdline\n'
     f'# {SUITE}: not on the test disk\nnot ok 2 {SUITE} # missing\n',
     ['--arch', 'x86_64'], 'FAIL', f'the selftest suite {SUITE} printed no test results (missing)'),
    ('a skip allowed only without CONFIG_CGROUPS, on a kernel without it',
     _log([(n, CGROUP if n == FREEZER else '') for n in NAMES + [FREEZER]]),
     ['--arch', 'x86_64', '--kconfig', '{tmp}/without.config'], 'PASS', ''),
    ('the same skip on a kernel with CONFIG_CGROUPS',
     _log([(n, CGROUP if n == FREEZER else '') for n in NAMES + [FREEZER]]),
     ['--arch', 'x86_64', '--kconfig', '{tmp}/with.config'], 'FAIL', FREEZER + ': "' + CGROUP),
    ('a skip allowed only with tsc=nowatchdog, on a kernel booted with it',
     _log([(n, WDOG if n == 'clocksource_watchdog_skips_isolated' else '')
           for n in NAMES + ['clocksource_watchdog_skips_isolated']], cmdline='tsc=nowatchdog'),
     ['--arch', 'x86_64'], 'PASS', ''),
    ('the same skip on a kernel booted without it',
     _log([(n, WDOG if n == 'clocksource_watchdog_skips_isolated' else '')
           for n in NAMES + ['clocksource_watchdog_skips_isolated']]),
     ['--arch', 'x86_64'], 'FAIL', 'clocksource_watchdog_skips_isolated: "' + WDOG),
    ('a skip allowed by a command-line pattern (isolcpus=nohz,*), on a kernel booted so',
     _log([(n, DOMAIN if n == DOMAIN_TEST else '') for n in NAMES + [DOMAIN_TEST]],
          cmdline='isolcpus=nohz,domain,managed_irq,1-3'),
     ['--arch', 'x86_64'], 'PASS', ''),
    ('the same skip on a kernel booted with isolcpus=domain,managed_irq,1-2,3',
     _log([(n, DOMAIN if n == DOMAIN_TEST else '') for n in NAMES + [DOMAIN_TEST]],
          cmdline='isolcpus=domain,managed_irq,1-2,3'),
     ['--arch', 'x86_64'], 'FAIL', DOMAIN_TEST + ': "' + DOMAIN),
    ('a failed test: what it said is repeated before the verdict',
     _log([(n, '', 'isolation was lost during 8 s: due to IPI') if n == 'state_visible' else (n, '')
           for n in NAMES]),
     ['--arch', 'x86_64'], 'FAIL', '1 test(s) failed, first: main.task_isolation_test.global.state_visible',
     'isolation was lost during 8 s: due to IPI'),
]


def self_test():
    """Judge each SELF_TESTS log in a subprocess; KTAP of the outcomes."""
    print('KTAP version 1')
    print(f'1..{len(SELF_TESTS)}')
    bad = 0
    with tempfile.TemporaryDirectory(prefix='ktap-report-self-test.') as tmp:
        with open(os.path.join(tmp, 'with.config'), 'w') as f:
            f.write('CONFIG_CGROUPS=y\n')
        with open(os.path.join(tmp, 'without.config'), 'w') as f:
            f.write('# CONFIG_CGROUPS is not set\n')
        for i, (what, log, extra, want, phrase, *shown) in enumerate(SELF_TESTS, 1):
            extra = [a.replace('{tmp}', tmp) for a in extra]
            con = os.path.join(tmp, f'console{i}.log')
            with open(con, 'w') as f:
                f.write(log)
            p = subprocess.run([sys.executable, os.path.abspath(__file__), '--console', con,
                                '--outdir', tmp, '--isolated-cpus', '1-3'] + extra,
                               capture_output=True, text=True)
            last = (p.stdout.strip().splitlines() or [''])[-1]
            got = {0: 'PASS', 1: 'FAIL'}.get(p.returncode, f'exit {p.returncode}')
            ok = got == want and phrase in last and last.startswith(f'boot-test: {want}')
            # A phrase the output must show above the verdict
            ok = ok and all(x in p.stdout for x in shown)
            if not ok:
                bad += 1
                for line in (p.stdout.strip().splitlines()[-4:] + p.stderr.strip().splitlines()[-4:]):
                    print(f'# {line}')
            print(f'{"ok" if ok else "not ok"} {i} {what}: {want}'
                  + ('' if ok else f' # got {got}: {last[:160]}'))
    print(f'{len(SELF_TESTS) - bad} passed, {bad} failed, 0 skipped')
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
