/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A noinstr function with static branches, the way arch_static_branch()
 * emits them: a 5-byte NOP and a __jump_table entry {code, target, key}.
 *   -DKEY_SECTION=...  where the keys live (.data, .data..ro_after_init)
 *   -DALLOW            name the_key in .discard.noinstr_allowed, as
 *                      ANNOTATE_NOINSTR_ALLOWED() does
 *   -DLOCAL            the_key is a local symbol: the entry refers to it
 *                      through its section symbol
 *   -DBRANCH=1         the entry's key carries the branch bit (likely)
 *   -DOFFSET=8         the key sits 8 bytes into the object (a tracepoint)
 *   -DSECOND           a second branch, on other_key, in the same function
 *   -DINSTR            the first branch sits between instrumentation_begin()
 *                      and instrumentation_end() marks (NOINSTR_VALIDATION)
 */
#ifndef BRANCH
#define BRANCH 0
#endif
#ifndef OFFSET
#define OFFSET 0
#endif
	.section .noinstr.text, "ax"
	.globl	entry_from_user
	.type	entry_from_user, @function
entry_from_user:
#ifdef INSTR
4:	nop
#endif
1:	.byte	0x0f, 0x1f, 0x44, 0x00, 0x00
#ifdef INSTR
5:	nop
#endif
	xorl	%eax, %eax
#ifdef SECOND
3:	.byte	0x0f, 0x1f, 0x44, 0x00, 0x00
#endif
	ret
2:
#ifdef INSTR
6:	nop
#endif
	movl	$1, %eax
	ret
	.size	entry_from_user, . - entry_from_user

#ifdef INSTR
	/* as instrumentation_begin() and _end() mark them */
	.pushsection .discard.instr_begin, "aw"
	.long	4b - .
	.popsection
	.pushsection .discard.instr_end, "aw"
	.long	5b - .
	.long	6b - .
	.popsection
#endif

	.section __jump_table, "aw"
	.balign	8
	.long	1b - .
	.long	2b - .
	.quad	the_key + OFFSET + BRANCH - .
#ifdef SECOND
	.long	3b - .
	.long	2b - .
	.quad	other_key - .
#endif

	.section KEY_SECTION, "aw"
	.balign	8
#ifndef LOCAL
	.globl	the_key
#endif
	.type	the_key, @object
the_key:
	.quad	0, 0, 0
	.size	the_key, . - the_key
	.type	other_key, @object
other_key:
	.quad	0, 0
	.size	other_key, . - other_key

#ifdef ALLOW
	.section .discard.noinstr_allowed, "aw"
	.balign	8
	.quad	the_key
#endif
