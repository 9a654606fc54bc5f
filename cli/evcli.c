// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The shared part of `fhook record` and `fhook trace` (cli/evcli.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <fhook/internal/events.h>

#include "arch_insn.h"
#include "cli.h"
#include "attach.h"
#include "evcli.h"
#include <fhook/internal/elf.h>
#include "../lib/events/ev.h"
#include "../lib/recorder/ring.h"
#include "../lib/events/filter.h"

/* Without -e: every function's entry and exit, as `uftrace record` does. */
static char *default_specs[] = { "f:fhook/entry *", "f:fhook/exit *%return" };

/* How long a program may run on after fhook was told to stop. */
#define CLI_STOP_GRACE_MS	5000

/*
 * A trigger's ":N" at [@colon, @end): at most N dumps, as the kernel's
 * "traceoff:N" runs N times.  0 or -1 (said).
 */
static int parse_trigger_count(struct cli_ev *c, const char *arg, const char *colon,
			       const char *end)
{
	unsigned long long n = 0;
	const char *p = colon + 1;

	while (p < end && *p >= '0' && *p <= '9' && n <= UINT32_MAX)
		n = n * 10 + (unsigned int)(*p++ - '0');
	if (p == colon + 1 || p != end || !n || n > UINT32_MAX) {
		fprintf(stderr, "fhook: %s: --trigger %s: the count after ':' is a number of dumps, "
			"1 to %u\n", c->cmd, arg, UINT32_MAX);
		return -1;
	}
	c->trigger_count = (uint32_t)n;
	return 0;
}

/*
 * --trigger 'FUNC>DURATION[:N]': a call of FUNC that took DURATION or
 * longer (a number with ns, us, ms or s) fires the flight recorder, N
 * times at most.  0 or -1 (said).
 */
