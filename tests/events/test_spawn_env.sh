#!/bin/bash
# Children started with an empty environment stay traced: a program starts
# three generations of itself with posix_spawn, then with execve, then
# seven with every interposed call in turn (posix_spawn, posix_spawnp,
# execve, execvpe, execle, fexecve, execveat), each passing an empty
# environment; under `fhook trace` every generation's event appears.  With
# --no-follow only the first one's does.
set -o pipefail
cd "${FHOOK_ROOT:-$(dirname "$0")/../..}" || exit 2
B=${FHOOK_BUILD:-build}
FHOOK=${FHOOK_CLI:-$B/fhook}
PROG=$B/tests/events/spawn_env_prog
[ -x "$PROG" ] || make -s "$PROG" >/dev/null 2>&1
if [ ! -x "$FHOOK" ] || [ ! -x "$PROG" ]; then
	echo "SKIP spawn_env: $FHOOK or $PROG not built"
	exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The generations whose event was recorded, in order: "0 1 2 3".
generations() {
	grep -o 'generation_mark+0x0/[0-9a-fx]*) gen=[0-9]*' "$1" | sed 's/.*gen=//' | sort -n |
		tr '\n' ' ' | sed 's/ $//'
}

# run NAME EXPECTED "TRACE OPTIONS" PROGRAM-ARGS...
run() {
	local name=$1 want=$2 opts=$3 st got
	shift 3
	# shellcheck disable=SC2086
	timeout 60 "$FHOOK" trace $opts -e 'f generation_mark $arg1' -o "$tmp/$name" -- \
		"$PROG" "$@" > "$tmp/$name.out" 2> "$tmp/$name.err"
	st=$?
	got=$(generations "$tmp/$name")
	if [ $st != 0 ]; then
		echo "FAIL spawn_env/$name: status $st: $(head -3 "$tmp/$name.err")"
	elif [ "$got" != "$want" ]; then
		echo "FAIL spawn_env/$name: generations traced \"$got\", expected \"$want\""
	elif ! grep -q ' 0 nmissed' "$tmp/$name.err"; then
		echo "FAIL spawn_env/$name: $(tail -1 "$tmp/$name.err")"
	else
		echo "PASS spawn_env/$name"
	fi
}

run posix_spawn "0 1 2 3" "" posix_spawn 0 3
run execve "0 1 2 3" "" execve 0 3
run every_call "0 1 2 3 4 5 6 7" "" all 0 7
run no_follow "0" "--no-follow" posix_spawn 0 3
run no_follow_execve "0" "--no-follow" execve 0 3
