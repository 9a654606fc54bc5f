#!/bin/bash
# Calls and includes go one way down the layers (scripts/check-layers.sh).
# The check's exit status is this script's: run.sh fails one that stops
# (or crashes) without a FAIL line.
set -o pipefail
cd "$(dirname "$0")/../.." || exit 2
B=${FHOOK_BUILD:-build}
bash scripts/check-layers.sh "$B"
st=$?

# The check itself can fail: a tree with one include and one call upward.
T=$(mktemp -d)
trap 'rm -rf $T' EXIT
mkdir -p $T/tree
cp -r lib cli include scripts $T/tree/
echo '#include "core/core.h"' >> $T/tree/lib/arch/x86_64/insn.c
out=$(FHOOK_LAYERS_TREE=$T/tree FHOOK_LAYERS_OBJS=none bash scripts/check-layers.sh 2>&1)
grep -q '^FAIL layers_include: lib/arch/x86_64/insn.c includes lib/core/core.h' <<< "$out" &&
	echo "PASS layers_upward_include_caught" ||
	echo "FAIL layers_upward_include_caught: $out"
mkdir -p $T/b/lib/arch/x $T/b/lib/kallsyms
echo 'int fhook_object_of(void) { return 0; }' > $T/k.c
echo 'int fhook_object_of(void); int up(void) { return fhook_object_of(); }' > $T/a.c
cc -c -o $T/b/lib/kallsyms/k.o $T/k.c && cc -c -o $T/b/lib/arch/x/a.o $T/a.c
out=$(cd $T/b && FHOOK_LAYERS_TREE=$PWD FHOOK_LAYERS_OBJS="$T/b/lib/arch/x/a.o $T/b/lib/kallsyms/k.o" \
	bash "$OLDPWD/scripts/check-layers.sh" "$T/b" 2>&1)
grep -q '^FAIL layers_symbol: lib/arch/x/a.o uses fhook_object_of of lib/kallsyms' <<< "$out" &&
	echo "PASS layers_upward_call_caught" ||
	echo "FAIL layers_upward_call_caught: $out"
# an interposed libc name (core's sigaction) is libc's to core and above,
# an upward call from arch
mkdir -p $T/c/lib/arch/x $T/c/lib/core $T/c/lib/kprobes
cp lib/libfhook.map $T/c/lib/
echo 'int sigaction(void) { return 0; }' > $T/s.c
echo 'int sigaction(void); int use(void) { return sigaction(); }' > $T/u.c
cc -c -o $T/c/lib/core/s.o $T/s.c && cc -c -o $T/c/lib/arch/x/u.o $T/u.c &&
	cc -c -o $T/c/lib/kprobes/u.o $T/u.c
out=$(cd $T/c && FHOOK_LAYERS_TREE=$PWD \
	FHOOK_LAYERS_OBJS="$T/c/lib/arch/x/u.o $T/c/lib/core/s.o $T/c/lib/kprobes/u.o" \
	bash "$OLDPWD/scripts/check-layers.sh" "$T/c" 2>&1)
[ "$(grep '^FAIL' <<< "$out")" = "FAIL layers_symbol: lib/arch/x/u.o uses sigaction of lib/core (arch may not call core)" ] &&
	echo "PASS layers_interposer_below_core_caught" ||
	echo "FAIL layers_interposer_below_core_caught: $out"
exit $st
