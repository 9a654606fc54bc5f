#!/bin/bash
# Fuzz the reader of recordings (ring bytes a traced program writes into
# its ring, and the blocks of a recording file) for a bounded time with libFuzzer + ASan + UBSan; the inputs
# that once crashed it are replayed first.
cd "$FHOOK_ROOT" || exit 2
SECS=${FHOOK_FUZZ_SECONDS:-60}
B=build/fuzz
mkdir -p $B/records-corpus
if ! command -v clang >/dev/null; then
	echo "SKIP fuzz_records: clang is not installed"
	exit 0
fi
SRCS="lib/events/decode.c lib/events/recinfo.c lib/events/calls.c lib/events/format.c lib/events/perfetto.c lib/recorder/types.c lib/recorder/evdesc.c lib/recorder/evdesc_write.c lib/events/parse.c lib/events/parse_args.c lib/events/parse_dwarf.c lib/events/prog.c lib/events/prog_cxx.c lib/events/cxxname.c lib/events/dwarf.c lib/kallsyms/elf.c lib/kprobes/nokprobe.c lib/util/sort.c"
if ! clang -g -O1 -std=gnu11 -Iinclude -Ilib -Ilib/arch/x86_64 -fsanitize=fuzzer,address,undefined -o $B/fuzz_records \
	tests/fuzz/fuzz_records.c $SRCS -ldw -lelf -liberty -lpthread 2>$B/fuzz_records.err; then
	echo "FAIL fuzz_records_build: $(head -3 $B/fuzz_records.err)"
	exit 0
fi
echo "PASS fuzz_records_build"
if $B/fuzz_records tests/fuzz/records-regressions/* >$B/records-regress.log 2>&1; then
	echo "PASS fuzz_records_regressions"
else
	echo "FAIL fuzz_records_regressions: $(grep -m1 -E 'ERROR|runtime error' $B/records-regress.log)"
fi
cp tests/fuzz/records-regressions/* $B/records-corpus/
if $B/fuzz_records -max_total_time=$SECS -max_len=4096 -rss_limit_mb=4096 \
	-artifact_prefix=$B/ $B/records-corpus >$B/fuzz_records.log 2>&1; then
	echo "PASS fuzz_records_${SECS}s: $(grep -o 'Done [0-9]* runs' $B/fuzz_records.log)"
else
	echo "FAIL fuzz_records: $(grep -m1 -E 'ERROR|runtime error' $B/fuzz_records.log); artifact in $B/"
fi
