#!/bin/bash
# Checked inputs of `fhook patch` and `fhook inject`:
#  - --with LIB:SYM where SYM is a variable (or thread-local) is refused by
#    name, the program not run (it used to be run and segfault); an IFUNC
#    (resolved by dlsym) is a function and works;
#  - --retval outside [-2^63, 2^64) is refused (it used to wrap).
set -o pipefail
cd "${FHOOK_ROOT:-$(dirname "$0")/../..}" || exit 2
F=$PWD/build/fhook
PROG=$PWD/build/tests/livepatch/lp_prog
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
CHECK_PREFIX=checked
. tests/check.sh
if [ ! -x "$PROG" ]; then
	echo "FAIL checked/built: $PROG missing (make test builds it)"
	exit 0
fi

cat > $T/repl.c <<'C'
int not_a_function = 42;
const char *table[2] = { "x", "y" };
__thread int per_thread;
static const char *impl(void) { return "ifunc"; }
static void *resolve(void) { return (void *)impl; }
const char *via_ifunc(void) __attribute__((ifunc("resolve")));
const char *plain(void) { return "plain"; }
C
gcc -shared -fPIC -O1 -o $T/repl.so $T/repl.c || exit 2
# the command reads the library first (nothing runs)
out=$(timeout 30 $F patch --func greeting --with $T/repl.so:not_a_function -- $PROG greet 2>&1); st=$?
check with_variable eq "$st:$out" "2:fhook: patch: $T/repl.so: 'not_a_function' is a variable (STT_OBJECT), not a function: --with needs a function of the target's prototype"
out=$(timeout 30 $F patch --func greeting --with $T/repl.so:table -- $PROG greet 2>&1); st=$?
check with_array eq "$st:$out" "2:fhook: patch: $T/repl.so: 'table' is a variable (STT_OBJECT), not a function: --with needs a function of the target's prototype"
out=$(timeout 30 $F patch --func greeting --with $T/repl.so:per_thread -- $PROG greet 2>&1); st=$?
check with_tls eq "$st:$out" "2:fhook: patch: $T/repl.so: 'per_thread' is a thread-local variable (STT_TLS), not a function: --with needs a function of the target's prototype"
out=$(timeout 30 $F patch --func greeting --with $PROG:main -- $PROG greet 2>&1); st=$?
check with_not_shared eq "$st:$(head -1 <<< "$out")" "125:fhook: patch: cannot load $PROG: $PROG: cannot dynamically load position-independent executable"
cp /bin/true $T/notlib.txt && echo text > $T/notlib.txt
out=$(timeout 30 $F patch --func greeting --with $T/notlib.txt:f -- $PROG greet 2>&1); st=$?
check with_not_elf eq "$st:$out" "2:fhook: patch: $T/notlib.txt: not an x86-64 ELF shared object"
# the preload checks again, with the loader's view (the variables set by hand)
out=$(timeout 30 env FHOOK_LP_MODE=patch FHOOK_LP_FUNC=greeting \
	FHOOK_LP_WITH=$T/repl.so:not_a_function LD_PRELOAD=$PWD/build/libfhook.so $PROG greet 2>&1); st=$?
check preload_with_variable eq "$st:$out" "125:fhook: patch: $T/repl.so: 'not_a_function' is a variable (STT_OBJECT), not a function: --with needs a function of the target's prototype"
out=$(timeout 30 env FHOOK_LP_MODE=patch FHOOK_LP_FUNC=greeting \
	FHOOK_LP_WITH=$T/repl.so:per_thread LD_PRELOAD=$PWD/build/libfhook.so $PROG greet 2>&1); st=$?
check preload_with_tls eq "$st:$out" "125:fhook: patch: $T/repl.so: 'per_thread' is not in an executable segment"
out=$(timeout 30 $F patch --func greeting --with $T/repl.so:via_ifunc -- $PROG greet 2>/dev/null); st=$?
check with_ifunc eq "$st:$(head -1 <<< "$out")" "0:a: ifunc"
out=$(timeout 30 $F patch --func greeting --with $T/repl.so:plain -- $PROG greet 2>/dev/null); st=$?
check with_function eq "$st:$(head -1 <<< "$out")" "0:a: plain"

for v in 18446744073709551616 -9223372036854775809 -18446744073709551615 0x10000000000000000; do
	out=$(timeout 30 $F inject --func do_open --retval $v -- $PROG open 1 2>&1); st=$?
	check "retval_range_$v" eq "$st:$out" "2:fhook: inject: bad --retval '$v': outside the 64-bit range [-2^63, 2^64)"
done
for v in -1 18446744073709551615 -9223372036854775808 0xffffffffffffffff; do
	out=$(timeout 30 $F inject --func do_open --retval $v --times 1 -- $PROG open 1 2>&1); st=$?
	check "retval_ok_$v" eq "$st:$(grep -c '1 failed' <<< "$out")" "0:1"
done
exit 0
