/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A noinstr function that makes one static call, the way static_call()
 * emits it: a call to the trampoline __SCT__hook, whose key is __SCK__hook.
 * -DKEY_SECTION picks where the key lives; -DALLOW names it in
 * .discard.noinstr_allowed as ANNOTATE_NOINSTR_ALLOWED() does; -DTAIL makes
 * it a tail call (jmp); -DOTHER_CALL first calls a function outside
 * .noinstr.text, which objtool reports too (without the
 * instrumentation_begin() marks of NOINSTR_VALIDATION, most entry
 * functions have such a report), and which must not hide the key's;
 * -DINSTR puts the call between instrumentation_begin() and
 * instrumentation_end() marks (NOINSTR_VALIDATION).
 */
	.section .noinstr.text, "ax"
	.globl	entry_from_user
	.type	entry_from_user, @function
entry_from_user:
#ifdef OTHER_CALL
	call	plain_function
#endif
#ifdef TAIL
	jmp	__SCT__hook
#else
#ifdef INSTR
1:	nop
#endif
	call	__SCT__hook
#ifdef INSTR
2:	nop
#endif
	ret
#endif
	.size	entry_from_user, . - entry_from_user

#ifdef INSTR
	.pushsection .discard.instr_begin, "aw"
	.long	1b - .
	.popsection
	.pushsection .discard.instr_end, "aw"
	.long	2b - .
	.popsection
#endif

	.text
	.globl	plain_function
	.type	plain_function, @function
plain_function:
	ret
	.size	plain_function, . - plain_function

	.globl	__SCT__hook
	.type	__SCT__hook, @function
__SCT__hook:
	ret
	.size	__SCT__hook, . - __SCT__hook

	.section KEY_SECTION, "aw"
	.balign	8
	.globl	__SCK__hook
	.type	__SCK__hook, @object
__SCK__hook:
	.quad	0, 0
	.size	__SCK__hook, . - __SCK__hook

#ifdef ALLOW
	.section .discard.noinstr_allowed, "aw"
	.balign	8
	.quad	__SCK__hook
#endif
