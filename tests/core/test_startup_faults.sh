#!/bin/bash
# What a process pays for libfhook before its first event: the minor page
# faults of an empty program with libfhook.so preloaded, over the same
# program without it.  A count, not a time: it does not depend on the load
# of the machine.
#
# Measured (Debian 12, x86-64): 65 faults without libfhook, +14 to +17
# with it, the child that tests/minflt.c forks included (+15 to +19 while
# crti's _fini was a page faulted in at exit, fhook_lp_set_nosite() and
# its pointer a text window and a zero page, and libfhook three segments;
# +21 or +22 while
# the start-up and fork code was spread over libfhook's text and libc was
# read with dlsym, +73 when it still linked libdw, libelf, libz, liblzma
# and libbz2, +28 to +30 while it needed liburcu-bp); later +16 to +21, the
# least of five runs on each side still moving by a few faults from run to
# run on a busy machine; with several recordings of a process possible (a
# recorder state per recording) and the event filters +19 to +24 (+19 to
# +21 the same day before them); +25 to +29 once the large tables of
# tracing had spread the few variables the start-up touches over five
# pages of .bss, +17 or +18 with those tables after .bss (lib/libfhook.ld).
# The bound is the measurement and that noise.
#
# Then a program with 3,000 functions built with the pads, whose pads
# libfhook rewrites before main(): on top of the above it may pay one
# fault per page of text it writes and a few more, not a list of its
# sites (records, writes: 16 bytes a site each).
set -o pipefail
cd "${FHOOK_ROOT:-$(dirname "$0")/../..}" || exit 2
B=${FHOOK_BUILD:-build}
case $B in /*) LIB=$B/libfhook.so ;; *) LIB=$PWD/$B/libfhook.so ;; esac
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
if [ ! -e "$LIB" ]; then
	echo "FAIL startup_faults_built: $LIB missing"
	exit 1
fi

BOUND=24

cat > "$T/empty.c" <<'C'
int main(void)
{
	return 0;
}
C
. tests/faults.sh
if ! cc -O2 -o "$T/empty" "$T/empty.c" || ! faults_build "$T"; then
	echo "FAIL startup_faults_build: cc failed"
	exit 1
fi
if ! base=$(least 5 "$T/minflt" "$T/empty") ||
   ! with=$(LD_PRELOAD=$LIB least 5 "$T/minflt" "$T/empty"); then
	echo "FAIL startup_faults_run: the empty program failed"
	exit 1
fi
# minflt itself is preloaded too in the second run: count only the child
added=$((with - base))
bounded startup_faults "$added" "$BOUND" \
	"$base faults, +$added with libfhook preloaded (bound +$BOUND)"

# many sites, unprepared: the pads are rewritten straight from the site list
N=3000
awk -v n=$N 'BEGIN {
	for (i = 0; i < n; i++)
		printf "__attribute__((noinline)) int f%d(int x) { return x * %d + %d; }\n", i, i % 97 + 1, i
	print "int (*const tab[])(int) = {"
	for (i = 0; i < n; i++)
		printf "\tf%d,\n", i
	print "};"
	printf "int main(void)\n{\n\treturn tab[%d](1) == 0;\n}\n", n - 1
}' > "$T/many.c"
FH=$B/fhook
[ -x "$FH" ] || FH=build/fhook
if ! cc -O0 $("$FH" cflags) -o "$T/many" "$T/many.c"; then
	echo "FAIL startup_faults_many_build: cc failed"
	exit 1
fi
text=$(printf '%d' "0x$(readelf -SW "$T/many" | awk '$2 == ".text" { print $6 }')")
pages=$(( (text + 4095) / 4096 + 1 ))
if ! base=$(least 5 "$T/minflt" "$T/many") ||
   ! with=$(LD_PRELOAD=$LIB least 5 "$T/minflt" "$T/many"); then
	echo "FAIL startup_faults_many_run: the program failed"
	exit 1
fi
added=$((with - base))
bound=$((BOUND + pages + 6))
bounded startup_faults_many "$added" "$bound" \
	"$N sites on $pages text pages: $base faults, +$added with libfhook preloaded (bound +$bound)"
