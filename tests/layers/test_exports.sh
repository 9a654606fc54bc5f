#!/bin/bash
# libfhook.so exports exactly the functions of its public headers and the
# C library functions it interposes (lib/libfhook.map), nothing else; and
# every function a public header declares is there.
set -o pipefail
cd "$(dirname "$0")/../.." || exit 2
B=${FHOOK_BUILD:-build}
T=$(mktemp -d)
trap 'rm -rf $T' EXIT

# the functions the public headers declare (gcc writes every prototype it sees)
for h in include/fhook/*.h; do echo "#include <fhook/$(basename "$h")>"; done > $T/all.c
if ! gcc -Iinclude -aux-info $T/aux.txt -c $T/all.c -o $T/all.o 2>$T/err; then
	echo "FAIL exports_headers_compile: $(head -3 $T/err)"
	exit 1
fi
grep "$PWD/include/fhook/\|^/\* include/fhook/" $T/aux.txt | grep -v ' static ' |
	sed -E 's/.*[ *]([A-Za-z_][A-Za-z0-9_]*) *\(.*/\1/' | sort -u > $T/api
# the interposed C library functions: the map's names that no header declares
sed -n '/^global:/,/^local:/p' lib/libfhook.map | sed -n 's/^[[:space:]]*\([A-Za-z_][A-Za-z0-9_]*\);.*/\1/p' |
	sort -u > $T/map
comm -13 $T/api $T/map > $T/interposed
nm -D --defined-only "$B/libfhook.so" | awk '{print $3}' | sort -u > $T/exported

[ -s $T/api ] && echo "PASS exports_api_read ($(wc -l < $T/api) functions)" ||
	echo "FAIL exports_api_read: no function found in include/fhook/*.h"
missing=$(comm -23 $T/api $T/exported | tr '\n' ' ')
[ -z "$missing" ] && echo "PASS exports_every_api_function" ||
	echo "FAIL exports_every_api_function: declared but not exported: $missing"
extra=$(comm -13 <(sort -u $T/api $T/interposed) $T/exported | tr '\n' ' ')
[ -z "$extra" ] && echo "PASS exports_nothing_else" ||
	echo "FAIL exports_nothing_else: exported but in no public header: $extra"
libc=$(gcc -print-file-name=libc.so.6)
nm -D --defined-only "$libc" | awk '{sub(/@.*/, "", $3); print $3}' | sort -u > $T/libc
for s in $(cat $T/interposed); do
	if ! grep -qx "$s" $T/libc; then
		echo "FAIL exports_interposed_is_libc: $s is not a C library function"
		bad=1
	fi
done
[ -z "$bad" ] && echo "PASS exports_interposed_are_libc ($(wc -l < $T/interposed) functions)"
# the command uses none of the library's internals: it does not load it
if ldd "$B/fhook" | grep -q libfhook; then
	echo "FAIL exports_command_without_library: $B/fhook links libfhook.so"
else
	echo "PASS exports_command_without_library"
fi
