/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A noinstr function with one static branch on KEY, the way
 * arch_static_branch() emits it: a 5-byte NOP and a __jump_table entry.
 * -DKEY_SECTION picks where the key lives; -DALLOW names it in
 * .discard.noinstr_allowed as ANNOTATE_NOINSTR_ALLOWED() does.
 */
	.section .noinstr.text, "ax"
	.globl	entry_from_user
	.type	entry_from_user, @function
entry_from_user:
1:	.byte	0x0f, 0x1f, 0x44, 0x00, 0x00
	xorl	%eax, %eax
	ret
2:	movl	$1, %eax
	ret
	.size	entry_from_user, . - entry_from_user

	.section __jump_table, "aw"
	.balign	8
	.long	1b - .
	.long	2b - .
	.quad	the_key - .

	.section KEY_SECTION, "aw"
	.balign	8
	.globl	the_key
	.type	the_key, @object
the_key:
	.quad	0, 0
	.size	the_key, . - the_key

#ifdef ALLOW
	.section .discard.noinstr_allowed, "aw"
	.balign	8
	.quad	the_key
#endif
