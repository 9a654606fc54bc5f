#!/bin/bash
# Names by the object that held the address: two dlopen'd libraries with
# a static function of the same name, both open; then a library closed and
# another loaded where it was (the loader reuses the addresses), then the
# first again.  Each call is named by its own library's symbols, in `fhook
# trace` and `fhook record` + `fhook replay`.
set -o pipefail
cd "${FHOOK_ROOT:-$(dirname "$0")/../..}" || exit 2
F=$PWD/build/fhook
S=$PWD/tests/events/dlnames
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
CHECK_PREFIX=dlopen_names
. tests/check.sh

gcc -O1 -shared -fPIC $($F cflags) -o $T/libone.so $S/lib_one.c || exit 2
gcc -O1 -shared -fPIC $($F cflags) -o $T/libtwo.so $S/lib_two.c || exit 2
gcc -O1 $($F cflags) -o $T/dlprog $S/dlprog.c -ldl || exit 2

# each foo by its size: "foo/0xSIZE"
size_of() { printf 'foo/%#x' "0x$(nm -S "$1" | awk '$4 == "foo" { print $2 }')"; }
FOO1=$(size_of $T/libone.so)
FOO2=$(size_of $T/libtwo.so)
if [ "$FOO1" = "$FOO2" ]; then
	echo "SKIP dlopen_names: the two foo functions have one size here"
	exit 0
fi

# "entry FUNC" (foo with its size) and "exit CALLER <- FUNC", a line each
calls() {
	sed -n 's/.*: \([a-z_]*_\)\{0,1\}\(entry\|exit\): (\(.*\))$/\2 \3/p' |
		sed -E 's/^entry foo\+0x0(\/0x[0-9a-f]+)$/entry foo\1/
			s/^entry ([a-z_]+)\+0x0\/0x[0-9a-f]+$/entry \1/
			s/^exit ([a-z_]+)\+0x[0-9a-f]+\/0x[0-9a-f]+ /exit \1 /
			s/^exit 0x[0-9a-f]+ /exit ? /'
}
run() {	# name expected args
	local name=$1 want=$2
	shift 2
	timeout 60 $F trace -e 'f *' -e 'f *%return' -o $T/t.txt -- $T/dlprog $T "$@" \
		> /dev/null 2>$T/err
	check trace_$name eq "$?:$(calls < $T/t.txt)" "0:$want"
	timeout 60 $F record -o $T/r.rec -- $T/dlprog $T "$@" > /dev/null 2>$T/err
	check record_$name eq "$?:$($F replay $T/r.rec | calls)" "0:$want"
}

one="entry call
entry lib_a
entry $FOO1
exit lib_a <- foo
exit call <- lib_a
exit main <- call"
two="entry call
entry lib_b
entry $FOO2
exit lib_b <- foo
exit call <- lib_b
exit main <- call"
lib="entry lib
exit main <- lib"
run both "entry main
$lib
$lib
$two
$one
exit ? <- main" both

# untraced, the loader gives the second library the first one's addresses
$T/dlprog $T reuse > $T/out || exit 2
page() { awk -v f=$1 '$1 == f { print substr($2, 1, length($2) - 3); exit }' $T/out; }
if [ "$(page lib_a)" != "$(page lib_b)" ]; then
	echo "SKIP dlopen_names/reuse: the loader did not reuse the addresses here"
	exit 0
fi
run reuse "entry main
$lib
$one
$lib
$two
$lib
$one
exit ? <- main" reuse
exit 0
