// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * What a kprobe glob leaves out: the functions fhook itself runs when a
 * probe fires or is placed, the counterpart of the kernel's
 * NOKPROBE_SYMBOL() list.  A probe there would fire inside fhook's own
 * work: at best every hit is refused as a recursion and counted as
 * missed; before the recursion lock is taken (the trap's signal return,
 * a lazy binding's resolver, the vDSO clock) it recurses until the stack
 * is gone.
 *
 * Also what runs while fork() holds libc's atfork lock or in the child
 * before fhook's fork handler (_Fork, _IO_list_*: a probe there would
 * register the thread, which takes that lock, or write into the parent's
 * ring), and what starts a child on the parent's memory (vfork, clone,
 * posix_spawn: its probes would run on the parent's thread state).
 *
 * The libc and loader functions are named, not found: libfhook calls
 * them through its imports (and a few libc functions those call: fstatat,
 * getcwd, openat), and tests/events/test_kprobe_globs.sh fails when an
 * import of build/libfhook.so is missing here, or when recording every
 * libc function of a program counts a call refused as a recursion.  A glob never
 * matches them; a single symbol still may (the user asked for it, and
 * the recursion lock refuses the nested hits).
 *
 * Shared by libfhook (what a glob probes in a process) and the command
 * (fhook funcs --why, the count said at start).
 */
#include <stdlib.h>
#include <string.h>

#include "arch_insn.h"
#include "nokprobe.h"

/*
 * Names in arrays of their own, not pointers: a table of pointers is
 * relocated data, written by the loader in every process that loads
 * libfhook, and this one alone would take the relocated data over a page.
 */
#define NOKPROBE_NAME_MAX	32

/* sorted (strcmp): bsearch */
static const char nokprobe_libc[][NOKPROBE_NAME_MAX] = {
	"_Fork", "_IO_list_lock", "_IO_list_resetlock", "_IO_list_unlock", "__clone", "__clone3",
	"__environ", "__errno_location", "__isoc99_sscanf", "__libc_calloc", "__libc_free",
	"__libc_malloc", "__libc_memalign", "__libc_realloc", "__libc_single_threaded",
	"__memcpy_chk", "__memmove_chk", "__memset_chk", "__register_atfork", "__restore_rt",
	"__rseq_offset", "__rseq_size", "__sched_cpucount", "__sigaction", "__snprintf_chk",
	"__tls_get_addr",
	"__vfork", "__vsnprintf_chk", "_dl_fixup", "_dl_runtime_resolve_fxsave",
	"_dl_runtime_resolve_xsave", "_dl_runtime_resolve_xsavec", "_exit", "abort", "accept4",
	"access", "asprintf", "bind", "calloc", "clock_gettime", "clone", "clone3", "close",
	"closedir", "connect", "dl_iterate_phdr", "dladdr", "dladdr1", "dlerror", "dlsym",
	"dlvsym", "environ", "eventfd", "eventfd_read", "eventfd_write", "fclose", "fcntl",
	"fcntl64", "fflush", "fgets", "fnmatch", "fopen", "fopen64", "fprintf", "fputc", "free",
	"fstat", "fstat64", "fstatat", "fstatat64", "ftruncate", "ftruncate64", "fwrite",
	"getauxval", "getcwd", "getgid",
	"getpid", "getpriority", "getrlimit", "getrlimit64", "getsockopt", "gettid", "getuid",
	"listen", "madvise", "malloc", "memchr", "memcmp", "memcpy", "memfd_create", "memmove",
	"memset", "mmap", "mmap64", "mprotect", "mremap", "munmap", "nanosleep", "open", "open64",
	"open_memstream", "openat", "openat64", "opendir", "poll", "posix_spawn", "posix_spawnp",
	"prctl", "pread", "pread64", "process_vm_readv", "pthread_atfork", "pthread_attr_destroy",
	"pthread_attr_getstack", "pthread_attr_init", "pthread_attr_setdetachstate",
	"pthread_create", "pthread_getattr_np", "pthread_getspecific", "pthread_key_create",
	"pthread_mutex_init", "pthread_mutex_lock", "pthread_mutex_trylock", "pthread_mutex_unlock",
	"pthread_once", "pthread_self", "pthread_setname_np", "pthread_setspecific", "pwrite",
	"pwrite64", "qsort", "raise", "read", "readdir", "readdir64", "readlink", "realloc",
	"realpath", "recv", "sched_getcpu", "sched_yield", "secure_getenv", "send", "setsockopt",
	"sigaddset", "sigaltstack", "sigdelset", "sigemptyset", "sigfillset", "sigismember",
	"signal", "snprintf", "socket", "stat", "stat64", "stderr", "strchr", "strcmp", "strcpy",
	"strcspn", "strdup", "strerror", "strlen", "strncmp", "strndup", "strnlen", "strpbrk",
	"strrchr", "strstr", "strtok_r", "strtol", "strtoll", "strtoul", "strtoull", "syscall",
	"sysconf", "unsetenv", "usleep", "vfork", "vfprintf", "vsnprintf", "write",
};

