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

# Instructions a call of PROG under `fhook record` (callgrind over its
# processes, run with N = 2000 and 22000: what start-up costs cancels out):
#   rec_per_call TMPDIR PROG 'ARGS with @N@' [VAR=VALUE ...] -- [RECORD OPTIONS ...]
# prints 0 when the runs did not both count.  Uses $FHOOK.
rec_ir() {
	local tmp=$1 prog=$2 args=$3 d f n sum=0 rp fh envs=()
	shift 3
	while [ $# -gt 0 ] && [ "$1" != -- ]; do envs+=("$1"); shift; done
	shift
	d=$(mktemp -d "$tmp/cg.XXXXXX")
	rp=$(realpath "$prog")
	fh=$(realpath "$FHOOK")
	# (ARGS split on purpose: the program's words)
	(cd "$d" && env "${envs[@]}" valgrind --tool=callgrind --trace-children=yes \
		--callgrind-out-file="$d/cg.%p" "$fh" record "$@" -o "$d/r.rec" -- \
		"$rp" $args >/dev/null 2>&1)
	for f in "$d"/cg.*; do
		grep -q "^cmd: *$rp" "$f" && n=$(sed -n 's/^summary: *//p' "$f") &&
		sum=$((sum + n))
	done
	echo "$sum"
}
rec_per_call() {
	local tmp=$1 prog=$2 args=$3 a b
	shift 3
	a=$(rec_ir "$tmp" "$prog" "${args//@N@/2000}" "$@")
	b=$(rec_ir "$tmp" "$prog" "${args//@N@/22000}" "$@")
	[ "$a" -gt 0 ] && [ "$b" -gt "$a" ] && echo $(((b - a) / 20000)) || echo 0
}
