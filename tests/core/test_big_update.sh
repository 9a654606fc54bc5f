#!/bin/bash
# An update of more writes than one batch holds (32,768 a batch, written
# in several): a program with 34,000 functions, each with the compiler's
# 5-byte pad, every site enabled by one ops, then disabled, twice
# (tests/core/big_update.c checks the text and the hits).  The functions
# are written in assembly as GCC lays them out for
# -fpatchable-function-entry=5: compiling that many C functions takes
# minutes.
set -o pipefail
cd "${FHOOK_ROOT:-$(dirname "$0")/../..}" || exit 2
B=${FHOOK_BUILD:-build}
case $B in /*) ;; *) B=$PWD/$B ;; esac
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
N=34000

awk -v n=$N 'BEGIN {
	print "\t.text"
	for (i = 0; i < n; i++) {
		printf "\t.globl f%d\n\t.type f%d, @function\n\t.p2align 4\nf%d:\n", i, i, i
		printf ".Lpfe%d:\n\tnop\n\tnop\n\tnop\n\tnop\n\tnop\n", i
		printf "\tleal (%%rdi,%%rdi), %%eax\n\tret\n\t.size f%d, .-f%d\n", i, i
	}
	print "\t.section __patchable_function_entries,\"aw\",@progbits"
	print "\t.p2align 3"
	for (i = 0; i < n; i++)
		printf "\t.quad .Lpfe%d\n", i
	print "\t.section .data.rel.ro,\"aw\""
	print "\t.globl gen_tab\n\t.p2align 3\ngen_tab:"
	for (i = 0; i < n; i++)
		printf "\t.quad f%d\n", i
	print "\t.section .rodata\n\t.globl gen_n\n\t.p2align 2\ngen_n:"
	printf "\t.long %d\n", n
	print "\t.section .note.GNU-stack,\"\",@progbits"
}' > "$T/gen.s"
if ! cc -std=gnu11 -O2 -Wall -Iinclude -o "$T/big" tests/core/big_update.c "$T/gen.s" \
	-L"$B" -lfhook -Wl,-rpath,"$B"; then
	echo "FAIL big_update_build: cc failed"
	exit 1
fi
"$T/big"
