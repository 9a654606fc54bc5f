#!/bin/bash
# Libraries that libfhook.so must not depend on: every traced process maps
# what libfhook needs before its first instruction runs.  Its RCU read side
# is the trampolines' own (lib/util/rcu.h), not liburcu's.  capstone (the
# tail-call check) is opened with dlopen() when first used; DWARF, the event
# grammar and the decoding of recordings live in the fhook command only
# (libdw); the few ELF sections libfhook reads, it reads itself (libelf, and
# libz behind it, would cost every process two more libraries).
NOT_NEEDED="libcapstone libdw libelf libz liburcu-bp liburcu"

set -o pipefail
cd "${FHOOK_ROOT:-.}" || exit 2
LIB=${FHOOK_BUILD:-build}/libfhook.so
if ! needed=$(readelf -d "$LIB" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); then
	echo "FAIL needed_list: readelf -d $LIB failed"
	exit 1
fi
for lib in $NOT_NEEDED; do
	bad=$(grep "^$lib\." <<< "$needed" | tr '\n' ' ')
	if [ -n "$bad" ]; then
		echo "FAIL not_needed_$lib: libfhook.so needs $bad"
	else
		echo "PASS not_needed_$lib"
	fi
done