/*
 * What runs with every signal blocked: a new thread's first steps
 * (__clone, and __ctype_init, _setjmp in start_thread) and a thread's
 * exit releasing its stack (getpagesize, __madvise).  Where every probe
 * is a trap (FHOOK_KPROBE_TRAPS_ONLY: aarch64's brk), a probe there
 * raises a SIGTRAP the thread blocks, and the kernel kills it.  Sorted
 * (strcmp).
 */
static const char nokprobe_sigblocked[][NOKPROBE_NAME_MAX] = {
	"__clone", "__ctype_init", "__madvise", "_setjmp", "getpagesize",
};
#define NR_SIGBLOCKED	(FHOOK_KPROBE_TRAPS_ONLY ? \
			 sizeof(nokprobe_sigblocked) / sizeof(nokprobe_sigblocked[0]) : 0)

/*
 * The C run-time's start-up and tear-down code that every object links in
 * (crt1.o, crti.o, crtbegin.o, crtend.o): not the program's, never built
 * with sites, so a glob leaves it out too and the call tree begins at main
 * as the sites' does.  Sorted (strcmp).
 */
static const char nokprobe_crt[][NOKPROBE_NAME_MAX] = {
	"__do_global_dtors_aux", "__libc_csu_fini", "__libc_csu_init", "_dl_relocate_static_pie",
	"_fini", "_init", "_start", "deregister_tm_clones", "frame_dummy", "register_tm_clones",
};

static int name_cmp(const void *key, const void *elt)
{
	return strcmp(key, elt);
}

static const char *file_name(const char *path)
{
	const char *slash = path ? strrchr(path, '/') : NULL;

	return slash ? slash + 1 : path;
}

static bool sigblocked(const char *name)
{
	return NR_SIGBLOCKED && bsearch(name, nokprobe_sigblocked, NR_SIGBLOCKED,
					sizeof(nokprobe_sigblocked[0]), name_cmp);
}

bool fhook_nokprobe_name(const char *name)
{
	return bsearch(name, nokprobe_libc, sizeof(nokprobe_libc) / sizeof(nokprobe_libc[0]),
		       sizeof(nokprobe_libc[0]), name_cmp) != NULL || sigblocked(name);
}

/* libc and the loader: the objects libfhook's imports bind to */
static bool is_libc(const char *base)
{
	return !strcmp(base, "libc.so.6") || !strncmp(base, "ld-linux", 8) ||
	       !strcmp(base, "libpthread.so.0") || !strcmp(base, "libdl.so.2");
}

const char *fhook_nokprobe_libc(const char *object)
{
	const char *base = file_name(object);

	return base && is_libc(base) ? "fhook's probe and recording path calls it" : NULL;
}

/*
 * GCC's hot/cold split (foo.cold, foo.cold.12): a symbol of its own, but
 * reached by a jump from foo's body, with foo's frame on the stack; a
 * return probe there would take foo's caller's return address for its own.
 */
bool fhook_nokprobe_cold(const char *name)
{
	const char *c = strstr(name, ".cold");

	return c && (!c[5] || c[5] == '.');
}

const char *fhook_nokprobe(const char *object, const char *name)
{
	const char *base = file_name(object);

	if (name && bsearch(name, nokprobe_crt, sizeof(nokprobe_crt) / sizeof(nokprobe_crt[0]),
			    sizeof(nokprobe_crt[0]), name_cmp))
		return "the C run-time's start-up code (crt*.o), not the program's";
	if (name && fhook_nokprobe_cold(name))
		return "the cold part of a function, entered by a jump from it: not a call's entry";
	if (!base)
		return NULL;
	if (!strcmp(base, "libfhook.so") || !strncmp(base, "libfhook.so.", 12))
		return "fhook itself";
	if (!strncmp(base, "linux-vdso.so", 13))
		return "the vDSO: fhook reads the clock there";
	if (is_libc(base) && name && sigblocked(name))
		return "it runs with every signal blocked (a thread's start or exit): a probe's "
		       "trap there would kill the thread";
	if (is_libc(base) && name && fhook_nokprobe_name(name))
		return "fhook's probe and recording path calls it";
	return NULL;
}

/*
 * Functions that return twice, or elsewhere: setjmp() saves its caller's
 * return address, which a return probe has just swapped for its hook's,
 * and the second return (longjmp) would go through a hook long gone.
 */
static const char *const noretprobe[] = {
	"__setjmp", "__sigsetjmp", "_setjmp", "getcontext", "savectx", "setjmp", "sigsetjmp",
	"swapcontext",
};

const char *fhook_noretprobe(const char *name)
{
	size_t i;

	for (i = 0; name && i < sizeof(noretprobe) / sizeof(noretprobe[0]); i++)
		if (!strcmp(name, noretprobe[i]))
			return "it returns twice (setjmp): a return probe's hook would be saved "
			       "as its caller's return address";
	return NULL;
}

#define NR_LIBC	(sizeof(nokprobe_libc) / sizeof(nokprobe_libc[0]))

size_t fhook_nokprobe_count(void)
{
	return NR_LIBC + NR_SIGBLOCKED;
}

const char *fhook_nokprobe_at(size_t i)
{
	if (i < NR_LIBC)
		return nokprobe_libc[i];
	return i < fhook_nokprobe_count() ? nokprobe_sigblocked[i - NR_LIBC] : NULL;
}
