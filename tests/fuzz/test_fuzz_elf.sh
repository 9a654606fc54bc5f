#!/bin/bash
# Fuzz the ELF readers for a bounded time with libFuzzer + ASan + UBSan.
# The starting corpus is a handful of real binaries (built here, instrumented
# and not) and truncated copies; a crash found becomes a file in
# tests/fuzz/elf-regressions/, replayed on every run.
cd "$FHOOK_ROOT" || exit 2
SECS=${FHOOK_FUZZ_SECONDS:-60}
B=build/fuzz
mkdir -p $B/elf-corpus
if ! command -v clang >/dev/null; then
	echo "SKIP fuzz_elf: clang is not installed"
	exit 0
fi
if ! clang -g -O1 -fsanitize=fuzzer,address,undefined -Iinclude -Ilib -Ilib/arch/x86_64 -o $B/fuzz_elf \
	tests/fuzz/fuzz_elf.c lib/kallsyms/elf.c lib/util/sort.c -lelf 2>$B/fuzz_elf.err; then
	echo "FAIL fuzz_elf_build: $(head -3 $B/fuzz_elf.err)"
	exit 0
fi
echo "PASS fuzz_elf_build"
# the corpus: small programs in both kinds of instrumentation, and prefixes of them
printf 'int f(int x){return x+1;}\nint main(void){return f(0);}\n' > $B/tiny.c
gcc -O2 -fpatchable-function-entry=5 -o $B/elf-corpus/pfe $B/tiny.c
gcc -O2 -pg -mfentry -mrecord-mcount -c -o $B/tiny.o $B/tiny.c && gcc -o $B/elf-corpus/mcount $B/tiny.o 2>/dev/null
gcc -O2 -o $B/elf-corpus/plain $B/tiny.c
gcc -O2 -fPIC -shared -fpatchable-function-entry=5 -o $B/elf-corpus/lib.so $B/tiny.c
head -c 1000 $B/elf-corpus/pfe > $B/elf-corpus/trunc1000
head -c 64 $B/elf-corpus/pfe > $B/elf-corpus/trunc64
regress=()
[ -d tests/fuzz/elf-regressions ] && regress=(tests/fuzz/elf-regressions/*)
if [ ${#regress[@]} -gt 0 ]; then
	if $B/fuzz_elf "${regress[@]}" >$B/regress.log 2>&1; then
		echo "PASS fuzz_elf_regressions"
	else
		echo "FAIL fuzz_elf_regressions: $(grep -m1 ERROR $B/regress.log)"
	fi
fi
if $B/fuzz_elf -max_total_time=$SECS -max_len=65536 -rss_limit_mb=1024 \
	-artifact_prefix=$B/ $B/elf-corpus >$B/fuzz_elf.log 2>&1; then
	echo "PASS fuzz_elf_${SECS}s: $(grep -o 'stat::number_of_executed_units: [0-9]*' $B/fuzz_elf.log || tail -1 $B/fuzz_elf.log)"
else
	echo "FAIL fuzz_elf: $(grep -m1 -E 'ERROR|runtime error' $B/fuzz_elf.log); artifact in $B/"
fi
