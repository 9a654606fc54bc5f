// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A program built WITHOUT fhook's flags that keeps running: for each line
 * read from stdin it prints kp_add(1, 2).  The tests attach to it (fhook
 * inject -p) between lines, so what each line printed tells what was in
 * place, with no timing involved.
 */
#include <stdio.h>

__attribute__((noipa)) long kp_add(long a, long b)
{
	return a + b;
}

int main(void)
{
	char line[256];

	while (fgets(line, sizeof(line), stdin)) {
		printf("%ld\n", kp_add(1, 2));
		fflush(stdout);
	}
	return 0;
}
