#!/bin/bash
# Children's call trees have no gap: a forked child's frames inherited
# from its parent (main, the function that called fork()) are the roots of
# its tree, so a return from main in the child is main's exit, a child
# that exits at once keeps its calls, daemon()'s child is traced through
# its return from main, and an exec'd image (after fork or vfork) is a tree
# of its own.  In `fhook trace` and in `fhook record` + `fhook replay`,
# as call graphs: per thread, lowest id (the parent) first.
set -o pipefail
cd "${FHOOK_ROOT:-$(dirname "$0")/../..}" || exit 2
F=$PWD/build/fhook
S=$PWD/tests/events/fork
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
CHECK_PREFIX=fork_tree
. tests/check.sh

for p in fork_ret fork_exec daemon_prog; do
	gcc -O1 $($F cflags) -o $T/$p $S/$p.c || exit 2
done
# -O0: gcc may drop a malloc() whose block is only freed
gcc -O0 $($F cflags) -o $T/fork_malloc $S/fork_malloc.c || exit 2

. tests/events/graph_threads.sh

# run NAME EXPECTED PROG ARGS: both ways, the same graph
run() {
	local name=$1 want=$2 out
	shift 2
	out=$(cd $T && timeout 60 $F trace -e 'f *' -e 'f *%return' --format graph -o $T/t.txt \
		-- "$@" 2>&1) || { check trace_$name eq "status $?: $out" ""; return; }
	# daemon()'s child may outlive the command by a moment: its end is in the file
	check trace_$name eq "$(threads < $T/t.txt)" "$want"
	out=$(cd $T && timeout 60 $F record -o $T/r.rec -- "$@" 2>&1) ||
		{ check record_$name eq "status $?: $out" ""; return; }
	check record_$name eq "$($F replay --format graph $T/r.rec | threads)" "$want"
}

run return_from_main "-- thread 1
main() {
  spawn();
  mid() {
    leaf();
  } /* mid */
} /* main */
-- thread 2
main() {
  spawn();
  mid() {
    leaf();
  } /* mid */
} /* main */" $T/fork_ret

for end in exit _exit abort; do
	run malloc_$end "-- thread 1
main();
-- thread 2
main() {
  malloc();
  free();
} /* main (unfinished) */" $T/fork_malloc $end
done

run daemon "-- thread 1
main() {
} /* main (unfinished) */
-- thread 2
main() {
  leaf();
} /* main */" $T/daemon_prog

for how in fork vfork; do
	run exec_$how "-- thread 1
main() {
  mid() {
    leaf();
  } /* mid */
} /* main */
-- thread 2
main() {
  mid() {
    leaf();
  } /* mid */
} /* main */" $T/fork_exec $how
done
exit 0
