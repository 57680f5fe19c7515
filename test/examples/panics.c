// SPDX-License-Identifier: GPL-2.0
/* boot-test self-check: panic the guest (sysrq crash). */
#include <fcntl.h>
#include <unistd.h>
int main(void)
{
	int fd = open("/proc/sysrq-trigger", O_WRONLY);

	return write(fd, "c", 1) == 1 ? 0 : 1;
}
