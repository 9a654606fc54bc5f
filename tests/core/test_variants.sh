#!/bin/bash
# Build tests/core/variant.c with every kind of patchable site and run it.
# A variant that crashes or exits non-zero without a FAIL line fails.
set -o pipefail
cd "$FHOOK_ROOT" || exit 2
B=build/tests/core/variants
mkdir -p $B
INC="-Iinclude -g -O2"
LINK="-Lbuild -lfhook -Wl,-rpath,$FHOOK_ROOT/build"
FHOOK=build/fhook

build() {	# name, compiler, compile flags, link flags
	local name=$1 cc=$2 cflags=$3 ldflags=$4
	if ! command -v "$cc" >/dev/null; then
		echo "SKIP ${name}: $cc is not installed"
		return 1
	fi
	if ! $cc $INC $cflags -c -o $B/$name.o tests/core/variant.c 2>$B/$name.err ||
	   ! $cc $ldflags -o $B/$name $B/$name.o $LINK 2>>$B/$name.err; then
		echo "FAIL ${name}_build: $(head -3 $B/$name.err | tr '\n' ' ')"
		return 1
	fi
}

run() {
	local out st
	out=$(./$B/$1 "$1" 2>&1)
	st=$?
	printf '%s\n' "$out"
	if [ $st != 0 ] && ! grep -q '^FAIL ' <<< "$out"; then
		echo "FAIL ${1}_exit: exit status $st"
	fi
}

build gcc_patchable gcc "$($FHOOK cflags)" "" && run gcc_patchable
build gcc_endbr gcc "$($FHOOK cflags) -fcf-protection=full" "" && run gcc_endbr
build gcc_O0 gcc "$($FHOOK cflags) -O0" "" && run gcc_O0
build gcc_mcount_pie gcc "-pg -mfentry -mrecord-mcount -fPIE" "-pie" && run gcc_mcount_pie
build gcc_mcount_nopie gcc "-pg -mfentry -mrecord-mcount -fno-pie" "-no-pie" && run gcc_mcount_nopie
build clang_patchable clang "$($FHOOK cflags)" "" && run clang_patchable
build clang_endbr clang "$($FHOOK cflags) -fcf-protection=full" "" && run clang_endbr

# a file prepared on disk needs no write at start-up
if build gcc_prepared gcc "$($FHOOK cflags)" ""; then
	if $FHOOK prepare $B/gcc_prepared >/dev/null; then
		echo "PASS prepare_ok"
	else
		echo "FAIL prepare_ok: fhook prepare failed"
	fi
	run gcc_prepared
	b=$(objdump -d --no-show-raw-insn $B/gcc_prepared | grep -A1 '<v_add>:' | tail -1)
	case "$b" in
	*nopl*) echo "PASS prepared_file_has_nop5" ;;
	*) echo "FAIL prepared_file_has_nop5: $b" ;;
	esac
fi
exit 0
