#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Check that arm64's el0 entry handlers call nothing before entering the kernel.

CONTEXT_TRACKING_WORK lets other CPUs leave a CPU in user space the work
of synchronising with text patched while it was away; the CPU does it in
ct_kernel_enter_state(), reached from enter_from_user_mode() through
__ct_user_exit().  Whatever an el0 handler runs before that call must not
be patched after boot.  objtool checks that on x86; it does not run on
arm64, so this script checks the part that matters most there: the
out-of-line calls.  It disassembles every function of .noinstr.text whose
name starts with el0 or __el0 (the handlers of entry-common.c, whatever
the compiler kept out of line), walks each from its entry along every
branch until the call to __ct_user_exit(), and reports every call on the
way that the audit file does not allow.  A call to another el0 function
ends the walk (that one is checked on its own); so does a return, which is
reported, as a handler must not return to user space without entering.
Static branches on context_tracking_key are taken as enabled (work is
only deferred where context tracking runs); other static branches are
followed both ways and reported unless their key is read-only after init
("static key NAME").  Alternatives are followed both ways too: the
default instructions and the replacement's branches (a cpucap test such
as ARM64_SPECTRE_V2's is a nop that becomes a branch).  Not covered: the
entry assembly (.entry.text), the exit path after __ct_user_enter(), and
what an indirect branch reaches (reported as <indirect>).

