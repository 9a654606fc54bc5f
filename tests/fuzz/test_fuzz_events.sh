#!/bin/bash
# Build the event-parser fuzzer with clang -fsanitize=fuzzer,address and run
# it for a bounded time (FHOOK_FUZZ_SECONDS, default 60) from the starting
# corpus in tests/fuzz/corpus.  PASS when it ends without a crash, leak or
# sanitizer report.
cd "${FHOOK_ROOT:-$(dirname "$0")/../..}" || exit 2
SECS=${FHOOK_FUZZ_SECONDS:-60}
if ! command -v clang >/dev/null; then
	echo "SKIP fuzz/events: clang is not installed (scripts/deps.sh)"
	exit 0
fi
out=build/fuzz
mkdir -p "$out/corpus"
[ -x build/tests/events/prog ] || make -s build/tests/events/prog >/dev/null 2>&1
SRCS="lib/events/parse.c lib/events/parse_args.c lib/events/parse_dwarf.c lib/recorder/types.c lib/events/prog.c lib/events/prog_cxx.c lib/events/cxxname.c lib/events/dwarf.c lib/kallsyms/elf.c lib/kprobes/nokprobe.c lib/util/sort.c"
if ! clang -g -O1 -std=gnu11 -Iinclude -Ilib -Ilib/arch/x86_64 -fsanitize=fuzzer,address,undefined \
	-o "$out/fuzz_events" tests/fuzz/fuzz_events.c $SRCS -ldw -lelf -liberty 2> "$out/build.log"; then
	echo "FAIL fuzz/events/build: $(head -5 "$out/build.log")"
	exit 1
fi
echo "PASS fuzz/events/build"
cp tests/fuzz/corpus/* "$out/corpus/" 2>/dev/null
FHOOK_FUZZ_PROG=build/tests/events/prog "$out/fuzz_events" -max_total_time="$SECS" \
	-max_len=512 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
	"$out/corpus" > "$out/run.log" 2>&1
st=$?
runs=$(sed -nE 's/^stat::number_of_executed_units: *([0-9]+)/\1/p' "$out/run.log")
if [ $st = 0 ]; then
	echo "PASS fuzz/events ($runs inputs in ${SECS}s)"
else
	echo "FAIL fuzz/events: status $st: $(grep -m3 -E 'ERROR|SUMMARY' "$out/run.log")"
fi
