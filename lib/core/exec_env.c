// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Children started with an environment of their own stay traced.
 *
 * `fhook trace` and `fhook patch` run a program with libfhook in
 * LD_PRELOAD and FHOOK_* variables that tell the preload what to do.
 * execv, execvp, execl, execlp, system and popen pass `environ` on, and
 * with it those variables.  A program that passes an explicit environment
 * instead (execve, execvpe, execle, fexecve, execveat, posix_spawn,
 * posix_spawnp: a shell's exported variables, `env -i`-like launchers, a
 * sandbox with an empty environment) would start its child untraced, and
 * nothing would say so.  These interposers give the environment passed on
 * back what fhook needs:
 *
 *  - libfhook's LD_PRELOAD entry, put first, if the explicit LD_PRELOAD
 *    (or its absence) lacks it;
 *  - each FHOOK_* variable this process started with, if the explicit
 *    environment lacks it.  One that the explicit environment sets is left
 *    as it is: a program that sets fhook's variables for its child means
 *    it (a test harness running `fhook` itself, say).
 *
 * Only what is still in this process's own environment at the time of the
 * call is given back: the preload removes what must not reach children
 * (FHOOK_EV_SHM under `fhook trace --no-follow`, the FHOOK_LP_* variables
 * that make `fhook patch` patch only the program it started), and a program
 * that removed LD_PRELOAD or a variable from its own environment has
 * decided for its children too.  The values are the ones captured at
 * start-up, before the program could change or overwrite them (some
 * programs reuse the memory of their initial environment, for a process
 * title).
 *
 * Nothing is given back across a privilege boundary: in a set-id process
 * (AT_SECURE) the environment is passed on untouched.
 *
 * The new environment is built on the stack (or, if it is very large,
 * with mmap): execve may be called in the child of vfork(), where only
 * async-signal-safe code may run and the heap is the parent's.  A mapping
 * made there and not given back because the exec succeeded stays in the
 * parent; that takes an environment over 256 KiB of pointers.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core.h"

extern char **environ;

#define EXEC_ENV_MAX_VARS	64
#define EXEC_ENV_STACK_MAX	(256 * 1024)

static const char *fh_preload;		/* libfhook's entry in LD_PRELOAD, or NULL */
static const char *fh_vars[EXEC_ENV_MAX_VARS];	/* "FHOOK_X=value", as started */
static int fh_nr;
static bool fh_off;			/* set-id, or nothing to give back */

static int (*real_execve)(const char *, char *const[], char *const[]) __fhook_startup_data;
static int (*real_execvpe)(const char *, char *const[], char *const[]) __fhook_startup_data;
static int (*real_fexecve)(int, char *const[], char *const[]) __fhook_startup_data;
static int (*real_execveat)(int, const char *, char *const[], char *const[], int) __fhook_startup_data;
static int (*real_posix_spawn)(pid_t *, const char *, const posix_spawn_file_actions_t *,
			       const posix_spawnattr_t *, char *const[], char *const[]) __fhook_startup_data;
static int (*real_posix_spawnp)(pid_t *, const char *, const posix_spawn_file_actions_t *,
				const posix_spawnattr_t *, char *const[], char *const[]) __fhook_startup_data;

static const char *__fhook_startup base_name(const char *s, size_t len, size_t *blen)
{
	const char *b = s;
	size_t i;

	for (i = 0; i < len; i++)
		if (s[i] == '/')
			b = s + i + 1;
	*blen = len - (b - s);
	return b;
}

/*
 * The length of the LD_PRELOAD entry at @s (up to a ':', a space or the
 * end).  Not strcspn(): at start-up its code and table would be two more
 * libc pages to fault in.
 */
static size_t __fhook_startup entry_len(const char *s)
{
	size_t n = 0;

	while (s[n] && s[n] != ':' && s[n] != ' ')
		n++;
	return n;
}

/*
 * memcmp(), for the same reason, and because it is the one libc call of
 * the exec path that a shell's start-up never made: every child it forks
 * would bind it (lazy binding) before the exec, eight more pages.
 */
static bool __fhook_startup same_bytes(const char *a, const char *b, size_t n)
{
	while (n && *a == *b) {
		a++;
		b++;
		n--;
	}
	return !n;
}

/* Is the LD_PRELOAD list @list (up to its end) naming libfhook? */
static bool __fhook_startup names_libfhook(const char *list)
{
	size_t plen, pblen;
	const char *pb;

	if (!fh_preload || !list)
		return false;
	plen = strlen(fh_preload);
	pb = base_name(fh_preload, plen, &pblen);
	while (*list) {
		size_t n = entry_len(list), blen;
		const char *b = base_name(list, n, &blen);

		if ((n == plen && same_bytes(list, fh_preload, n)) ||
		    (blen == pblen && same_bytes(b, pb, blen)))
			return true;
		list += n;
		if (*list)
			list++;
	}
	return false;
}