The audit file (default test/arm64-entry-audit.txt) has one allowed call
per line: FUNCTION CALLEE REASON, FUNCTION may be *; <indirect> stands for
an indirect branch or call.
Exit codes: 0 clean, 1 calls before entry that the audit does not allow,
2 usage, 3 missing tool.
"""
import argparse
import bisect
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
AUDIT = os.path.join(TOP, 'test', 'arm64-entry-audit.txt')
ENTER = '__ct_user_exit'
EL0 = re.compile(r'_*el0')


def run(argv):
    return subprocess.run(argv, capture_output=True, text=True, check=True).stdout


def load_symbols(nm, vmlinux):
    syms = {}
    for line in run([nm, vmlinux]).splitlines():
        p = line.split()
        if len(p) == 3:
            syms[p[2]] = int(p[0], 16)
    return syms


def section_of(readelf, vmlinux, addr):
    """(file offset, size left) of the loaded section that holds addr."""
    for line in run([readelf, '-SW', vmlinux]).splitlines():
        m = re.match(r'\s*\[\s*\d+\]\s+(\S+)\s+(\S+)\s+([0-9a-f]+)\s+([0-9a-f]+)\s+([0-9a-f]+)', line)
        if m and m.group(2) != 'NOBITS':
            sa, so, ss = (int(m.group(i), 16) for i in (3, 4, 5))
            if sa and sa <= addr < sa + ss:
                return so + addr - sa, sa + ss - addr
    return None, 0


def read_at(readelf, vmlinux, start, stop):
    off, left = section_of(readelf, vmlinux, start)
    if off is None or stop - start > left:
        return b''
    with open(vmlinux, 'rb') as f:
        f.seek(off)
        return f.read(stop - start)


MASK = (1 << 64) - 1


def table_entries(readelf, vmlinux, syms, start, stop, fmt):
    """(address, fields) of each entry, struct.unpack(fmt), of the table
    between symbols start and stop; none if the kernel has no such table."""
    a0, a1 = syms.get(start), syms.get(stop)
    if a0 is None or a1 is None or a1 == a0:
        return
    data = read_at(readelf, vmlinux, a0, a1)
    size = struct.calcsize(fmt)
    for i in range(0, len(data) - size + 1, size):
        yield a0 + i, struct.unpack_from(fmt, data, i)


def load_jump_table(readelf, vmlinux, syms):
    """code address -> (target address, key address, branch bit)."""
    table = {}
    for e, (code, target, key) in table_entries(readelf, vmlinux, syms, '__start___jump_table',
                                                '__stop___jump_table', '<iiq'):
        key = (e + 8 + key) & MASK
        table[(e + code) & MASK] = ((e + 4 + target) & MASK, key & ~3, key & 1)
    return table


def load_alternatives(readelf, vmlinux, syms):
    """original address -> [replacement address, ...] (struct alt_instr:
    s32 orig_offset, s32 alt_offset, u16 cpucap, u8 orig_len, u8 alt_len;
    callback alternatives, whose alt_offset is a function, are left out)."""
    alts = {}
    for e, (orig, alt, cap, orig_len, alt_len) in table_entries(
            readelf, vmlinux, syms, '__alt_instructions', '__alt_instructions_end', '<iiHBB'):
        if cap & 0x8000 or not alt_len:
            continue
        o, a = (e + orig) & MASK, (e + 4 + alt) & MASK
        for k in range(0, min(orig_len, alt_len), 4):
            alts.setdefault(o + k, []).append(a + k)
    return alts


def load_functions(objdump, vmlinux, start, stop):
    funcs, func = {}, None
    out = run([objdump, '-d', '--no-show-raw-insn', f'--start-address={start:#x}',
               f'--stop-address={stop:#x}', vmlinux])
    for line in out.splitlines():
        m = re.match(r'^([0-9a-f]+) <([^>]+)>:', line)
        if m:
            func = m.group(2)
            funcs[func] = []
            continue
        m = re.match(r'^\s*([0-9a-f]+):\s+(\S+)\s*(.*)$', line)
        if m and func:
            funcs[func].append((int(m.group(1), 16), m.group(2), m.group(3)))
    return funcs


def calls_before_entry(insns, ctx):
    """The calls (and static keys) on some path from the entry of INSNS to
    the call to ENTER."""
    index = {a: i for i, (a, _, _) in enumerate(insns)}
    seen, todo, calls = set(), [0], set()
    jump_table, alts, insn_at = ctx['jump_table'], ctx['alts'], ctx['insn_at']

    def branch(op, args):
        """(destination, callee) of a direct branch, or (None, None)."""
        m = re.search(r'([0-9a-f]+) <([^>]+)>', args)
        return (int(m.group(1), 16), m.group(2).split('+')[0]) if m else (None, None)

    while todo:
        i = todo.pop()
        while i < len(insns) and i not in seen:
            seen.add(i)
            addr, op, args = insns[i]
            dest, callee = branch(op, args)
            if addr in jump_table:
                target, key, bit = jump_table[addr]
                if key == ctx['ct_key'] and bit == 0 and target in index:
                    # context tracking is on wherever work is deferred
                    i = index[target]
                    continue
                if not ctx['ro'][0] <= key < ctx['ro'][1]:
                    calls.add('static key ' + ctx['name'](key))
                if target in index:
                    todo.append(index[target])
                if i + 1 < len(insns):
                    todo.append(i + 1)
            for alt in alts.get(addr, []):
                aop, aargs = insn_at(alt)
                adest, acallee = branch(aop, aargs)
                if aop == 'bl' and acallee:
                    if acallee != ENTER and not EL0.match(acallee):
                        calls.add(acallee)
                elif aop in ('blr', 'br'):
                    calls.add('<indirect>')
                elif adest in index:
                    todo.append(index[adest])
            if op == 'bl' and dest is not None:
                if callee == ENTER or EL0.match(callee):
                    break
                calls.add(callee)
            elif op == 'b' and dest is not None:
                if dest in index:
                    i = index[dest]
                    continue
                if callee != ENTER and not EL0.match(callee):
                    calls.add(callee)
                break
            elif op in ('br', 'blr'):
                calls.add('<indirect>')
                if op == 'br':
                    break
            elif op in ('ret', 'eret', 'retaa', 'retab'):
                calls.add('<return>')
                break
            elif op in ('brk', 'udf'):
                break
            elif (op.startswith('b.') or op in ('cbz', 'cbnz', 'tbz', 'tbnz')) and dest in index:
                todo.append(index[dest])
            i += 1
    return calls


def load_audit(path):
    allowed = set()
    with open(path) as f:
        for no, line in enumerate(f, 1):
            line = line.split('#', 1)[0].strip() if line.lstrip().startswith('#') else line.strip()
            if not line:
                continue
            fields = line.split(None, 2)
            if len(fields) < 3:
                raise ValueError(f'{path}:{no}: want "FUNCTION CALLEE REASON"')
            allowed.add((fields[0], fields[1]))
    return allowed


def check(vmlinux, tools, audit):
    syms = load_symbols(tools['nm'], vmlinux)
    if '__noinstr_text_start' not in syms or ENTER not in syms:
        return None, 'no .noinstr.text or no __ct_user_exit (a kernel without user context tracking?)'
    funcs = load_functions(tools['objdump'], vmlinux, syms['__noinstr_text_start'],
                           syms['__noinstr_text_end'])
    insns = {a: (op, args) for f in funcs.values() for a, op, args in f}
    by_addr = sorted((a, n) for n, a in syms.items())
    addrs = [a for a, _ in by_addr]

    def name(addr):
        i = bisect.bisect_right(addrs, addr) - 1
        return by_addr[i][1] + (f'+{addr - by_addr[i][0]:#x}' if addr != by_addr[i][0] else '') \
            if i >= 0 else hex(addr)

    def insn_at(addr):
        if addr not in insns:
            for f in load_functions(tools['objdump'], vmlinux, addr, addr + 4).values():
                for a, op, args in f:
                    insns[a] = (op, args)
        return insns.get(addr, ('?', ''))

    ctx = {
        'jump_table': load_jump_table(tools['readelf'], vmlinux, syms),
        'alts': load_alternatives(tools['readelf'], vmlinux, syms),
        'insn_at': insn_at,
        'ct_key': syms.get('context_tracking_key'),
        'ro': (syms.get('__start_ro_after_init', 0), syms.get('__end_ro_after_init', 0)),
        'name': name,
    }
    handlers = sorted(f for f in funcs if EL0.match(f))
    findings = []
    for f in handlers:
        for c in sorted(calls_before_entry(funcs[f], ctx)):
            if (f, c) not in audit and ('*', c) not in audit:
                findings.append(f'{f}: {c} before {ENTER}()')
    return handlers, findings


FAKE = r'''
	.section .noinstr.text, "ax"
	.globl __noinstr_text_start
__noinstr_text_start:
	.type el0_handler, %function
el0_handler:
	stp	x29, x30, [sp, #-16]!
	BEFORE
4:	bl	__ct_user_exit
	bl	after_entry
	ldp	x29, x30, [sp], #16
	ret
	TAIL
	.size el0_handler, . - el0_handler
	.globl __noinstr_text_end
__noinstr_text_end:
	.text
	.globl __ct_user_exit, after_entry, new_helper
__ct_user_exit:	ret
after_entry:	ret
new_helper:	ret
	EXTRA
'''
ALT = '''
	.pushsection .altinstructions, "a"
	.globl __alt_instructions, __alt_instructions_end
__alt_instructions:
	.long 661b - .
	.long 662f - .
	.short 1
	.byte 4, 4
__alt_instructions_end:
	.popsection
662:	b 3b
'''
KEY = '''
	.pushsection __jump_table, "aw"
	.globl __start___jump_table, __stop___jump_table
__start___jump_table:
	.long 5b - .
	.long 4b - .
	.quad the_key - .
__stop___jump_table:
	.popsection
	.data
	.globl __start_ro_after_init, __end_ro_after_init
RO_START
the_key:	.quad 0
RO_END
'''


def self_test(tools):
    """KTAP: fabricated handlers, linked into a small arm64 ELF."""
    cases = [
        ('a handler that enters first', 'nop', '', '', 0),
        ('a new call before entry', 'bl new_helper', '', '', 1),
        ('a return before entry', 'cbz x0, 1f; ldp x29, x30, [sp], #16; ret; 1:', '', '', 1),
        ('a call behind an alternative before entry', '661: nop', '3: bl new_helper; b 4b', ALT, 1),
        ('a writable static key before entry', '5: nop', '', KEY.replace('RO_START', '')
         .replace('RO_END', '__start_ro_after_init: __end_ro_after_init:'), 1),
        ('a read-only-after-init static key before entry', '5: nop', '',
         KEY.replace('RO_START', '__start_ro_after_init:').replace('RO_END', '__end_ro_after_init:'), 0),
    ]
    print('KTAP version 1')
    print(f'1..{len(cases) + 1}')
    bad = 0
    with tempfile.TemporaryDirectory(prefix='arm64-entry-check.') as tmp:
        for n, (what, before, tail, extra, want) in enumerate(cases, 1):
            src, obj, elf = (os.path.join(tmp, f'case{n}.{x}') for x in ('S', 'o', 'elf'))
            with open(src, 'w') as f:
                f.write(FAKE.replace('BEFORE', before.replace('; ', '\n\t'))
                        .replace('TAIL', tail.replace('; ', '\n\t')).replace('EXTRA', extra))
            subprocess.run([tools['gcc'], '-c', src, '-o', obj], check=True)
            subprocess.run([tools['ld'], '-e', '__noinstr_text_start', '-o', elf, obj], check=True)
            _, findings = check(elf, tools, set())
            got = 1 if findings else 0
            ok = got == want
            bad += not ok
            print(f'{"ok" if ok else "not ok"} {n} {what}: {"reported" if want else "clean"}'
                  + ('' if ok else f' # got {findings}'))
        _, findings = check(os.path.join(tmp, 'case2.elf'), tools, {('el0_handler', 'new_helper')})
        ok = not findings
        bad += not ok
        print(f'{"ok" if ok else "not ok"} {len(cases) + 1} the same call, audited: clean')
    print(f'{len(cases) + 1 - bad} passed, {bad} failed, 0 skipped')
    return 1 if bad else 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0], epilog=__doc__.split('\n\n', 1)[1],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--vmlinux', help='the arm64 vmlinux to check')
    ap.add_argument('--audit', default=AUDIT, help='the allowed calls (default: %(default)s)')
    ap.add_argument('--cross', default='aarch64-linux-gnu-', help='binutils prefix (default: %(default)s)')
    ap.add_argument('--self-test', action='store_true', help='check the checker on fabricated handlers')
    args = ap.parse_args(argv)
    tools = {t: args.cross + t for t in ('nm', 'objdump', 'readelf', 'gcc', 'ld')}
    missing = [t for t in tools.values() if not shutil.which(t)]
    if missing:
        print(f'arm64-entry-check: missing tool(s): {" ".join(missing)} (run: make deps)', file=sys.stderr)
        return 3
    if args.self_test:
        return self_test(tools)
    if not args.vmlinux:
        ap.error('--vmlinux or --self-test is required')
    try:
        audit = load_audit(args.audit)
    except (OSError, ValueError) as e:
        print(f'arm64-entry-check: {e}', file=sys.stderr)
        return 2
    handlers, findings = check(args.vmlinux, tools, audit)
    if handlers is None:
        print(f'arm64-entry-check: {args.vmlinux}: {findings}', file=sys.stderr)
        return 2
    for f in findings:
        print(f'arm64-entry-check: {f}')
    if findings:
        print(f'arm64-entry-check: FAIL: {len(findings)} call(s) before entering the kernel that '
              f'{os.path.relpath(args.audit)} does not allow')
        return 1
    print(f'arm64-entry-check: {len(handlers)} el0 handlers call nothing unaudited before {ENTER}()')
    return 0


if __name__ == '__main__':
    sys.exit(main())
