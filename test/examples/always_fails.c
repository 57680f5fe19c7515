// SPDX-License-Identifier: GPL-2.0
/* boot-test self-check: a test that fails. */
#include <stdio.h>
int main(void)
{
	printf("deliberately failing\n");
	return 1;
}
