// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * What a recording is (lib/events/recinfo.h): collected and encoded by the
 * recorder, parsed by readers.  The command only: a traced process never
 * links it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <fhook/fhook.h>

#include "recfile.h"
#include "recinfo.h"

_Static_assert(sizeof(struct rf_info) == 56, "RF_INFO's header is part of the file format");

/* Copy @len bytes of @s into @dst of @size, cut to fit and NUL-terminated. */
static void take(char *dst, size_t size, const void *s, size_t len)
{
	if (len >= size)
		len = size - 1;
	memcpy(dst, s, len);
	dst[len] = 0;
}

/*
 * Keep the whole arguments of the NUL-terminated @len bytes at @s that fit
 * in out->argv; false when some were left out.
 */
static bool take_argv(struct rec_info *out, const char *s, size_t len)
{
	size_t off = 0;

	out->argc = 0;
	out->argv_len = 0;
	while (off < len) {
		size_t n = strnlen(s + off, len - off) + 1;

		if (off + n > len || out->argv_len + n > sizeof(out->argv))
			return false;
		memcpy(out->argv + out->argv_len, s + off, n);
		out->argv_len += n;
		out->argc++;
		off += n;
	}
	return true;
}

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* The first "model name" of /proc/cpuinfo (x86), or nothing. */
static void cpu_model(char *buf, size_t size)
{
	char line[512];
	FILE *f = fopen("/proc/cpuinfo", "re");

	buf[0] = 0;
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');

		if (strncmp(line, "model name", 10) || !colon)
			continue;
		colon += strspn(colon + 1, " \t") + 1;
		colon[strcspn(colon, "\n")] = 0;
		take(buf, size, colon, strlen(colon));
		break;
	}
	fclose(f);
}

/* Process @pid's command line, its arguments cut to what out->argv holds. */
static void pid_argv(struct rec_info *out, pid_t pid)
{
	const size_t max = sizeof(out->argv);
	char path[64], *buf;
	size_t len = 0;
	ssize_t n;
	bool cut;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	/* one byte more than fits: then it is known to be cut */
	buf = malloc(max + 1);
	if (!buf)
		goto out;
	while (len < max + 1 && (n = read(fd, buf + len, max + 1 - len)) > 0)
		len += n;
	cut = len > max;
	if (cut) {
		len = max;
	} else if (len && buf[len - 1]) {
		/* a process that rewrote its arguments may leave the last without a NUL */
		if (len < max)
			buf[len++] = 0;
		else
			cut = true;
	}
	if (cut)
		while (len && buf[len - 1])
			len--;	/* the argument that does not fit whole */
	take_argv(out, buf, len);
	out->argv_cut = cut;
out:
	free(buf);
	close(fd);
}

void rec_info_collect(struct rec_info *out, char *const *argv, pid_t pid)
{
	struct utsname u;
	uint64_t r0, r1;
	int i;

	memset(out, 0, sizeof(*out));
	/* the realtime reading nearest the monotonic one: their middle */
	r0 = clock_ns(CLOCK_REALTIME);
	out->mono_ns = clock_ns(CLOCK_MONOTONIC);
	r1 = clock_ns(CLOCK_REALTIME);
	out->real_ns = r0 + (r1 - r0) / 2;
	out->pid = argv ? 0 : (uint32_t)pid;
	take(out->version, sizeof(out->version), FHOOK_VERSION, strlen(FHOOK_VERSION));
	if (gethostname(out->host, sizeof(out->host)))
		out->host[0] = 0;
	out->host[sizeof(out->host) - 1] = 0;
	if (!uname(&u)) {
		take(out->release, sizeof(out->release), u.release, strlen(u.release));
		take(out->machine, sizeof(out->machine), u.machine, strlen(u.machine));
	}
	cpu_model(out->cpu, sizeof(out->cpu));
	if (!argv) {
		if (pid > 0)
			pid_argv(out, pid);
		return;
	}
	for (i = 0; argv[i]; i++) {
		size_t n = strlen(argv[i]) + 1;

		if (out->argv_len + n > sizeof(out->argv)) {
			out->argv_cut = true;
			break;
		}
		memcpy(out->argv + out->argv_len, argv[i], n);
		out->argv_len += n;
		out->argc++;
	}
}

int rec_info_encode(const struct rec_info *in, void **buf, uint32_t *len)
{
	const char *strs[5] = { in->version, in->host, in->release, in->machine, in->cpu };
	uint32_t lens[5];
	struct rf_info h = {
		.hdr_len = sizeof(h), .pid = in->pid, .mono_ns = in->mono_ns,
		.real_ns = in->real_ns, .flags = in->argv_cut ? RF_INFO_ARGV_CUT : 0,
		.argv_len = in->argv_len,
	};
	uint32_t total = sizeof(h);
	char *p;
	int i;

	for (i = 0; i < 5; i++)
		total += lens[i] = strlen(strs[i]);
	h.version_len = lens[0];
	h.host_len = lens[1];
	h.release_len = lens[2];
	h.machine_len = lens[3];
	h.cpu_len = lens[4];
	total += in->argv_len;
	p = malloc(total);
	if (!p)
		return -ENOMEM;
	*buf = p;
	*len = total;
	memcpy(p, &h, sizeof(h));
	p += sizeof(h);
	for (i = 0; i < 5; i++) {
		memcpy(p, strs[i], lens[i]);
		p += lens[i];
	}
	memcpy(p, in->argv, in->argv_len);
	return 0;
}

int dec_info_parse(struct rec_info *out, const void *p, uint32_t len)
{
	const unsigned char *b = p, *s;
	struct rf_info h;
	struct rec_info *in;
	uint64_t need;

	if (len < sizeof(h))
		return -EINVAL;
	memcpy(&h, b, sizeof(h));
	/* every length is the file's: summed in 64 bits, checked against the block */
	need = (uint64_t)h.version_len + h.host_len + h.release_len + h.machine_len +
	       h.cpu_len + h.argv_len;
	if (h.hdr_len < sizeof(h) || h.hdr_len > len || need > len - h.hdr_len)
		return -EINVAL;
	s = b + h.hdr_len;
	if (h.argv_len && s[need - 1])
		return -EINVAL;	/* the last argument does not end */
	/* parsed aside: a malformed block leaves what was read before */
	in = calloc(1, sizeof(*in));
	if (!in)
		return -ENOMEM;
	in->pid = h.pid;
	in->mono_ns = h.mono_ns;
	in->real_ns = h.real_ns;
	take(in->version, sizeof(in->version), s, h.version_len);
	s += h.version_len;
	take(in->host, sizeof(in->host), s, h.host_len);
	s += h.host_len;
	take(in->release, sizeof(in->release), s, h.release_len);
	s += h.release_len;
	take(in->machine, sizeof(in->machine), s, h.machine_len);
	s += h.machine_len;
	take(in->cpu, sizeof(in->cpu), s, h.cpu_len);
	s += h.cpu_len;
	in->argv_cut = !take_argv(in, (const char *)s, h.argv_len) ||
		       (h.flags & RF_INFO_ARGV_CUT);
	in->valid = true;
	*out = *in;
	free(in);
	return 0;
}
