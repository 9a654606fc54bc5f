#!/bin/bash
# A traced program that writes into the memory it shares with the fhook
# command (its header's layout words, random bytes, a ring's head) or tries
# to shrink it: under `record --`, `record -p` and `trace -p` the command
# never crashes, says which process damaged what, and its recording reads.
. "$(dirname "$0")/lib.sh"
H=$ROOT/build/tests/attach/att_hostile
[ -x "$H" ] || { echo "FAIL hostile_built: $H missing"; exit 1; }
SEEDS=${FHOOK_HOSTILE_SEEDS:-8}

# ok_run NAME RC ERRFILE: the command ended by itself (no signal, no sanitizer report)
ok_run() {
	if [ "$2" -ge 128 ]; then
		echo "FAIL $1: fhook ended with status $2: $(tail -3 "$3" | tr '\n' ' ')"
		return 1
	fi
	if grep -q 'AddressSanitizer\|runtime error:' "$3"; then
		echo "FAIL $1: sanitizer: $(grep -m1 'ERROR\|runtime error' "$3")"
		return 1
	fi
	return 0
}

# under `fhook record --`: the program is started by the command
run_started() {
	local mode=$1 seed=$2 name="record_${1}_$2" rc
	timeout -k 5 60 "$FHOOK" record -o "$TMP/s.rec" -- "$H" "$mode" "$seed" \
		> "$TMP/out" 2> "$TMP/err"
	rc=$?
	ok_run "$name" "$rc" "$TMP/err" || return 1
	if ! grep -q '^done$' "$TMP/out" || ! grep -q '^fhook: record: [0-9]* events' "$TMP/err"; then
		echo "FAIL $name: no end: $(tr '\n' ' ' < "$TMP/out") $(tr '\n' ' ' < "$TMP/err")"
		return 1
	fi
	if ! timeout 60 "$FHOOK" replay "$TMP/s.rec" > /dev/null 2> "$TMP/rerr"; then
		grep -q 'damaged\|cut short\|not a recording' "$TMP/rerr" || {
			echo "FAIL $name: replay: $(head -3 "$TMP/rerr" | tr '\n' ' ')"
			return 1
		}
	fi
	return 0
}

# under `fhook CMD -p`: the program runs first, the command attaches
run_attached() {
	local cmd=$1 mode=$2 seed=$3 name="${1}_p_${2}_$3" rc i
	: > "$TMP/out"
	setsid "$H" "$mode" "$seed" > "$TMP/out" 2>&1 &
	local hp=$!
	PIDS+=("$hp")
	for i in $(seq 100); do
		grep -q '^ready' "$TMP/out" && break
		sleep 0.02
	done
	timeout -k 5 60 "$FHOOK" "$cmd" -p "$hp" -e 'f work' -e 'f work%return' \
		-o "$TMP/p.out" > /dev/null 2> "$TMP/err"
	rc=$?
	wait "$hp" 2>/dev/null
	ok_run "$name" "$rc" "$TMP/err" || return 1
	if ! grep -q '^done$' "$TMP/out"; then
		echo "FAIL $name: the program did not finish: $(tr '\n' ' ' < "$TMP/out")"
		return 1
	fi
	return 0
}

# the layout words and the shrink: each case once, with an exact answer
run_started header 1 && echo "PASS record_header_rewritten"
run_started truncate 1 && {
	expect record_truncate_refused "$(grep '^truncate' "$TMP/out")" \
		"truncate: Operation not permitted"
}
run_started head 1 && {
	expect record_head_backwards_named \
		"$(grep -c "process [0-9]* (att_hostile) damaged the memory it shares" "$TMP/err")" 1
}
for cmd in record trace; do
	run_attached "$cmd" header 1 && echo "PASS ${cmd}_p_header_rewritten"
	run_attached "$cmd" truncate 1 && {
		expect "${cmd}_p_truncate_refused" "$(grep '^truncate' "$TMP/out")" \
			"truncate: Operation not permitted"
	}
	run_attached "$cmd" head 1 && {
		expect "${cmd}_p_head_backwards_named" \
			"$(grep -c "process [0-9]* (att_hostile) damaged the memory" "$TMP/err")" 1
	}
done

# random stores: every run must end cleanly
ok=0
for seed in $(seq "$SEEDS"); do
	run_started scribble "$seed" && ok=$((ok + 1))
done
expect "record_scribbled_${SEEDS}_seeds" "$ok" "$SEEDS"
for cmd in record trace; do
	ok=0
	for seed in $(seq "$SEEDS"); do
		run_attached "$cmd" scribble "$seed" && ok=$((ok + 1))
	done
	expect "${cmd}_p_scribbled_${SEEDS}_seeds" "$ok" "$SEEDS"
done