/* The value of @name (@len bytes, no '=') in @env, or NULL; no locks, no libc state. */
static const char *__fhook_startup env_value(char *const *env, const char *name, size_t len)
{
	for (; env && *env; env++)
		if (!strncmp(*env, name, len) && (*env)[len] == '=')
			return *env + len + 1;
	return NULL;
}

/*
 * What to give back to @envp: the captured variables to add (in @add,
 * @nr_add of them), and whether LD_PRELOAD needs libfhook put first
 * (@old_preload: the explicit value, NULL if it has none).
 */
struct env_plan {
	const char *add[EXEC_ENV_MAX_VARS];
	int nr_add;
	bool fix_preload;
	const char *old_preload;	/* NULL: envp has no LD_PRELOAD */
	size_t nr_env;			/* entries of envp */
	size_t bytes;			/* pointers and the new LD_PRELOAD string */
};

static bool __fhook_startup env_plan(char *const *envp, struct env_plan *p)
{
	int i;

	p->nr_add = 0;
	p->fix_preload = false;
	if (fh_off)
		return false;
	for (i = 0; i < fh_nr; i++) {
		size_t len = strchr(fh_vars[i], '=') - fh_vars[i];

		if (env_value(environ, fh_vars[i], len) && !env_value(envp, fh_vars[i], len))
			p->add[p->nr_add++] = fh_vars[i];
	}
	p->old_preload = env_value(envp, "LD_PRELOAD", 10);
	if (fh_preload && names_libfhook(env_value(environ, "LD_PRELOAD", 10)) &&
	    !names_libfhook(p->old_preload))
		p->fix_preload = true;
	if (!p->nr_add && !p->fix_preload)
		return false;
	for (p->nr_env = 0; envp && envp[p->nr_env]; p->nr_env++)
		;
	/* the entries, the new LD_PRELOAD (it may be one more), the NULL */
	p->bytes = (p->nr_env + p->nr_add + 2) * sizeof(char *);
	if (p->fix_preload)
		p->bytes += sizeof("LD_PRELOAD=") + strlen(fh_preload) + 1 +
			    (p->old_preload ? strlen(p->old_preload) : 0);
	return true;
}

/* Lay the new environment out in @mem (p->bytes long). */
static char **__fhook_startup env_fill(const struct env_plan *p, char *const *envp, void *mem)
{
	char **out = mem, *str = (char *)(out + p->nr_env + p->nr_add + 2);
	size_t i, n = 0;
	int j;

	for (i = 0; i < p->nr_env; i++) {
		if (p->fix_preload && !strncmp(envp[i], "LD_PRELOAD=", 11))
			continue;	/* replaced below */
		out[n++] = envp[i];
	}
	if (p->fix_preload) {
		char *s = str;

		memcpy(s, "LD_PRELOAD=", 11);
		s += 11;
		memcpy(s, fh_preload, strlen(fh_preload));
		s += strlen(fh_preload);
		if (p->old_preload && *p->old_preload) {
			*s++ = ':';
			memcpy(s, p->old_preload, strlen(p->old_preload));
			s += strlen(p->old_preload);
		}
		*s = 0;
		out[n++] = str;
	}
	for (j = 0; j < p->nr_add; j++)
		out[n++] = (char *)p->add[j];
	out[n] = NULL;
	return out;
}

/*
 * Run @fn with @envp, or with it plus what fhook needs.  The new array
 * lives in this frame while @fn runs (an exec, or a spawn that has read it
 * when it returns).  errno is @fn's.
 */
static int __fhook_startup with_env(char *const *envp, int (*fn)(void *ctx, char *const *env),
				    void *ctx)
{
	struct env_plan plan;
	void *mem;
	int ret, err;

	if (!env_plan(envp, &plan))
		return fn(ctx, envp);
	if (plan.bytes <= EXEC_ENV_STACK_MAX) {
		/* aligned for the pointers at its start */
		void *stack[(plan.bytes + sizeof(void *) - 1) / sizeof(void *)];

		return fn(ctx, env_fill(&plan, envp, stack));
	}
	mem = mmap(NULL, plan.bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		return fn(ctx, envp);
	ret = fn(ctx, env_fill(&plan, envp, mem));
	err = errno;
	munmap(mem, plan.bytes);
	errno = err;
	return ret;
}

static int __fhook_startup own_path_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	unsigned long self = (unsigned long)own_path_cb;
	int i;

	(void)size;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_LOAD && self - (info->dlpi_addr + ph->p_vaddr) < ph->p_memsz) {
			*(const char **)data = info->dlpi_name;
			return 1;
		}
	}
	return 0;
}

