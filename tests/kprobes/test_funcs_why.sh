#!/bin/bash
# fhook funcs --why: the method each function of an object would get, and
# why not a jump, read from the file (the hand-written functions of
# kp_funcs.S in test_kprobes, whose methods test_kprobes checks live).
set -o pipefail
cd "$(dirname "$0")/../.." || exit 2
CHECK_PREFIX=funcs_why
. tests/check.sh
B=${FHOOK_BUILD:-build}
PROG=$B/tests/kprobes/test_kprobes

out=$($B/fhook funcs --why $PROG 2>&1)
check exit_status test $? = 0
got=$(grep -E '^(kp_|probe_one )' <<< "$out" | sort)
want=$(sort <<'EOF2'
kp_after jump
kp_c_func site
kp_call_first jump
kp_endbr jump
kp_five jump
kp_helper trap: 4 bytes from the probe to the end of the function: shorter than a jump
kp_back_call trap: a jl at +0xc jumps back into the bytes replaced
kp_jcc_back jump
kp_leaf jump
kp_loop_entered trap: a branch from outside enters the loop at the start
kp_post_call jump
kp_post_jcc jump
kp_post_callmem jump
kp_post_jmpind jump
kp_post_popf jump
kp_post_pushf jump
kp_post_rep jump
kp_post_ret trap: 4 bytes from the probe to the end of the function: shorter than a jump
kp_push jump
kp_rec jump
kp_ret7 jump
kp_riprel jump
kp_short_pad jump
kp_switch jump
kp_switch_in trap: a jump table leads into the bytes replaced
kp_tail jump
kp_tail0 jump
kp_two trap: 2 bytes from the probe to the end of the function: shorter than a jump
probe_one site
EOF2
)
check methods_and_reasons eq "$got" "$want"
# (the C run-time's start-up code, 7 functions, is left out: it is not the program's)
check summary grep -q '^# [0-9]* functions: [0-9]* jump ([0-9.]*%), [0-9]* trap, [0-9]* site, 0 none, 7 skipped$' <<< "$out"

# a stripped program with nothing exported: said, and a failure
out=$(strip -o $B/tests/kprobes/stripped $PROG --strip-all 2>&1 && $B/fhook funcs --why $B/tests/kprobes/stripped 2>&1)
status=$?
rm -f $B/tests/kprobes/stripped
check stripped eq "$out" "fhook: funcs: $B/tests/kprobes/stripped is stripped: no function in .symtab or .dynsym to probe"
check stripped_status test $status = 1
out=$($B/fhook funcs --why /etc/passwd 2>&1)
check not_elf eq "$out" "fhook: funcs: /etc/passwd: not an x86-64 ELF executable or shared object"
