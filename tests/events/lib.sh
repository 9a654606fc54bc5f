# Sourced by the events tests: the known program's events, and the
# normalization of what varies between runs (times, pids, tids, cpus,
# stack addresses).
EVENTS=(-e 'f vfs_read $arg* file->name:string file->f_path.dentry:string file->mode file->kind'
	-e 'f vfs_read%return $retval'
	-e 'f add a b' -e 'f add%return $retval'
	-e 'f note msg:string'
	-e 'f fact n' -e 'f fact%return $retval'
	-e 'f run%return $retval c=$comm'
	-e 'f:globals/vars vfs_read @counter:s32 g=+0(@greeting):string fl=+0($arg1):s32 arr=+24($arg1):char[6]')

# The machine the programs run on (FHOOK_TEST_ARCH: scripts/test-aarch64.sh
# runs these tests on aarch64 programs under qemu-user): where a
# function's site lies from its entry, as events print it (after
# aarch64's "mov x9, x30"), and where stacks are (qemu-user's below 2^40,
# arm64 Linux's under 2^48).
TEST_ARCH=${FHOOK_TEST_ARCH:-$(uname -m)}
case $TEST_ARCH in
aarch64)
	SITE_OFF=0x4
	STACK_RE='0x7ff[0-9a-f]+|0x55[0-9a-f]{8}\b|0xffff[0-9a-f]{8}\b' ;;
*)
	SITE_OFF=0x0
	STACK_RE='0x7ff[0-9a-f]+' ;;
esac
# The command line of a program the command started (pgrep -xf), behind
# FHOOK_EMULATOR's when there is one.
EMU_PREFIX=${FHOOK_EMULATOR:+$FHOOK_EMULATOR }
# A stripped program of the machine with no patchable site: /bin/true, or
# where that is the host's, a test program built without fhook's flags.
case $TEST_ARCH in
"$(uname -m)") NOSITES_PROG=/bin/true ;;
*) NOSITES_PROG=${FHOOK_BUILD:-build}/tests/events/kp_prog_stripped ;;
esac
# Why fhook ... -p cannot attach here, or nothing: qemu-user has no ptrace
# (FHOOK_TEST_NO_PTRACE).
NO_PTRACE=${FHOOK_TEST_NO_PTRACE:-}
# Why a program that execs cannot be traced here, or nothing: qemu-user
# follows no exec without a binfmt_misc entry (FHOOK_TEST_NO_EXEC).
NO_EXEC=${FHOOK_TEST_NO_EXEC:-}

# tests/events/expected/NAME, or the machine's own copy where its
# addresses differ (expected/aarch64/NAME)
exp_file() {
	if [ -e "tests/events/expected/$TEST_ARCH/$1" ]; then
		echo "tests/events/expected/$TEST_ARCH/$1"
	else
		echo "tests/events/expected/$1"
	fi
}

normalize() {
	sed -E -e 's/ +[0-9]+\.[0-9]{6}/ TS/g' -e 's/[0-9]+\.[0-9]{6}/TS/g' -e 's/[0-9]+\.[0-9]{3}([,}])/TS\1/g' \
	    -e 's/prog-[0-9]+ +/prog-TID /' -e 's/\[[0-9]{3}\]/[CPU]/' \
	    -e 's/"ts":[0-9]+/"ts":TS/g' -e 's/"(pid|tid|cpu)":[0-9]+/"\1":N/g' -E -e "s/$STACK_RE/STACK/g"
}