/*
 * The file libfhook was loaded from, as the loader names it.  Not
 * dladdr(): its code is a libc page that nothing else at start-up touches.
 */
static const char *__fhook_startup own_path(void)
{
	const char *path = NULL;

	dl_iterate_phdr(own_path_cb, &path);
	return path && *path ? path : NULL;
}

/* The functions resolved before anything can run in a vfork child. */
static void *__fhook_startup resolve(void **slot, const char *name)
{
	void *f = __atomic_load_n(slot, __ATOMIC_RELAXED);

	if (!f) {
		f = fhook_libc_sym(name);
		__atomic_store_n(slot, f, __ATOMIC_RELAXED);
	}
	return f;
}

#define REAL(fn) ((__typeof__(real_##fn))resolve((void **)&real_##fn, #fn))

/* Capture what this process was started with, before the program runs. */
__attribute__((constructor(101))) static void exec_env_init(void)
{
	fhook_internal_guard();
	const char *pre = secure_getenv("LD_PRELOAD"), *self;
	char **e;

	REAL(execve);
	REAL(execvpe);
	REAL(fexecve);
	REAL(execveat);
	REAL(posix_spawn);
	REAL(posix_spawnp);
	if (getauxval(AT_SECURE)) {
		/*
		 * The user who started us set these, not the program's owner:
		 * the loader drops its own unsafe variables here, we drop
		 * ours, so that no child the program starts after changing
		 * its ids (no longer AT_SECURE) reads them either.
		 */
		for (e = environ; e && *e;) {
			char name[64];
			size_t n = strcspn(*e, "=");

			if (!strncmp(*e, "FHOOK_", 6) && n < sizeof(name)) {
				memcpy(name, *e, n);
				name[n] = 0;
				unsetenv(name);	/* moves the rest down: look at *e again */
			} else {
				e++;
			}
		}
		fh_off = true;
		return;
	}
	for (e = environ; e && *e && fh_nr < EXEC_ENV_MAX_VARS; e++)
		if (!strncmp(*e, "FHOOK_", 6) && strchr(*e, '='))
			fh_vars[fh_nr++] = strdup(*e);
	while (fh_nr && !fh_vars[fh_nr - 1])
		fh_nr--;	/* out of memory: what was captured */
	/* libfhook's own entry: the one that names this object */
	if (pre && (self = own_path())) {
		size_t flen, fblen;
		const char *fb = base_name(self, strlen(self), &fblen);

		flen = strlen(self);
		while (*pre) {
			size_t n = entry_len(pre), blen;
			const char *b = base_name(pre, n, &blen);

			if (n && ((n == flen && same_bytes(pre, self, n)) ||
				  (blen == fblen && same_bytes(b, fb, blen)))) {
				fh_preload = strndup(pre, n);
				break;
			}
			pre += n;
			if (*pre)
				pre++;
		}
	}
	fh_off = !fh_nr && !fh_preload;
}

/* ---- the interposers ---- */

static void (*exec_hook)(const char *path, bool search);

void __fhook_startup fhook_exec_notify(void (*fn)(const char *path, bool search))
{
	__atomic_store_n(&exec_hook, fn, __ATOMIC_RELEASE);
}

/* Tell the layer above what is about to run (it says when that runs untraced). */
static void __fhook_startup notify(const char *path, bool search)
{
	void (*fn)(const char *, bool) = __atomic_load_n(&exec_hook, __ATOMIC_ACQUIRE);

	if (fn && path && *path)
		fn(path, search);
}

/* A C library without the call (execveat before glibc 2.34). */
static int __fhook_startup missing(void)
{
	errno = ENOSYS;
	return -1;
}

struct exec_args {
	int fd, flags;
	const char *path;
	char *const *argv;
	pid_t *pid;
	const posix_spawn_file_actions_t *fa;
	const posix_spawnattr_t *attr;
};

static int __fhook_startup do_execve(void *ctx, char *const *env)
{
	struct exec_args *a = ctx;

	if (!REAL(execve))
		return missing();
	return REAL(execve)(a->path, a->argv, env);
}

int __fhook_startup execve(const char *path, char *const argv[], char *const envp[])
{
	struct exec_args a = { .path = path, .argv = argv };

	notify(path, false);
	return with_env(envp, do_execve, &a);
}

