// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The program `fhook patch` and `fhook inject` act on in test_cli.sh.
 * Built traceable and -rdynamic, not linked with libfhook (the command
 * preloads it).
 *
 *   lp_prog greet        prints what greeting() returns from greet_a/b/c
 *   lp_prog open N       N calls of do_open() from open_config and open_log,
 *                        printing which failed (the error path)
 *   lp_prog second       tries a second IPMODIFY user on greeting() itself
 *   lp_prog exit N       exits with N
 *   lp_prog child        runs "lp_prog greet" as a child process
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NOINLINE __attribute__((noinline, noclone))

NOINLINE const char *greeting(void)
{
	__asm__ volatile("");
	return "hello";
}

NOINLINE int greet_a(char *buf) { const char *g = greeting(); strcpy(buf, g); return 0; }
NOINLINE int greet_b(char *buf) { const char *g = greeting(); strcpy(buf, g); return 0; }
NOINLINE int greet_c(char *buf) { const char *g = greeting(); strcpy(buf, g); return 0; }

/* reaches greeting() with a jump */
NOINLINE const char *tail_greet(void)
{
	return greeting();
}

__attribute__((noinline, patchable_function_entry(0, 0))) int not_traceable(int x)
{
	__asm__ volatile("");
	return x + 1;
}

NOINLINE long do_open(int k)
{
	__asm__ volatile("");
	return k < 0 ? -EINVAL : 0;
}

static int errors_config, errors_log;
static char failed_config[4096];

NOINLINE int open_config(int k)
{
	long ret = do_open(k);

	if (ret) {
		errors_config++;
		snprintf(failed_config + strlen(failed_config),
			 sizeof(failed_config) - strlen(failed_config), " %d", k);
		if (ret != -ENOMEM)
			printf("unexpected error %ld\n", ret);
		return -1;
	}
	return 0;
}

NOINLINE int open_log(int k)
{
	if (do_open(k)) {
		errors_log++;
		return -1;
	}
	return 0;
}

static void greet(void)
{
	char buf[64];

	greet_a(buf);
	printf("a: %s\n", buf);
	greet_b(buf);
	printf("b: %s\n", buf);
	greet_c(buf);
	printf("c: %s\n", buf);
	printf("tail: %s\n", tail_greet());
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "greet")) {
		greet();
	} else if (argc > 2 && !strcmp(argv[1], "open")) {
		int n = atoi(argv[2]), k;

		for (k = 1; k <= n; k++) {
			open_config(k);
			open_log(k);
		}
		printf("config errors %d:%s\n", errors_config, failed_config);
		printf("log errors %d\n", errors_log);
	} else if (argc > 1 && !strcmp(argv[1], "second")) {
		void *(*lp_new)(const char *, const void *) = dlsym(RTLD_DEFAULT, "fhook_lp_new");
		int (*redirect)(void *, const char *, void *) = dlsym(RTLD_DEFAULT,
								       "fhook_lp_redirect");
		int (*apply)(void *) = dlsym(RTLD_DEFAULT, "fhook_lp_apply");
		void *lp;

		if (!lp_new || !redirect || !apply) {
			printf("no libfhook\n");
			return 1;
		}
		lp = lp_new("greeting", NULL);
		redirect(lp, "greet_c", (void *)not_traceable);
		printf("second apply: %d\n", apply(lp));
		greet();
	} else if (argc > 2 && !strcmp(argv[1], "exit")) {
		return atoi(argv[2]);
	} else if (argc > 1 && !strcmp(argv[1], "child")) {
		char *cmd;

		if (asprintf(&cmd, "'%s' greet", argv[0]) < 0)
			return 1;
		fflush(stdout);
		return system(cmd) ? 1 : 0;
	} else {
		printf("%d\n", not_traceable(1));
	}
	return 0;
}
