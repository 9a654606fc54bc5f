#!/bin/bash
# fhook inject and fhook patch on a program built without fhook's flags:
# the target has no site, so a kprobe on its entry redirects (or returns
# the value at once), with the same caller ranges, fault attributes and
# summary as on a site.  The program's own sums and counts prove which
# calls ran what.  Then fhook inject -p on a running program without
# sites, and fhook unpatch.
set -o pipefail
. "${FHOOK_ROOT:-$(dirname "$0")/../..}/tests/events/kp_setup.sh" kprobe_patch kp_repl.so kp_loop

# untouched: kp_add(i, 10i) for i < 3 is 33, kp_asm(i, 100) 306, kp_name 5
check plain eq "$("$PROG" 3)" "kp_add 3 kp_asm 3 kp_name 1 sum 344"

# every call returns 7 without running: 21 + 306 + 5
timeout 60 "$FHOOK" inject --func kp_add --retval 7 -- "$PROG" 3 > "$T/out" 2> "$T/err"
check inject_status eq "$?" 0
check inject_result eq "$(cat "$T/out")" "kp_add 0 kp_asm 3 kp_name 1 sum 332"
check inject_summary eq "$(cat "$T/err")" "fhook inject: kp_add: 3 calls seen, 3 failed
  caller                                 seen     failed
  (all callers)                             3          3"

# --times 2 from main: the third call runs (i = 2: 22)
timeout 60 "$FHOOK" inject --func kp_add --retval 7 --caller main --times 2 -- "$PROG" 3 \
	> "$T/out" 2> "$T/err"
check inject_times eq "$(cat "$T/out")" "kp_add 1 kp_asm 3 kp_name 1 sum 347"
check inject_times_summary eq "$(sed -n 3p "$T/err")" \
	"  main                                      3          2"

# a caller that never calls it: nothing changes
timeout 60 "$FHOOK" inject --func kp_add --retval 7 --caller kp_name -- "$PROG" 3 \
	> "$T/out" 2> "$T/err"
check inject_other_caller eq "$(cat "$T/out")" "kp_add 3 kp_asm 3 kp_name 1 sum 344"

# a negative value, as an errno
timeout 60 "$FHOOK" inject --func kp_name --retval -12 -- "$PROG" 0 > "$T/out" 2> "$T/err"
check inject_negative eq "$(cat "$T/out")" "kp_add 0 kp_asm 0 kp_name 0 sum -12"

# redirected to kp_add_v2 (1000a + b): 0 + 1010 + 2020 + 306 + 5
timeout 60 "$FHOOK" patch --func kp_add --with "$PWD/$D/kp_repl.so:kp_add_v2" -- "$PROG" 3 \
	> "$T/out" 2> "$T/err"
check patch_status eq "$?" 0
check patch_result eq "$(cat "$T/out")" "kp_add 0 kp_asm 3 kp_name 1 sum 3341"
check patch_summary eq "$(cat "$T/err")" "fhook patch: kp_add: 3 calls seen, 3 redirected
  caller                                 seen redirected
  (all callers)                             3          3"

# an unknown function: refused before the program runs
timeout 60 "$FHOOK" inject --func kp_nosuch --retval 1 -- "$PROG" 3 > "$T/out" 2> "$T/err"
check unknown_status eq "$?" 125
check unknown_not_run eq "$(cat "$T/out")" ""
check unknown_message grep -q "no function named 'kp_nosuch'" "$T/err"

# ---- attached to a running program without sites: inject, then unpatch
mkfifo "$T/in"
"$D/kp_loop" < "$T/in" > "$T/loop" &
pid=$!
exec 3> "$T/in"
# LINES: wait (bounded) until the program has printed that many lines
lines() {
	local i
	for i in $(seq 1 200); do
		[ "$(wc -l < "$T/loop")" -ge "$1" ] && return 0
		sleep 0.05
	done
	return 1
}
echo one >&3
lines 1
timeout 60 "$FHOOK" inject -p $pid --func kp_add --retval 7 > "$T/out" 2> "$T/err"
check attach_inject_status eq "$?: $(cat "$T/err")" \
	"0: fhook: inject: 'kp_add' applied in process $pid; \`fhook unpatch -p $pid kp_add\` removes it"
# a second redirect of the same entry: refused, as on a site (one IPMODIFY user)
timeout 60 "$FHOOK" inject -p $pid --name again --func kp_add --retval 9 > "$T/out" 2> "$T/err"
check attach_second_refused eq "$?: $(cat "$T/err")" \
	"1: fhook: inject: 'kp_add' is already redirected by another IPMODIFY user (another patch or fault injection); nothing changed
fhook: inject: nothing was changed in process $pid"
echo two >&3
lines 2
timeout 60 "$FHOOK" unpatch -p $pid kp_add > "$T/out" 2> "$T/err"
check attach_unpatch_status eq "$?" 0
echo three >&3
exec 3>&-
wait $pid
check attach_results eq "$(cat "$T/loop")" "3
7
3"