static int __fhook_startup do_execvpe(void *ctx, char *const *env)
{
	struct exec_args *a = ctx;

	if (!REAL(execvpe))
		return missing();
	return REAL(execvpe)(a->path, a->argv, env);
}

int __fhook_startup execvpe(const char *file, char *const argv[], char *const envp[])
{
	struct exec_args a = { .path = file, .argv = argv };

	notify(file, true);
	return with_env(envp, do_execvpe, &a);
}

static int __fhook_startup do_fexecve(void *ctx, char *const *env)
{
	struct exec_args *a = ctx;

	if (!REAL(fexecve))
		return missing();
	return REAL(fexecve)(a->fd, a->argv, env);
}

int __fhook_startup fexecve(int fd, char *const argv[], char *const envp[])
{
	struct exec_args a = { .fd = fd, .argv = argv };

	return with_env(envp, do_fexecve, &a);
}

static int __fhook_startup do_execveat(void *ctx, char *const *env)
{
	struct exec_args *a = ctx;

	if (!REAL(execveat))
		return missing();
	return REAL(execveat)(a->fd, a->path, a->argv, env, a->flags);
}

int __fhook_startup execveat(int dirfd, const char *path, char *const argv[],
			     char *const envp[], int flags)
{
	struct exec_args a = { .fd = dirfd, .path = path, .argv = argv, .flags = flags };

	if (dirfd == AT_FDCWD || path[0] == '/')
		notify(path, false);
	return with_env(envp, do_execveat, &a);
}

/*
 * The list forms (execl, execle, execlp): libc's would call its internal
 * execve, which no interposer sees; the arguments are collected here, on
 * the stack (this may be a vfork child), and @call made with them and the
 * environment that follows them (@with_env) or environ.
 */
static int __fhook_startup exec_list(int (*call)(const char *, char *const[], char *const[]),
				     const char *path,
		     const char *arg, va_list ap, bool with_env)
{
	size_t argc = 1, i;
	va_list count;

	va_copy(count, ap);
	while (va_arg(count, const char *))
		argc++;
	va_end(count);
	{
		const char *argv[argc + 1];

		argv[0] = arg;
		for (i = 1; i <= argc; i++)
			argv[i] = va_arg(ap, const char *);	/* argv[argc]: the NULL */
		return call(path, (char *const *)argv,
			    with_env ? va_arg(ap, char *const *) : environ);
	}
}

int __fhook_startup execle(const char *path, const char *arg, ...)
{
	va_list ap;
	int ret;

	va_start(ap, arg);
	ret = exec_list(execve, path, arg, ap, true);
	va_end(ap);
	return ret;
}

/*
 * execv, execvp, execl and execlp pass environ on, so nothing is given
 * back to their environment, but glibc's call its internal execve, which
 * none of the interposers above sees: the layer above would not hear what
 * they start (a set-id or static program would run untraced, unnamed).
 * They are the calls above with environ, as glibc defines them.
 */
int __fhook_startup execv(const char *path, char *const argv[])
{
	return execve(path, argv, environ);
}

int __fhook_startup execvp(const char *file, char *const argv[])
{
	return execvpe(file, argv, environ);
}

int __fhook_startup execl(const char *path, const char *arg, ...)
{
	va_list ap;
	int ret;

	va_start(ap, arg);
	ret = exec_list(execve, path, arg, ap, false);
	va_end(ap);
	return ret;
}

int __fhook_startup execlp(const char *file, const char *arg, ...)
{
	va_list ap;
	int ret;

	va_start(ap, arg);
	ret = exec_list(execvpe, file, arg, ap, false);
	va_end(ap);
	return ret;
}

static int __fhook_startup do_posix_spawn(void *ctx, char *const *env)
{
	struct exec_args *a = ctx;

	if (!REAL(posix_spawn))
		return ENOSYS;
	return REAL(posix_spawn)(a->pid, a->path, a->fa, a->attr, a->argv, env);
}

int __fhook_startup posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
		const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	struct exec_args a = { .pid = pid, .path = path, .fa = fa, .attr = attr, .argv = argv };

	notify(path, false);
	return with_env(envp, do_posix_spawn, &a);
}

static int __fhook_startup do_posix_spawnp(void *ctx, char *const *env)
{
	struct exec_args *a = ctx;

	if (!REAL(posix_spawnp))
		return ENOSYS;
	return REAL(posix_spawnp)(a->pid, a->path, a->fa, a->attr, a->argv, env);
}

int __fhook_startup posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *fa,
		 const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	struct exec_args a = { .pid = pid, .path = file, .fa = fa, .attr = attr, .argv = argv };

	notify(file, true);
	return with_env(envp, do_posix_spawnp, &a);
}
