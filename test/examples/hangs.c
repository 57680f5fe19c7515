// SPDX-License-Identifier: GPL-2.0
/* boot-test self-check: hang the guest silently. */
#include <unistd.h>
int main(void)
{
	for (;;)
		pause();
}
