#!/bin/bash
# fhook patch -p and inject -p warn as the commands without -p do: a caller
# that reaches the target with a tail jump (its calls are never routed)
# is named, with the same words, and the patch is applied all the same.
set -o pipefail
cd "${FHOOK_ROOT:-$(dirname "$0")/../..}" || exit 2
F=$PWD/build/fhook
T=$(mktemp -d)
P=
trap '[ -n "$P" ] && kill $P 2>/dev/null; rm -rf "$T"' EXIT
CHECK_PREFIX=patch_warn
. tests/check.sh

cat > $T/prog.c <<'C'
#include <stdio.h>
#include <string.h>
#include <unistd.h>
__attribute__((noinline)) int target(int x) { __asm__ volatile(""); return x + 1; }
__attribute__((noinline)) int tailer(int x) { return target(x * 2); }
int main(int argc, char **argv)
{
	long i, s = 0, n = argc > 1 ? 600000 : 3;

	for (i = 0; i < n; i++) {
		s += tailer((int)i);
		if (argc > 1)
			usleep(100);
	}
	printf("%ld\n", s);
	return 0;
}
C
echo 'int repl(int x) { return -1; }' > $T/repl.c
gcc -O2 $($F cflags) -o $T/prog $T/prog.c || exit 2
gcc -O2 -shared -fPIC -o $T/repl.so $T/repl.c || exit 2
if ! objdump -d $T/prog | sed -n '/<tailer>:/,/^$/p' | grep -q 'jmp.*<target>'; then
	echo "SKIP patch_warn: the compiler made no tail jump of tailer"
	exit 0
fi
WARN="warning: caller 'tailer' reaches 'target' with a jump at tailer+0x7 (a tail call), so the return address is that of its own caller; calls of 'target' it makes this way are not routed"
# the offset of the jump is the compiler's
norm() { sed -E "s/tailer\+0x[0-9a-f]+ /tailer+OFF /; s/process $P/process N/g; s/-p $P/-p N/"; }
WARN=${WARN/tailer+0x7/tailer+OFF}

out=$(timeout 60 $F patch --func target --with $T/repl.so:repl --caller tailer -- $T/prog 2>&1)
check without_p eq "$?:$(norm <<< "$out" | grep -cxF "fhook: patch: $WARN")" "0:1"

$T/prog loop > /dev/null &
P=$!
sleep 0.3
out=$(timeout 60 $F patch -p $P --func target --with $T/repl.so:repl --caller tailer 2>&1)
check patch_p eq "$?:$(norm <<< "$out")" "0:fhook: patch: $WARN
fhook: patch: 'target' applied in process N; \`fhook unpatch -p N target\` removes it"
timeout 60 $F unpatch -p $P target > /dev/null 2>&1
out=$(timeout 60 $F inject -p $P --name inj --func target --retval 5 --caller tailer 2>&1)
check inject_p eq "$?:$(norm <<< "$out")" "0:fhook: inject: $WARN
fhook: inject: 'inj' applied in process N; \`fhook unpatch -p N inj\` removes it"
kill $P 2>/dev/null
wait $P 2>/dev/null
P=
exit 0
