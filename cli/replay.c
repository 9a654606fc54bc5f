// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * fhook replay [--format text|json|chrome|graph|perfetto] [-o FILE] [PATH]
 *
 * Format a recording of `fhook record`: every thread's events merged in
 * time order, as the kernel's trace text, JSON lines, Chrome trace-event
 * JSON, a call graph indented by depth, or Perfetto's protobuf trace.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "view.h"
#include "../lib/events/decode.h"
#include "../lib/events/format.h"

static void replay_usage(FILE *f)
{
	fprintf(f,
		"usage: fhook replay [--format text|json|chrome|graph|perfetto] [-o FILE]\n"
		"                    [FILTERS] [PATH]\n"
		"\n"
		"Print the events of a recording made by fhook record (default: fhook.rec),\n"
		"all threads and processes merged in time order.\n"
		"\n"
		"  --format FMT         text (the kernel's trace format, the default), json (one\n"
		"                       object per line, times in ns), chrome (trace-event JSON),\n"
		"                       graph (calls as C: \"add(5, 3) = 8;\", indented by depth)\n"
		"                       or perfetto (Perfetto's protobuf trace, for\n"
		"                       ui.perfetto.dev and trace_processor)\n"
		"  -o, --output FILE    write to FILE (default: standard output)\n"
		"  -h, --help           this text\n"
		"\n");
	cli_view_usage(f);
	fprintf(f,
		"\n"
		"Exit status: 0; 1 when the recording cannot be read or the output written;\n"
		"2 for bad usage.\n");
}

/* Open a recording and say what a reader should know about it. */
struct dec *cli_open_recording(const char *cmd, const char *path)
{
	return cli_open_recording_with(cmd, path, NULL, NULL);
}

struct dec *cli_open_recording_with(const char *cmd, const char *path, dec_block_fn fn,
				    void *ctx)
{
	struct dec *d = dec_new();
	const struct rf_end *end;
	bool truncated;
	int ret;

	if (!d) {
		fprintf(stderr, "fhook: %s: out of memory\n", cmd);
		return NULL;
	}
	dec_set_block_hook(d, fn, ctx);
	ret = dec_read_file(d, path, &truncated);
	if (ret) {
		fprintf(stderr, "fhook: %s: %s: %s\n", cmd, path,
			ret == -EPROTO ? "not a recording of fhook record" :
			ret == -EPROTONOSUPPORT ? "a recording of another version of fhook" :
			strerror(-ret));
		dec_free(d);
		return NULL;
	}
	end = dec_end(d);
	if (truncated || !end)
		fprintf(stderr, "fhook: %s: %s ends early (the recorder did not finish it): "
			"read up to its last complete block\n", cmd, path);
	else if (end->status == RF_END_WRITE_ERROR)
		fprintf(stderr, "fhook: %s: %s: the recorder stopped early (%s); %llu events "
			"lost\n", cmd, path, strerror(end->err), (unsigned long long)end->lost);
	else if (end->lost)
		fprintf(stderr, "fhook: %s: %s: %llu events were lost while recording\n", cmd,
			path, (unsigned long long)end->lost);
	return d;
}

void cli_recording_warnings(const char *cmd, struct dec *d)
{
	if (dec_bad_records(d))
		fprintf(stderr, "fhook: %s: %llu records did not parse and were skipped\n", cmd,
			(unsigned long long)dec_bad_records(d));
}

int cmd_replay(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		CLI_VIEW_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	const char *format = "text", *out = NULL, *path = "fhook.rec";
	struct fmt_out *f = NULL;
	struct dec *d = NULL, *first = NULL;
	struct cli_view view;
	int c, fmt, fd = STDOUT_FILENO, ret = 2;

	cli_view_init(&view);
	optind = 1;
	while ((c = getopt_long(argc, argv, "ho:" CLI_VIEW_SHORTOPTS, opts, NULL)) != -1) {
		int v = cli_view_opt(&view, "replay", c, optarg);

		if (v < 0)
			goto out;
		if (v)
			continue;
		switch (c) {
		case 'f':
			format = optarg;
			break;
		case 'o':
			out = optarg;
			break;
		case 'h':
			replay_usage(stdout);
			ret = 0;
			goto out;
		default:
			replay_usage(stderr);
			goto out;
		}
	}
	if (optind < argc)
		path = argv[optind++];
	if (optind < argc) {
		replay_usage(stderr);
		goto out;
	}
	fmt = fmt_by_name(format);
	if (fmt < 0) {
		fprintf(stderr, "fhook: replay: unknown format '%s' (text, json, chrome, graph, "
			"perfetto)\n", format);
		goto out;
	}
	ret = 1;
	d = cli_open_recording("replay", path);
	if (!d)
		goto out;
	cli_view_apply(&view, d);
	if (out && (fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) < 0) {
		fprintf(stderr, "fhook: replay: %s: %s\n", out, strerror(errno));
		goto out;
	}
	f = fmt_new(fmt, fd, d, &view.flt);
	if (!f) {
		fprintf(stderr, "fhook: replay: out of memory\n");
		goto out;
	}
	if (calls_need_prepass(fmt_calls(f))) {
		/* -t: a call is written at its entry, so every call's length is learnt first */
		first = d;
		d = dec_new();
		if (!d || dec_read_file(d, path, &(bool){ false }) ||
		    dec_flush_ends(first, calls_prepass, calls_thread_end, fmt_calls(f))) {
			fprintf(stderr, "fhook: replay: %s: cannot read it twice\n", path);
			goto out;
		}
		cli_view_apply(&view, d);
		fmt_rewind(f, d);
	}
	ret = dec_flush_ends(d, fmt_event, fmt_thread_end, f);
	c = fmt_finish(f);
	f = NULL;
	if (!ret)
		ret = c;
	if (ret)
		fprintf(stderr, "fhook: replay: writing %s: %s\n", out ? out : "the output",
			strerror(-ret));
	cli_recording_warnings("replay", d);
	if (out && close(fd) && !ret) {
		fprintf(stderr, "fhook: replay: %s: %s\n", out, strerror(errno));
		ret = -errno;
	}
	fd = -1;
	ret = ret ? 1 : 0;
out:
	if (f)
		fmt_finish(f);
	if (out && fd >= 0 && fd != STDOUT_FILENO)
		close(fd);
	dec_free(first);
	dec_free(d);
	cli_view_fini(&view);
	return ret;
}
