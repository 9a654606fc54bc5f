#!/bin/bash
# Fuzz the replacement-library check of `fhook patch --with` for
# a bounded time with libFuzzer + ASan + UBSan.  Corpus: small shared
# objects with functions, variables, thread-locals and an IFUNC, and
# truncated copies; the first byte of an input picks the symbol looked for.
cd "$FHOOK_ROOT" || exit 2
SECS=${FHOOK_FUZZ_SECONDS:-60}
B=build/fuzz
mkdir -p $B/with-corpus
if ! command -v clang >/dev/null; then
	echo "SKIP fuzz_with: clang is not installed"
	exit 0
fi
if ! clang -g -O1 -fsanitize=fuzzer,address,undefined -Iinclude -Ilib -Ilib/arch/x86_64 -o $B/fuzz_with \
	tests/fuzz/fuzz_with.c cli/with_check.c -lelf 2>$B/fuzz_with.err; then
	echo "FAIL fuzz_with_build: $(head -3 $B/fuzz_with.err)"
	exit 0
fi
echo "PASS fuzz_with_build"
cat > $B/with_base.c <<'C'
int not_a_function = 42;
__thread int per_thread;
static int impl(void) { return 1; }
static void *resolve(void) { return (void *)impl; }
int f(void) __attribute__((ifunc("resolve")));
int plain(void) { return 2; }
C
gcc -O1 -fPIC -shared -o $B/with_base.so $B/with_base.c || exit 2
for k in 0 1 2 3; do
	{ printf "\\x$(printf %02x $k)"; cat $B/with_base.so; } > $B/with-corpus/base$k
done
{ printf '\x01'; head -c 2000 $B/with_base.so; } > $B/with-corpus/trunc2000
{ printf '\x02'; head -c 64 $B/with_base.so; } > $B/with-corpus/trunc64
if $B/fuzz_with $B/with-corpus/* >$B/with-regress.log 2>&1; then
	echo "PASS fuzz_with_corpus"
else
	echo "FAIL fuzz_with_corpus: $(grep -m1 -E 'ERROR|runtime error' $B/with-regress.log)"
fi
if $B/fuzz_with -max_total_time=$SECS -max_len=65536 -rss_limit_mb=1024 \
	-artifact_prefix=$B/with- $B/with-corpus >$B/fuzz_with.log 2>&1; then
	echo "PASS fuzz_with_${SECS}s: $(grep -o 'stat::number_of_executed_units: [0-9]*' $B/fuzz_with.log || tail -1 $B/fuzz_with.log)"
else
	echo "FAIL fuzz_with: $(grep -m1 -E 'ERROR|runtime error' $B/fuzz_with.log); artifact in $B/"
fi
