#!/bin/bash
# $(fhook cflags) with g++: each site's record goes into its function's COMDAT
# group (GCC 12 leaves them outside every group, and C++ libraries fail to
# link), the code is what GCC made, and a C++ object with shared inline
# functions links and runs traced (fhook record and report exiting 0).
set -o pipefail
cd "${FHOOK_ROOT:-$(dirname "$0")/../..}" || exit 2
B=${FHOOK_BUILD:-build}
FHOOK=$B/fhook
if [ ! -x "$FHOOK" ] || ! command -v g++ >/dev/null; then
	echo "SKIP gcc_as: $FHOOK or g++ missing"
	exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
flags=$("$FHOOK" cflags)
case "$flags" in
*-B*) echo "PASS gcc_as/cflags ($flags)" ;;
*) echo "FAIL gcc_as/cflags: '$flags' names no assembler front end"; exit 0 ;;
esac
cat >"$tmp/h.h" <<'CC'
#include <vector>
inline int twice(int x) { return 2 * x; }
template <class T> T sum(const std::vector<T> &v) { T s = 0; for (auto x : v) s += twice(x); return s; }
CC
printf '#include "h.h"\nint fa() { std::vector<int> v{1, 2}; return sum(v); }\n' >"$tmp/a.cc"
printf '#include "h.h"\nint fa();\nint main() { std::vector<int> v{3}; return sum(v) + fa() - 12; }\n' >"$tmp/b.cc"
for f in a b; do
	# -O0: every inline function and template instance is a COMDAT of its own
	g++ -O0 $flags -c -o "$tmp/$f.o" "$tmp/$f.cc" || { echo "FAIL gcc_as/compile: $f.cc"; exit 0; }
	g++ -O0 -fpatchable-function-entry=5 -c -o "$tmp/$f.plain.o" "$tmp/$f.cc"
done
# every COMDAT function's record is in its group
grouped=$(readelf -gW "$tmp/a.o" | grep -c ' __patchable_function_entries$')
comdat=$(readelf -gW "$tmp/a.o" | grep -cE '^ +\[ *[0-9]+\] +\.text\.')
if [ "$grouped" -ge 1 ] && [ "$grouped" = "$comdat" ]; then
	echo "PASS gcc_as/groups ($grouped groups of code hold their function's record)"
else
	echo "FAIL gcc_as/groups: $grouped records in $comdat groups of code"
fi
# the code is GCC's, byte for byte
if cmp -s <(objdump -d "$tmp/a.o" | tail -n +4) <(objdump -d "$tmp/a.plain.o" | tail -n +4); then
	echo "PASS gcc_as/same-code"
else
	echo "FAIL gcc_as/same-code: the front end changed the code"
fi
# it links, runs, and every function with a site is traced
if g++ -o "$tmp/p" "$tmp/a.o" "$tmp/b.o" && "$tmp/p"; then
	n=$("$FHOOK" record -o "$tmp/p.rec" -- "$tmp/p" 2>&1 | sed -nE 's/^fhook: record: ([0-9]+) events.*/\1/p')
	st=$?
	report=$("$FHOOK" report -s name "$tmp/p.rec" 2>/dev/null)
	rst=$?
	f=$(grep -c ' int sum<int>(std::vector<int' <<< "$report")
	if [ $st = 0 ] && [ $rst = 0 ] && [ -n "$n" ] && [ "$n" -gt 0 ] && [ "$f" = 1 ]; then
		echo "PASS gcc_as/traced ($n events)"
	else
		echo "FAIL gcc_as/traced: record exit $st, report exit $rst, $n events; $("$FHOOK" report "$tmp/p.rec" 2>&1 | head -5)"
	fi
else
	echo "FAIL gcc_as/link: the objects do not link or run"
fi
