#!/bin/bash
# The fhook command: cflags, funcs, prepare, and its errors.  A refusal is
# an exit status from 1 to 127: a crash (128 and more) is no refusal.
set -o pipefail
cd "$FHOOK_ROOT" || exit 2
F=$FHOOK_ROOT/build/fhook
T=$(mktemp -d)
trap 'rm -rf $T' EXIT

check() {	# name, condition (as a command), message
	local name=$1; shift
	if "$@"; then echo "PASS $name"; else echo "FAIL $name: $*"; fi
}
refused() { [ "$1" -ne 0 ] && [ "$1" -lt 128 ]; }
eq() { [ "$1" = "$2" ] || { echo "  got:      $(printf %q "$1")"; echo "  expected: $(printf %q "$2")"; return 1; }; }

# the pad, and GCC's assembler front end (beside the command in the build tree)
check cflags_exact eq "$($F cflags)" "-fpatchable-function-entry=5 -B$FHOOK_ROOT/build/gcc-as/"
gcc -O2 $($F cflags) -o $T/prog tests/cli/prog.c
gcc -O2 -o $T/plain tests/cli/prog.c
out=$($T/prog); st=$?
check prog_runs eq "$out, exit $st" "1, exit 0"

out=$($F funcs $T/prog); st=$?
check funcs_exit eq "$st" 0
check funcs_names eq "$(sort <<< "$out")" "$(printf 'alpha\nbeta\ngamma_\nmain')"
out=$($F funcs --verbose $T/prog); st=$?
check funcs_verbose_exit eq "$st" 0
check funcs_verbose bash -c "grep -Eq '^[0-9a-f]{16} +[0-9]+ alpha$' <<< '$out'"
check funcs_leaves_program eq "$(md5sum < $T/prog)" "$(gcc -O2 $($F cflags) -o $T/prog2 tests/cli/prog.c && md5sum < $T/prog2)"

out=$($F funcs $T/plain 2>&1); st=$?
check funcs_uninstrumented_exit refused "$st"
check funcs_uninstrumented_msg bash -c "grep -q 'has no patchable sites' <<< '$out'"
echo "not an elf" > $T/text
out=$($F funcs $T/text 2>&1); st=$?
check funcs_not_elf test "$st" -ne 0 -a "$st" -lt 128 -a -n "$(grep 'not an x86-64 ELF' <<< "$out")"
out=$($F funcs $T/missing 2>&1); st=$?
check funcs_missing test "$st" -ne 0 -a "$st" -lt 128 -a -n "$(grep 'No such file' <<< "$out")"

cp $T/prog $T/p1
out=$($F prepare $T/p1); st=$?
check prepare_rewrites eq "$out, exit $st" "$T/p1: 4 sites, 4 rewritten, exit 0"
out=$($F prepare $T/p1); st=$?
check prepare_idempotent eq "$out, exit $st" "$T/p1: 4 sites, 0 rewritten, exit 0"
out=$($T/p1); st=$?
check prepared_runs eq "$out, exit $st" "1, exit 0"
check prepared_nop5 bash -c "objdump -d $T/p1 | grep -A1 '<alpha>:' | grep -q nopl"

# a site whose bytes are not a pad: refused, file unchanged
cp $T/prog $T/p2
addr=$(nm $T/p2 | awk '$3 == "alpha" { print $1 }')
off=
while read -r type foff vaddr paddr fsz rest; do
	[ "$type" = LOAD ] || continue
	a=$((16#$addr)); v=$((foff)); va=$((vaddr)); sz=$((fsz))
	if [ $a -ge $va ] && [ $a -lt $((va + sz)) ]; then off=$((a - va + v)); fi
done < <(readelf -lW $T/p2)
printf '\xcc' | dd of=$T/p2 bs=1 seek=$off conv=notrunc status=none
sum=$(md5sum < $T/p2)
out=$($F prepare $T/p2 2>&1); st=$?
check prepare_bad_site_exit refused "$st"
check prepare_bad_site_msg bash -c "grep -q 'site alpha+0x0/0x[0-9a-f]* .* holds cc:90:90:90:90, which is no known pad' <<< '$out'"
check prepare_bad_site_unchanged eq "$(md5sum < $T/p2)" "$sum"
out=$($F prepare $T/text 2>&1); st=$?
check prepare_not_elf test "$st" -ne 0 -a "$st" -lt 128 -a -n "$(grep 'not an x86-64 ELF' <<< "$out")"
out=$($F prepare $T/plain 2>&1); st=$?
check prepare_no_sites test "$st" -ne 0 -a "$st" -lt 128 -a -n "$(grep 'no patchable sites' <<< "$out")"

# stripped: sites but no names
cp $T/prog $T/stripped && strip $T/stripped
out=$($F funcs $T/stripped 2>&1); st=$?
check funcs_stripped test "$st" -ne 0 -a "$st" -lt 128 -a -n "$(grep '4 patchable sites but no symbols' <<< "$out")"
# static: nothing to preload into
if gcc -O2 -static $($F cflags) -o $T/static tests/cli/prog.c 2>/dev/null; then
	out=$($F trace -e 'f alpha' -- $T/static 2>&1); st=$?
	check static_refused test "$st" = 125 -a -n "$(grep 'is statically linked' <<< "$out")"
	check static_not_run test -z "$(grep -x 1 <<< "$out")"
else
	echo "SKIP static_refused: no static libc"
fi

$F frobnicate >/dev/null 2>&1; st=$?
check unknown_command eq "$st" 2
exit 0
