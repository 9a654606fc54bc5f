#!/bin/bash
# fhook patch / fhook inject on a program that knows nothing about fhook:
# redirect by caller, all callers, the tail-call warning, fault injection
# with exact counts, and bad input (clear message, non-zero exit, program
# not run, never half-patched).
ROOT=${FHOOK_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
FHOOK=$ROOT/build/fhook
P=$ROOT/build/tests/livepatch/lp_prog
R=$ROOT/build/tests/livepatch/lp_repl.so
for f in "$FHOOK" "$P" "$R"; do
	[ -e "$f" ] || { echo "FAIL cli_built: $f missing (make test builds it)"; exit 1; }
done
err=$(mktemp)
trap 'rm -f "$err"' EXIT

# check NAME EXPECTED-STATUS EXPECTED-STDOUT STDERR-REGEX -- command...
check() {
	local name=$1 want_status=$2 want_out=$3 want_err=$4 out status
	shift 5
	out=$(timeout 60 "$@" 2>"$err")
	status=$?
	if [ "$status" != "$want_status" ]; then
		echo "FAIL $name: status $status, expected $want_status; stderr: $(head -c 400 "$err")"
	elif [ "$out" != "$want_out" ]; then
		echo "FAIL $name: stdout '$out', expected '$want_out'"
	elif [ -n "$want_err" ] && ! grep -Eq -- "$want_err" "$err"; then
		echo "FAIL $name: stderr lacks /$want_err/: $(head -c 400 "$err")"
	else
		echo "PASS $name"
	fi
}

orig=$'a: hello\nb: hello\nc: hello\ntail: hello'

check patch_one_caller 0 $'a: patched(hello)\nb: hello\nc: hello\ntail: hello' \
	'greet_a +1 +1$' -- \
	"$FHOOK" patch --func greeting --with "$R:greeting_new" --caller greet_a -- "$P" greet
check patch_all_callers 0 \
	$'a: patched(hello)\nb: patched(hello)\nc: patched(hello)\ntail: patched(hello)' \
	'\(all callers\) +4 +4$' -- \
	"$FHOOK" patch --func greeting --with "$R:greeting_new" -- "$P" greet
check patch_tail_call_warning 0 "$orig" \
	"warning: caller 'tail_greet' reaches 'greeting' with a jump at tail_greet\+0x[0-9a-f]+ \(a tail call\)" -- \
	"$FHOOK" patch --func greeting --with "$R:greeting_new" --caller tail_greet -- "$P" greet
check patch_second_ipmodify_ebusy 0 \
	$'second apply: -16\na: patched(hello)\nb: hello\nc: hello\ntail: hello' \
	"'greeting' is already redirected by another IPMODIFY user" -- \
	"$FHOOK" patch --func greeting --with "$R:greeting_new" --caller greet_a -- "$P" second

# bad input: clear message, non-zero exit, program not run (so never half-patched:
# a second, unknown caller stops the whole patch)
check bad_unknown_target 125 "" "no function named 'no_such_fn'|lp_prog was not run" -- \
	"$FHOOK" patch --func no_such_fn --with "$R:greeting_new" -- "$P" greet
check bad_unknown_caller 125 "" "no function named 'no_such_caller'" -- \
	"$FHOOK" patch --func greeting --with "$R:greeting_new" --caller greet_a \
	--caller no_such_caller -- "$P" greet
check bad_missing_symbol 125 "" "lp_repl.so has no symbol 'nope'" -- \
	"$FHOOK" patch --func greeting --with "$R:nope" -- "$P" greet
# no site: a kprobe on its entry makes the call return the value
check inject_not_instrumented 0 "41" '\(all callers\) +1 +1$' -- \
	"$FHOOK" inject --func not_traceable --retval 41 -- "$P"
check bad_missing_library 2 "" "no-such-lib.so: No such file" -- \
	"$FHOOK" patch --func greeting --with "/no-such-lib.so:x" -- "$P" greet
check bad_with_syntax 2 "" "--with needs LIB.so:SYMBOL" -- \
	"$FHOOK" patch --func greeting --with "$R" -- "$P" greet
check bad_inject_probability 2 "" "bad --probability '101'" -- \
	"$FHOOK" inject --func do_open --retval -12 --probability 101 -- "$P" open 3
check bad_inject_unknown_caller 125 "" "no function named 'nobody'" -- \
	"$FHOOK" inject --func do_open --retval -12 --caller nobody -- "$P" open 3

# fault injection: the error path runs only for the named caller, exact counts
check inject_all_calls 0 $'config errors 5: 1 2 3 4 5\nlog errors 0' \
	'open_config +5 +5$' -- \
	"$FHOOK" inject --func do_open --retval -12 --caller open_config -- "$P" open 5
check inject_times 0 $'config errors 3: 1 2 3\nlog errors 0' \
	'do_open: 20 calls seen, 3 failed' -- \
	"$FHOOK" inject --func do_open --retval -12 --caller open_config --times 3 -- "$P" open 10
check inject_interval 0 $'config errors 3: 3 6 9\nlog errors 0' \
	'open_config +10 +3$' -- \
	"$FHOOK" inject --func do_open --retval -12 --caller open_config --interval 3 -- "$P" open 10
check inject_interval_times 0 $'config errors 2: 4 8\nlog errors 0' '' -- \
	"$FHOOK" inject --func do_open --retval -12 --caller open_config --interval 4 --times 2 \
	-- "$P" open 20
check inject_other_caller 0 $'config errors 0:\nlog errors 4' 'open_log +4 +4$' -- \
	"$FHOOK" inject --func do_open --retval -12 --caller open_log -- "$P" open 4

# probability with a fixed seed: the documented splitmix64 sequence
want=$(python3 - <<'PY'
M = (1 << 64) - 1
s, fails = 7, []
for k in range(1, 41):
    s = (s + 0x9e3779b97f4a7c15) & M
    z = s
    z = ((z ^ (z >> 30)) * 0xbf58476d1ce4e5b9) & M
    z = ((z ^ (z >> 27)) * 0x94d049bb133111eb) & M
    z ^= z >> 31
    if not (50 <= z % 100):
        fails.append(k)
print("config errors %d:%s" % (len(fails), "".join(" %d" % k for k in fails)))
PY
)
check inject_probability_seed 0 "$want"$'\nlog errors 0' '' -- \
	"$FHOOK" inject --func do_open --retval -12 --caller open_config --probability 50 \
	--seed 7 -- "$P" open 40
check inject_probability_0 0 $'config errors 0:\nlog errors 0' '' -- \
	"$FHOOK" inject --func do_open --retval -12 --probability 0 -- "$P" open 5

# the program's own exit status comes back; children are not patched again
check exit_status_passthrough 3 "" '' -- \
	"$FHOOK" patch --func greeting --with "$R:greeting_new" -- "$P" exit 3
check child_not_repatched 0 "$orig" '' -- \
	"$FHOOK" patch --func greeting --with "$R:greeting_new" --caller greet_a -- "$P" child
