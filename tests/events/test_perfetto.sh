#!/bin/bash
# The Perfetto writer (lib/events/perfetto.c), alone: tests/events/
# test_perfetto_unit.c feeds it synthetic decoded events and protoc, with
# the subset of Perfetto's messages in tests/events/perfetto.proto, reads
# back what it wrote.
#
#   golden          every case (threads, nested slices, instants, each
#                   argument type, faults, arrays, bad UTF-8, a 255-byte
#                   string, cut-short arguments, a renamed thread) decodes
#                   to exactly tests/events/expected/perfetto.txt
#   utf8            protoc finds no string that is not UTF-8
#   interning       200,000 events of 50 names stay under 32 bytes an event
#   memory          the peak RSS does not grow with the number of events
#   fuzz            random definitions and bytes: no crash (ASan, UBSan),
#                   and the file still decodes cleanly
#   unit_*          error paths, from the program itself
#
# Prints PASS/FAIL lines; exits non-zero if anything failed or crashed.
set -o pipefail
cd "${FHOOK_ROOT:-$(dirname "$0")/../..}" || exit 2
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
pass() { echo "PASS $1"; }
fail() { echo "FAIL $1: $2"; fails=$((fails + 1)); }

if ! command -v protoc >/dev/null && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
	timeout 300 apt-get install -y protobuf-compiler >/dev/null 2>&1
fi
if ! command -v protoc >/dev/null; then
	echo "SKIP perfetto: no protoc (apt-get install protobuf-compiler)"
	exit 0
fi
decode() {
	timeout 60 protoc --decode=perfetto.protos.Trace -Itests/events perfetto.proto
}

# lib/recorder/types.c, where the type helpers may live; else the test's copy
srcs="tests/events/test_perfetto_unit.c lib/events/perfetto.c"
if [ -f lib/recorder/types.c ]; then
	srcs="$srcs lib/recorder/types.c"
else
	srcs="$srcs -DPF_LOCAL_TYPES"
fi
cflags="-std=gnu11 -O1 -g -Wall -Wextra -Wno-unused-parameter -Werror -Iinclude -Ilib -Ilib/events"
san="-fsanitize=address,undefined -fno-sanitize-recover=all"
if ! timeout 120 gcc $cflags $san -o $T/unit $srcs 2>$T/cc.txt; then
	# no sanitizer runtime here: the crash checks still stand, less strictly
	if ! timeout 120 gcc $cflags -o $T/unit $srcs 2>$T/cc.txt; then
		fail build "$(head -c 600 $T/cc.txt)"
		exit 1
	fi
fi
if ! timeout 120 gcc $cflags -O2 -o $T/unit_plain $srcs 2>$T/cc.txt; then
	fail build_plain "$(head -c 600 $T/cc.txt)"
	exit 1
fi
pass build

# golden
if ! timeout 60 $T/unit golden $T/g.pftrace 2>$T/err.txt; then
	fail golden "the writer failed or crashed: $(head -c 600 $T/err.txt)"
elif ! decode <$T/g.pftrace >$T/g.txt 2>$T/perr.txt; then
	fail golden "protoc could not decode it: $(head -c 600 $T/perr.txt)"
else
	if diff -u tests/events/expected/perfetto.txt $T/g.txt >$T/diff.txt; then
		pass golden
	else
		fail golden "differs from tests/events/expected/perfetto.txt:
$(head -60 $T/diff.txt)"
	fi
	# protoc logs an error for a string field that is not UTF-8
	if [ -s $T/perr.txt ]; then
		fail utf8 "$(head -c 600 $T/perr.txt)"
	else
		pass utf8
	fi
fi

# interning: spelled out, the 34-byte names and categories would take
# more than 60 bytes an event on their own
n=200000
if ! timeout 60 $T/unit bulk $T/b.pftrace $n >/dev/null 2>$T/err.txt; then
	fail interning "the writer failed or crashed: $(head -c 600 $T/err.txt)"
else
	size=$(stat -c %s $T/b.pftrace)
	if [ "$size" -lt $((n * 32)) ]; then
		pass interning
	else
		fail interning "$size bytes for $n events (bound $((n * 32)))"
	fi
	if decode <$T/b.pftrace >$T/b.txt 2>$T/perr.txt; then
		events=$(grep -c '^  track_event {' $T/b.txt)
		names=$(grep -c '^    event_names {' $T/b.txt)
		if [ "$events" = $n ] && [ "$names" = 50 ] && [ ! -s $T/perr.txt ]; then
			pass interning_decodes
		else
			fail interning_decodes "$events events, $names names interned, $(head -c 300 $T/perr.txt)"
		fi
	else
		fail interning_decodes "protoc: $(head -c 600 $T/perr.txt)"
	fi
fi

# memory: 2,000,000 events need no more than 100,000 (to /dev/null, no ASan)
small=$(timeout 60 $T/unit_plain bulk /dev/null 100000 | sed -n 's/^maxrss_kb //p')
st_small=$?
large=$(timeout 60 $T/unit_plain bulk /dev/null 2000000 | sed -n 's/^maxrss_kb //p')
st_large=$?
if [ $st_small != 0 ] || [ $st_large != 0 ] || [ -z "$small" ] || [ -z "$large" ]; then
	fail memory "the writer failed or crashed (exit $st_small, $st_large)"
elif [ $((large - small)) -lt 1024 ]; then
	pass memory
else
	fail memory "peak RSS ${small} kB for 100,000 events, ${large} kB for 2,000,000"
fi

# fuzz
if ! timeout 120 $T/unit fuzz $T/f.pftrace 20000 2>$T/err.txt; then
	fail fuzz "the writer failed or crashed: $(head -c 600 $T/err.txt)"
elif ! decode <$T/f.pftrace >/dev/null 2>$T/perr.txt || [ -s $T/perr.txt ]; then
	fail fuzz "protoc: $(head -c 600 $T/perr.txt)"
else
	pass fuzz
fi

# error paths
timeout 60 $T/unit errors >$T/u.txt 2>$T/err.txt
st=$?
cat $T/u.txt
fails=$((fails + $(grep -c '^FAIL' $T/u.txt)))
if [ $st != 0 ] && ! grep -q '^FAIL' $T/u.txt; then
	fail unit_errors "exit $st: $(head -c 600 $T/err.txt)"
fi

[ $fails = 0 ]