static int parse_duration_trigger(struct cli_ev *c, const char *arg)
{
	static const struct { const char *unit; double ns; } units[] = {
		{ "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 },
	};
	const char *gt = strchr(arg, '>'), *colon;
	char *end;
	double v;
	size_t i, len = gt - arg;

	if (c->trigger_func) {
		fprintf(stderr, "fhook: %s: --trigger %s: one duration trigger at a time\n",
			c->cmd, arg);
		return -1;
	}
	if (!len || len >= EV_TRIGGER_FUNC_MAX) {
		fprintf(stderr, "fhook: %s: --trigger %s: FUNC>DURATION names a function\n",
			c->cmd, arg);
		return -1;
	}
	colon = strchr(gt, ':');
	if (colon && parse_trigger_count(c, arg, colon, colon + strlen(colon)))
		return -1;
	v = strtod(gt + 1, &end);
	for (i = 0; end != gt + 1 && i < sizeof(units) / sizeof(units[0]); i++)
		if (colon ? (size_t)(colon - end) == strlen(units[i].unit) &&
			    !strncmp(end, units[i].unit, colon - end) :
			    !strcmp(end, units[i].unit))
			break;
	if (end == gt + 1 || i == sizeof(units) / sizeof(units[0]) || !(v >= 0) ||
	    v * units[i].ns > 1e18) {
		fprintf(stderr, "fhook: %s: --trigger %s: DURATION is a number with ns, us, ms "
			"or s (FUNC>5ms, or FUNC>5ms:N for N dumps at most)\n", c->cmd, arg);
		return -1;
	}
	c->trigger_func = strndup(arg, len);
	if (!c->trigger_func)
		return -1;
	c->trigger_ns = (uint64_t)(v * units[i].ns);
	return 0;
}

/*
 * --trigger 'EVENT[:N] if FILTER': EVENT one of the -e events (EVENT or
 * GROUP/EVENT), FILTER the kernel's event filter on its fields, N the
 * dumps it may fire.  0, or -1 (said as the kernel's filter file says
 * it: parse_error, and where).
 */
static int trigger_compile(struct cli_ev *c)
{
	const char *spec = c->trigger_spec, *sep = strstr(spec, " if "), *filter = sep + 4;
	const char *err, *slash, *colon;
	int i, n, pos;
	size_t len;

	/* (not past the " if ": no EVENT at all is no event of that name) */
	while (spec < sep && *spec == ' ')
		spec++;
	len = (size_t)(sep - spec);
	while (len && spec[len - 1] == ' ')
		len--;
	colon = memchr(spec, ':', len);
	if (colon) {
		if (parse_trigger_count(c, c->trigger_spec, colon, spec + len))
			return -1;
		len = (size_t)(colon - spec);
	}
	slash = memchr(spec, '/', len);
	for (i = 0; i < c->nr_evs; i++) {
		const struct fhook_event *ev = &c->evs[i];

		if (slash ? (size_t)(slash - spec) == strlen(ev->group) &&
			    !strncmp(spec, ev->group, slash - spec) &&
			    strlen(ev->event) == len - (slash - spec) - 1 &&
			    !strncmp(slash + 1, ev->event, len - (slash - spec) - 1) :
			    strlen(ev->event) == len && !strncmp(spec, ev->event, len))
			break;
	}
	if (i == c->nr_evs) {
		fprintf(stderr, "fhook: %s: --trigger %s: no event %.*s among the -e events\n",
			c->cmd, c->trigger_spec, (int)len, spec);
		return -1;
	}
	n = ev_filter_compile(&c->evs[i], filter, c->trigger_filter, &err, &pos);
	if (n < 0) {
		fprintf(stderr, "fhook: %s: --trigger: parse_error: %s\n  Command: %s\n"
			"           %*s^\n", c->cmd, err, c->trigger_spec,
			(int)(filter - c->trigger_spec) + pos, "");
		return -1;
	}
	c->trigger_event = i;
	c->nr_trigger_filter = n;
	return 0;
}

int cli_ev_parse(struct cli_ev *c, int argc, char **argv, void (*usage)(FILE *))
{
	static const struct option opts[] = {
		{ "event", required_argument, NULL, 'e' },
		{ "caller", required_argument, NULL, 'c' },
		{ "output", required_argument, NULL, 'o' },
		{ "format", required_argument, NULL, 'f' },
		{ "dry-run", no_argument, NULL, 'n' },
		{ "no-follow", no_argument, NULL, 'F' },
		{ "lossy", no_argument, NULL, 'L' },
		{ "clock", required_argument, NULL, 'C' },
		{ "buffer-size", required_argument, NULL, 'b' },
		{ "pid", required_argument, NULL, 'p' },
		{ "duration", required_argument, NULL, 'D' },
		{ "flight-recorder", optional_argument, NULL, 'R' },
		{ "trigger", required_argument, NULL, 'T' },
		{ "page-cache", no_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int ch;

	c->follow = true;
	c->clock = -1;
	optind = 1;
	while ((ch = getopt_long(argc, argv, "+he:o:p:", opts, NULL)) != -1) {
		switch (ch) {
		case 'p':
			c->pid = cli_attach_parse_pid(c->cmd, optarg);
			if (c->pid < 0)
				return 2;
			break;
		case 'D': {
			char *end;

			c->duration = strtod(optarg, &end);
			/* (not "nan" nor "inf": !(x > 0) is true for NaN) */
			if (end == optarg || *end || !(c->duration > 0) || isinf(c->duration)) {
				fprintf(stderr, "fhook: %s: --duration needs seconds, got '%s'\n",
					c->cmd, optarg);
				return 2;
			}
			break;
		}
		case 'R': {
			char *end;
			unsigned long mb = optarg ? strtoul(optarg, &end, 10) : 2;
			uint64_t v = EV_RING_MIN;

			if ((optarg && (end == optarg || *end)) || !mb || mb > (EV_RING_MAX >> 20)) {
				fprintf(stderr, "fhook: %s: --flight-recorder=MB: megabytes per thread, "
					"1 to %lu, got '%s'\n", c->cmd, EV_RING_MAX >> 20, optarg);
				return 2;
			}
			/* a ring is a power of two: the next one up */
			while (v < (uint64_t)mb << 20)
				v <<= 1;
			c->flight = true;
			c->ring_size = v;
			break;
		}
		case 'T': {
			int sig = 0;

			if (strstr(optarg, " if ")) {
				c->trigger_spec = optarg;	/* compiled with the events */
				break;
			}
			if (strchr(optarg, '>')) {
				if (parse_duration_trigger(c, optarg))
					return 2;
				break;
			}
			if (!strncmp(optarg, "signal:", 7)) {
				const char *n = optarg + 7;

				if (!strncmp(n, "SIG", 3))
					n += 3;
				sig = !strcmp(n, "USR1") ? SIGUSR1 : !strcmp(n, "USR2") ? SIGUSR2 :
				      !strcmp(n, "QUIT") ? SIGQUIT : !strcmp(n, "PROF") ? SIGPROF : 0;
				if (!sig) {
					char *end;
					long v = strtol(n, &end, 10);

					if (end != n && !*end && v >= SIGRTMIN && v <= SIGRTMAX)
						sig = (int)v;
				}
			}
			if (!sig) {
				fprintf(stderr, "fhook: %s: --trigger %s: signal:USR1, signal:USR2, "
					"signal:QUIT, signal:PROF or signal:N (a real-time signal)\n",
					c->cmd, optarg);
				return 2;
			}
			c->trigger_sig = sig;
			break;
		}
		case 'e':
			c->specs = realloc(c->specs, (c->nr_specs + 1) * sizeof(*c->specs));
			c->specs[c->nr_specs++] = optarg;
			break;
		case 'c':
			c->callers = realloc(c->callers, (c->nr_callers + 1) * sizeof(*c->callers));
			c->callers[c->nr_callers++] = optarg;
			break;
		case 'o':
			c->out = optarg;
			break;
		case 'f':
			c->format = optarg;
			break;
		case 'n':
			c->dry_run = true;
			break;
		case 'F':
			c->follow = false;
			break;
		case 'L':
			c->lossy = true;
			break;
		case 'P':
			c->buffered = true;
			break;
		case 'C':
			if (!strcmp(optarg, "mono")) {
				c->clock = EV_CLOCK_MONO;
			} else if (!strcmp(optarg, "tsc")) {
				c->clock = EV_CLOCK_TSC;
			} else {
				fprintf(stderr, "fhook: %s: unknown clock '%s' (mono or tsc)\n", c->cmd,
					optarg);
				return 2;
			}
			break;
		case 'b': {
			char *end;
			unsigned long long v = strtoull(optarg, &end, 0);

			if (*end == 'K' || *end == 'k')
				v <<= 10, end++;
			else if (*end == 'M' || *end == 'm')
				v <<= 20, end++;
			if (*end || v < EV_RING_MIN || v > EV_RING_MAX || (v & (v - 1))) {
				fprintf(stderr, "fhook: %s: --buffer-size %s: a power of two from 64K "
					"to 256M\n", c->cmd, optarg);
				return 2;
			}
			c->ring_size = v;
			break;
		}
		case 'h':
			usage(stdout);
			return -1;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (c->buffered && strcmp(c->cmd, "record")) {
		fprintf(stderr, "fhook: %s: --page-cache is for fhook record\n", c->cmd);
		return 2;
	}
	if (c->flight && strcmp(c->cmd, "record")) {
		fprintf(stderr, "fhook: %s: --flight-recorder is for fhook record\n", c->cmd);
		return 2;
	}
	if (c->trigger_spec && c->trigger_func) {
		fprintf(stderr, "fhook: %s: --trigger: FUNC>DURATION or EVENT if FILTER, one of "
			"them\n", c->cmd);
		return 2;
	}
	if ((c->trigger_sig || c->trigger_func || c->trigger_spec) && !c->flight) {
		fprintf(stderr, "fhook: %s: --trigger needs --flight-recorder\n", c->cmd);
		return 2;
	}
	if (c->flight && c->lossy) {
		fprintf(stderr, "fhook: %s: --flight-recorder keeps the newest events; --lossy "
			"does not go with it\n", c->cmd);
		return 2;
	}
	if (c->flight && !c->trigger_sig)
		c->trigger_sig = SIGUSR2;
	if (c->pid) {
		if (optind < argc) {
			fprintf(stderr, "fhook: %s: -p PID takes no program\n", c->cmd);
			return 2;
		}
		if (cli_ev_attach_name(c))
			return 1;
	} else if (optind >= argc) {
		fprintf(stderr, "fhook: %s: no program after --\n", c->cmd);
		usage(stderr);
		return 2;
	} else {
		c->argv = argv + optind;
	}
	if (!c->nr_specs) {
		c->specs = malloc(sizeof(default_specs));
		memcpy(c->specs, default_specs, sizeof(default_specs));
		c->nr_specs = 2;
		c->default_specs = true;
	}
	return 0;
}

/* A 'p' or 'r' definition: a kprobe event */
static bool is_kprobe_spec(const char *spec)
{
	spec += strspn(spec, " \t");
	return *spec == 'p' || *spec == 'r';
}

/*
 * A kprobe event's symbol was not found: if the program has no function
 * symbol at all, say that it is stripped, and what still works; else,
 * how to reach a program it starts (a harness: sh, make).
 */
static void stripped_hint(struct cli_ev *c)
{
	struct fhook_sym *syms = NULL;
	char *names = NULL;
	size_t nr = 0;

	if (fhook_elf_read_syms(c->libs[0], 0, &syms, &nr, &names))
		goto out;
	if (!nr)
		fprintf(stderr, "fhook: %s: %s is stripped: no function in .symtab or .dynsym; "
			"probe its libraries' functions (MOD:SYM) or an address (p ADDR)\n",
			c->cmd, c->libs[0]);
	if (c->follow && !c->dry_run && !c->pid)
		fprintf(stderr, "fhook: %s: for a program %s starts, name its file: "
			"p NAME:SYM\n", c->cmd, c->argv[0]);
out:
	free(syms);
	free(names);
}

/*
 * A kprobe glob leaves out the functions fhook runs itself (libc's
 * memcpy, malloc, ...: lib/kprobes/nokprobe.c): said once per glob, with
 * how to list them.
 */
static void glob_skips_say(struct cli_ev *c)
{
	int i, j, file, skipped, n;

	for (i = 0; i < c->nr_evs; i++) {
		struct fhook_event *ev = &c->evs[i];

		if (!ev->kprobe || !ev->is_glob)
			continue;
		/* once for "p libc.so.6:*" and "r libc.so.6:*" */
		for (j = 0; j < i; j++)
			if (c->evs[j].kprobe && c->evs[j].is_glob &&
			    !strcmp(c->evs[j].symbol, ev->symbol) &&
			    !strcmp(c->evs[j].module ? c->evs[j].module : "",
				    ev->module ? ev->module : ""))
				break;
		if (j < i)
			continue;
		n = ev_prog_kprobe_glob(c->prog, ev->module, ev->symbol, &file, &skipped);
		cli_ev_say_left_out(c, ev->module, ev->symbol, file, skipped, n);
	}
}

void cli_ev_say_left_out(const struct cli_ev *c, const char *mod, const char *glob, int file,
			 int skipped, int n)
{
	if (n <= 0 || !skipped)
		return;
	fprintf(stderr, "fhook: %s: %s%s%s: %d of %d functions left out (`fhook funcs "
		"--why %s '%s'` lists them and why)\n", c->cmd, mod ? mod : "", mod ? ":" : "",
		glob, skipped, n, c->prog->files[file].path, glob);
}

/*
 * Without -e, a program built without sites is recorded whole all the
 * same: a kprobe on the entry and on the return of every function of its
 * executable (what `uftrace -P .` does when asked), the call tree the
 * sites would give.  The processes it starts keep the usual events on
 * their own sites.  A stripped program has no function to name: the
 * usual way, and its messages.
 */
static int auto_kprobes(struct cli_ev *c)
{
	const char *base = strrchr(c->libs[0], '/');
	int file, skipped, n, nr = 0;
	char **specs;

	if (!c->default_specs || ev_prog_match_glob(c->prog, "*") > 0)
		return 0;
	n = ev_prog_kprobe_glob(c->prog, NULL, "*", &file, &skipped);
	c->stripped = n == 0;
	if (n - skipped <= 0)
		return 0;
	base = base ? base + 1 : c->libs[0];
	specs = calloc(4, sizeof(*specs));
	if (!specs)
		return -1;
	/* the sites of the programs it starts, named as ever (nothing to list) */
	if (c->follow && !c->pid && !c->dry_run) {
		specs[nr++] = default_specs[0];
		specs[nr++] = default_specs[1];
	}
	if (asprintf(&specs[nr++], "p:fhook/kentry %s:*", base) < 0 ||
	    asprintf(&specs[nr++], "r:fhook/kexit %s:*", base) < 0) {
		/* (asprintf leaves its pointer undefined on failure) */
		fprintf(stderr, "fhook: %s: %s\n", c->cmd, strerror(ENOMEM));
		return -1;
	}
	free(c->specs);
	c->specs = specs;
	c->nr_specs = nr;
	if (!c->dry_run)
		fprintf(stderr, "fhook: %s: %s has no patchable sites: %s its %d functions "
			"through kprobes (a library's too: -e 'p *' -e 'r *' -e 'p LIB:*' "
			"-e 'r LIB:*')\n", c->cmd, c->libs[0],
			strcmp(c->cmd, "trace") ? "recording" : "tracing", n - skipped);
	return 0;
}

int cli_ev_resolve(struct cli_ev *c)
{
	struct fhook_event_prog *resolve;
	char **paths, *path = c->argv[0], *found = NULL;
	bool kprobes = false;
	int nr, i, j;

	/* the program's own reasons first, not "no patchable sites" */
	if (cli_check_program(path))
		return 125;
	/* resolve against the program as the loader would load it */
	if (!strchr(path, '/')) {
		found = cli_which(path);
		if (found)
			path = found;
	}
	/*
	 * A script's process is its interpreter's (the shell, python): that is
	 * what has, or has not, sites; the functions are mostly in what it runs.
	 */
	if (!c->pid) {
		char *interp = cli_script_interpreter(path);

		if (interp && access(interp, X_OK)) {
			fprintf(stderr, "fhook: %s: %s: its interpreter %s: %s\n", c->cmd, path,
				interp, strerror(errno));
			free(interp);
			free(found);
			return 127;
		}
		if (interp) {
			free(found);
			path = found = interp;
		}
	}
	if (c->pid ? cli_attach_objects(c->pid, &paths, &nr) : cli_program_objects(path, &paths, &nr)) {
		free(found);
		return 1;
	}
	c->libs = paths;
	c->nr_libs = nr;
	c->prog = fhook_event_prog_open(paths[0], paths + 1, nr - 1);
	if (!c->prog) {
		fprintf(stderr, "fhook: %s: %s: %s\n", c->cmd, paths[0], strerror(errno));
		free(found);
		return 1;
	}
	free(found);
	c->prog->insn_check = cli_insn_boundary;
	if (auto_kprobes(c) || cli_ev_glob_args(c))
		return 1;
	c->evs = calloc(c->nr_specs, sizeof(*c->evs));
	if (!c->evs)
		return 1;
	/*
	 * A harness (make, sh, a test driver) has no traceable function of
	 * its own; the functions are in the programs it starts.  Then the
	 * definitions are checked for syntax only, and each traced process
	 * resolves them against what it loads.
	 */
	resolve = c->prog;
	/*
	 * A running process is not followed, so resolving the definitions
	 * against it is all there is: whether it has sites at all (which
	 * reads every symbol table whole) is asked only when one fails.
	 */
	/* kprobe events need no site: they resolve against the program as it is */
	for (i = 0; i < c->nr_specs; i++)
		if (is_kprobe_spec(c->specs[i]))
			kprobes = true;
	if (!c->pid && (!kprobes || c->default_specs) && ev_prog_match_glob(c->prog, "*") <= 0) {
		c->no_sites = true;
		if (c->follow && !c->dry_run) {
			if (!c->default_specs)
				fprintf(stderr, "fhook: %s: %s has no patchable sites: events are "
					"resolved in the processes it starts\n", c->cmd, c->argv[0]);
			resolve = NULL;
		}
	}
	for (i = 0; i < c->nr_specs; i++) {
		struct fhook_event_error err;
		struct fhook_event ev;
		int r = fhook_event_parse(c->specs[i], resolve, &ev, &err);

		if (r) {
			fhook_event_print_error(stderr, &err);
			if (is_kprobe_spec(c->specs[i])) {
				if (err.pos >= 0 && !strcmp(err.msg, "The symbol is not unique"))
					cli_ev_say_overloads(c, c->specs[i]);
				else
					stripped_hint(c);
				return 1;
			}
			if (c->pid)
				c->no_sites = ev_prog_match_glob(c->prog, "*") <= 0;
			if (c->no_sites)
				fprintf(stderr, "fhook: %s: %s has no patchable sites: rebuild it "
					"with `cc $(fhook cflags) ...` (" FHOOK_SITE_CFLAG ")%s, "
					"or use kprobe events, which need none (-e 'p SYM', "
					"-e 'r SYM $retval')\n",
					c->cmd, c->argv[0], c->follow ? "" :
					", or trace the programs it starts (leave out --no-follow)");
			return 1;
		}
		if (ev.is_remove) {
			/* "-:EVENT" without a group: the event of that name in any group */
			bool any = !strchr(c->specs[i], '/') && !strchr(c->specs[i], '.');

			for (j = 0; j < c->nr_evs; j++)
				if ((any || !strcmp(c->evs[j].group, ev.group)) &&
				    !strcmp(c->evs[j].event, ev.event))
					break;
			if (j == c->nr_evs) {
				fprintf(stderr, "fhook: error: No such event to remove\n"
					"  Command: %s\n", c->specs[i]);
				fhook_event_free(&ev);
				return 1;
			}
			fhook_event_free(&c->evs[j]);
			memmove(&c->evs[j], &c->evs[j + 1], (c->nr_evs - j - 1) * sizeof(*c->evs));
			c->nr_evs--;
			continue;
		}
		for (j = 0; j < c->nr_evs; j++) {
			if (!strcmp(c->evs[j].group, ev.group) && !strcmp(c->evs[j].event, ev.event)) {
				/* the kernel's EVENT_EXIST, logged at the event name */
				fprintf(stderr, "fhook: error: Given group/event name is already "
					"used by another event\n  Command: %s\n", c->specs[i]);
				fhook_event_free(&ev);
				return 1;
			}
		}
		c->evs[c->nr_evs++] = ev;
	}
	/* (without -e, the count of what is recorded was said) */
	if (!c->default_specs)
		glob_skips_say(c);
	/* the duration trigger times a function with a site, as an f event does */
	if (c->trigger_func && resolve) {
		const struct ev_sym *t = ev_prog_find(c->prog, c->trigger_func, true, NULL);

		if (!t || !t->site) {
			fprintf(stderr, "fhook: %s: --trigger %s>...: %s %s\n", c->cmd,
				c->trigger_func, c->argv ? c->argv[0] : "the process",
				t ? "has no patchable site at that function (the trigger times "
				    "it with an fprobe)" : "has no such function");
			return 1;
		}
	}
	if (c->trigger_spec && trigger_compile(c))
		return 1;
	if (c->dry_run) {
		char line[8192];

		for (i = 0; i < c->nr_evs; i++) {
			fhook_event_snprint(line, sizeof(line), &c->evs[i]);
			printf("%s\n", line);
		}
		return -1;
	}
	if (!c->nr_evs) {
		fprintf(stderr, "fhook: %s: no events left to trace\n", c->cmd);
		return 2;
	}
	if (c->nr_evs >= (int)EV_ID_MAX) {
		fprintf(stderr, "fhook: %s: too many events (%d; at most %u)\n", c->cmd, c->nr_evs,
			EV_ID_MAX - 1);
		return 2;
	}
	return 0;
}

/* ---- the run ----------------------------------------------------------- */

static volatile sig_atomic_t cli_stop_sig;
static volatile sig_atomic_t cli_dump_req;	/* a flight recorder's trigger fired */
static volatile int cli_drain_done;

static void on_stop(int sig)
{
	cli_stop_sig = sig;
}

static void on_trigger(int sig)
{
	cli_dump_req = 1;
}

struct drain_arg {
	struct ev_session *s;
	struct cli_ev *c;
	uint32_t dumps;
	uint32_t fired;		/* the duration trigger's firings seen */
	uint32_t trigger_dumps;	/* dumps the duration or event trigger fired */
	bool status;		/* a status line on the terminal */
	long err;
};

/*
 * Move ring bytes to the sink as fast as they come; the producers kick
 * this thread when a ring passes half full, and it looks on its own at
 * least every 20 ms.
 */
static void *drain_thread(void *arg)
{
	struct drain_arg *a = arg;
	struct timespec last = { 0 }, now;

	pthread_setname_np(pthread_self(), "fhook-drain");
	while (!__atomic_load_n(&cli_drain_done, __ATOMIC_ACQUIRE)) {
		long r = ev_session_drain(a->s, 20);
		uint64_t took = 0;
		bool counted = a->c->trigger_count && a->trigger_dumps >= a->c->trigger_count;
		uint32_t fired = (a->c->trigger_func || a->c->trigger_spec) && !counted ?
				 ev_session_trigger_fired(a->s, &took) : a->fired;

		if (r >= 0 && fired != a->fired) {
			/* calls that fired it meanwhile share this dump */
			a->fired = fired;
			r = ev_session_dump(a->s);
			if (r >= 0 && a->c->trigger_func)
				fprintf(stderr, "fhook: %s: flight recorder: a call of %s took %.3f ms "
					"(the trigger: %.3f ms): dump %u, %.1f MB\n", a->c->cmd,
					a->c->trigger_func, took / 1e6, a->c->trigger_ns / 1e6,
					++a->dumps, r / 1e6);
			else if (r >= 0)
				fprintf(stderr, "fhook: %s: flight recorder: %s: dump %u, %.1f MB\n",
					a->c->cmd, a->c->trigger_spec, ++a->dumps, r / 1e6);
			if (r >= 0 && a->c->trigger_count &&
			    ++a->trigger_dumps == a->c->trigger_count) {
				ev_session_trigger_off(a->s);
				fprintf(stderr, "fhook: %s: flight recorder: the trigger fired its %u "
					"dump%s: no more but the end's\n", a->c->cmd,
					a->c->trigger_count, a->c->trigger_count == 1 ? "" : "s");
			}
		}
		if (r >= 0 && cli_dump_req) {
			cli_dump_req = 0;
			r = ev_session_dump(a->s);
			if (r >= 0)
				fprintf(stderr, "fhook: %s: flight recorder: dump %u, %.1f MB\n",
					a->c->cmd, ++a->dumps, r / 1e6);
		}
		if (r < 0 && !a->err) {
			a->err = r;
			/* -p: nothing more can be recorded; detach now, not when --duration ends */
			if (a->c->pid)
				cli_stop_sig = -1;
		}
		if (!a->status)
			continue;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec != last.tv_sec) {
			struct rf_end e;

			ev_session_counts(a->s, &e);
			fprintf(stderr, "\rfhook: %s: %llu events, %llu nmissed, %llu lost\033[K",
				a->c->cmd, (unsigned long long)e.events,
				(unsigned long long)e.nmissed, (unsigned long long)e.lost);
			last = now;
		}
	}
	if (a->status)
		fprintf(stderr, "\r\033[K");
	return NULL;
}

/* Wait for @pid; a stop signal stops the recording and gives it a grace period. */
static int wait_program(pid_t pid, struct ev_session *s, const char *cmd)
{
	int status, waited_ms = 0;
	bool stopped = false;

	for (;;) {
		pid_t r = waitpid(pid, &status, stopped ? WNOHANG : 0);

		if (r == pid)
			return cli_exit_status(status);
		if (r < 0 && errno != EINTR)
			return 127;
		if (cli_stop_sig && !stopped) {
			stopped = true;
			ev_session_stop(s);
			/* the terminal sent SIGINT to the program too; others are passed on */
			if (cli_stop_sig == SIGTERM || cli_stop_sig == SIGHUP)
				kill(pid, cli_stop_sig);
		}
		if (stopped && r == 0) {
			struct timespec ts = { 0, 10 * 1000 * 1000 };

			if (waited_ms >= CLI_STOP_GRACE_MS) {
				fprintf(stderr, "fhook: %s: process %d still runs, untraced\n", cmd,
					pid);
				return 128 + cli_stop_sig;
			}
			nanosleep(&ts, NULL);
			waited_ms += 10;
		}
	}
}

/*
 * The kprobe events at the end: a MOD no process ever loaded is an error
 * naming it, and so is a run in which no kprobe event placed any probe,
 * with why for each.  True: exit non-zero.
 */
static bool kprobe_ends(struct cli_ev *c, struct ev_session *s, const struct rf_end *end)
{
	uint32_t loaded, placed;
	int i, nr = 0, nr_placed = 0;
	bool fprobes = false, bad = false;

	for (i = 0; i < c->nr_evs; i++) {
		struct fhook_event *ev = &c->evs[i];

		if (!ev->kprobe) {
			fprobes = true;
			continue;
		}
		ev_session_kprobe_counts(s, i, &loaded, &placed);
		nr++;
		nr_placed += placed > 0;
		if (ev->module && !loaded && i < EV_MAX_KP_EVENTS) {
			fprintf(stderr, "fhook: %s: %s was never loaded by a traced process: "
				"nothing probed %s:%s\n", c->cmd, ev->module, ev->module, ev->symbol);
			bad = true;
		}
	}
	if (!nr || nr_placed || (fprobes && end->events) || nr > EV_MAX_KP_EVENTS)
		return bad;
	fprintf(stderr, "fhook: %s: no probe could be placed:\n", c->cmd);
	for (i = 0; i < c->nr_evs; i++) {
		struct fhook_event *ev = &c->evs[i];

		if (!ev->kprobe)
			continue;
		ev_session_kprobe_counts(s, i, &loaded, &placed);
		fprintf(stderr, "fhook: %s:   %s%s%s: %s\n", c->cmd, ev->module ? ev->module : "",
			ev->module ? ":" : "", ev->symbol,
			loaded ? "every probe was refused (said above)" :
			ev->module ? "its object was never loaded" :
			"no traced process has it");
	}
	return true;
}

int cli_ev_run(struct cli_ev *c, struct ev_sink *sink, struct rf_end *end, bool *failed)
{
	struct ev_session_opts so = {
		.evs = c->evs, .nr_evs = c->nr_evs, .prog = c->prog,
		.callers = c->callers, .nr_callers = c->nr_callers,
		.follow = c->follow, .lossy = c->lossy, .clock = c->clock,
		.ring_size = c->ring_size, .flight = c->flight,
		.trigger_func = c->trigger_func, .trigger_ns = c->trigger_ns,
		.trigger_event = c->trigger_event, .trigger_filter = c->trigger_filter,
		.nr_trigger_filter = c->nr_trigger_filter,
		/* -p: c->argv names the program alone; the process's own command line is read */
		.argv = c->pid ? NULL : c->argv, .pid = c->pid, .cmd = c->cmd,
	};
	struct sigaction sa = { .sa_handler = on_stop }, old[4], old_trigger;
	static const int sigs[4] = { SIGINT, SIGTERM, SIGHUP, SIGPIPE };
	struct drain_arg da = { 0 };
	struct ev_session *s;
	pthread_t th;
	pid_t pid;
	int ret, status, i;

	*failed = false;
	cli_stop_sig = 0;
	cli_drain_done = 0;
	/*
	 * No SA_RESTART: a stop signal interrupts the wait.  With -p, caught
	 * from before the attach (which holds them while a call of ours runs
	 * in the process): the command then detaches as after a start.  (A
	 * program of our own is not started after a stop, so its stop is
	 * caught from when there is one.)
	 */
	if (c->pid)
		for (i = 0; i < 4; i++)
			sigaction(sigs[i], &sa, &old[i]);
	if (c->pid && cli_ev_attach_begin(c, &so)) {
		*failed = true;
		ret = 1;
		goto restore;
	}
	ret = ev_session_new(&so, sink, &s);
	if (ret && c->pid)
		cli_ev_attach_abort(c);
	if (ret == -EBADF && c->pid) {
		fprintf(stderr, "fhook: %s: process %d offered memory that cannot be sealed against "
			"truncation (not a memfd made with MFD_ALLOW_SEALING); refusing to share it\n",
			c->cmd, c->pid);
		*failed = true;
		ret = 1;
		goto restore;
	}
	if (ret) {
		fprintf(stderr, "fhook: %s: cannot start the recording (writing %s): %s\n", c->cmd,
			c->out ? c->out : "the trace", strerror(-ret));
		*failed = true;
		ret = 1;
		goto restore;
	}
	c->started = true;
	da.s = s;
	da.c = c;
	da.status = c->out && strcmp(c->out, "-") && isatty(STDERR_FILENO);
	if (!c->pid)
		for (i = 0; i < 4; i++)
			sigaction(sigs[i], &sa, &old[i]);
	cli_dump_req = 0;
	if (c->flight) {
		struct sigaction st = { .sa_handler = on_trigger, .sa_flags = SA_RESTART };

		sigaction(c->trigger_sig, &st, &old_trigger);
		fprintf(stderr, "fhook: %s: flight recorder: the last %llu KiB of each thread's "
			"events are kept; `kill -%s %d` writes them to %s (and the end does)\n",
			c->cmd, (unsigned long long)(c->ring_size >> 10),
			sigabbrev_np(c->trigger_sig) ? sigabbrev_np(c->trigger_sig) : "USR2",
			(int)getpid(), c->out ? c->out : "the recording");
	}
	cli_helper_thread(&th, drain_thread, &da);
	pid = c->pid ? 0 : cli_start_preloaded(c->argv);
	if (c->pid)
		status = cli_ev_attach_wait(c, &cli_stop_sig);
	else if (pid < 0)
		status = pid == -ENOEXEC ? 125 : 127;
	else
		status = wait_program(pid, s, c->cmd);
	__atomic_store_n(&cli_drain_done, 1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	if (c->trigger_func || c->trigger_spec) {
		uint64_t took;

		/* fired as the program ended: the final dump holds that call */
		if (ev_session_trigger_fired(s, &took) == da.fired)
			;
		else if (c->trigger_func)
			fprintf(stderr, "fhook: %s: flight recorder: a call of %s took %.3f ms "
				"(the trigger: %.3f ms): in the final dump\n", c->cmd,
				c->trigger_func, took / 1e6, c->trigger_ns / 1e6);
		else
			fprintf(stderr, "fhook: %s: flight recorder: %s: in the final dump\n",
				c->cmd, c->trigger_spec);
	}
	ret = ev_session_finish(s, cli_stop_sig ? RF_END_STOPPED : RF_END_OK, 0, end);
	for (i = 0; i < 4; i++)
		sigaction(sigs[i], &old[i], NULL);
	if (c->flight) {
		uint32_t dumps;
		uint64_t bytes;

		sigaction(c->trigger_sig, &old_trigger, NULL);
		ev_session_dumps(s, &dumps, &bytes);
		if (!ret && !da.err)
			fprintf(stderr, "fhook: %s: flight recorder: %u dump%s (the last at the "
				"end), %.1f MB of events written\n", c->cmd, dumps,
				dumps == 1 ? "" : "s", bytes / 1e6);
	}
	if (ret || da.err) {
		int err = ret ? -ret : (int)-da.err;

		fprintf(stderr, "fhook: %s: writing %s: %s: the recording stopped early; "
			"%llu events recorded, %llu lost\n", c->cmd,
			c->out && strcmp(c->out, "-") ? c->out : "the output", strerror(err),
			(unsigned long long)end->events, (unsigned long long)end->lost);
		*failed = true;
	} else if (cli_stop_sig) {
		fprintf(stderr, "fhook: %s: stopped by signal %d (%s)\n", c->cmd, (int)cli_stop_sig,
			strsignal(cli_stop_sig));
	}
	c->untraced = ev_session_untraced(s, c->cmd);
	if (kprobe_ends(c, s, end) && !status && !*failed)
		status = 1;
	ev_session_free(s);
	/*
	 * Nothing could be traced, in the program or in what it started: the
	 * run failed at what it was for, whatever the program's own status
	 * (a process that ran untraced says why itself, below).
	 */
	if (!end->events && c->no_sites && !*failed && !c->untraced && !status)
		status = 1;
	if (!end->events && c->no_sites && !*failed && !c->untraced && c->stripped)
		fprintf(stderr, "fhook: %s: no events: %s has no patchable sites and is stripped "
			"(no function symbol for a kprobe to name)%s; probe its libraries' "
			"functions (-e 'p LIB:*' -e 'r LIB:*'), or rebuild it with "
			"`cc $(fhook cflags) ...`\n", c->cmd, c->argv[0],
			c->follow ? ", nor had the programs it started sites" : "");
	else if (!end->events && c->no_sites && !*failed && !c->untraced)
		fprintf(stderr, "fhook: %s: no events: %s has no patchable sites%s; rebuild "
			"what you want traced with `cc $(fhook cflags) ...` "
			"(" FHOOK_SITE_CFLAG "), or use kprobe events, which need none "
			"(-e 'p SYM', -e 'r SYM $retval')\n", c->cmd, c->argv[0],
			c->follow ? ", nor had the programs it started" : "");
	return status;
restore:
	if (c->pid)
		for (i = 0; i < 4; i++)
			sigaction(sigs[i], &old[i], NULL);
	return ret;
}

void cli_ev_print_untraced(struct cli_ev *c)
{
	if (c->untraced)
		fputs(c->untraced, stderr);
}

void cli_ev_free(struct cli_ev *c)
{
	int i;

	free(c->untraced);
	c->untraced = NULL;

	for (i = 0; i < c->nr_evs; i++)
		fhook_event_free(&c->evs[i]);
	free(c->evs);
	fhook_event_prog_close(c->prog);
	for (i = 0; i < c->nr_libs; i++)
		free(c->libs[i]);
	free(c->libs);
	free(c->specs);
	free(c->trigger_func);
	for (i = 0; i < c->nr_trigger_filter; i++)
		free(c->trigger_filter[i].s);
	for (i = 0; i < c->nr_spec_mem; i++)
		free(c->spec_mem[i]);
	free(c->spec_mem);
	free(c->callers);
}
