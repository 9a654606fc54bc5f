#!/bin/bash
# A program built without fhook's flags, recorded without -e: every
# function of its executable through kprobes, said once, and the call tree
# the same, call for call, as the same program's built with sites:
# exceptions, longjmp, a thread, a forked child (the frames it inherits).
# In `fhook record` + replay and in `fhook trace`; --dry-run lists the
# definitions; a stripped program says what to do instead; a library's
# glob follows the library through dlclose and a second dlopen; -p on a
# running process; the C run-time's start-up code and GCC's cold parts
# are left out, and `fhook funcs --why` says why; a return probe on a
# cold part alone is refused.
set -o pipefail
cd "${FHOOK_ROOT:-$(dirname "$0")/../..}" || exit 2
F=$PWD/build/fhook
S=$PWD/tests/events/kpwhole
T=$(mktemp -d)
LP=
trap '[ -n "$LP" ] && kill $LP 2>/dev/null; rm -rf "$T"' EXIT
CHECK_PREFIX=whole_kprobes
. tests/check.sh

g++ -O2 -o $T/plain $S/whole.cc -pthread || exit 2
g++ -O2 $($F cflags) -o $T/site $S/whole.cc -pthread || exit 2
strip -o $T/stripped $T/plain || exit 2
gcc -O2 -o $T/dl $S/dl.c || exit 2
gcc -O2 -shared -fPIC -o $T/kpw_lib.so $S/dl_lib.c || exit 2
gcc -O2 -o $T/loop $S/loop.c || exit 2

. tests/events/graph_threads.sh

want="-- thread 1
main() {
  catcher() {
    middle() {
      leaf();
      thrower() {
      } /* unwound: thrower */
    } /* unwound: middle */
    leaf();
  } /* catcher */
  catcher() {
    middle() {
      leaf();
      thrower() {
        leaf();
      } /* thrower */
    } /* middle */
  } /* catcher */
  jtop() {
    jdeep() {
      jumper() {
        leaf();
      } /* unwound: jumper */
    } /* unwound: jdeep */
    leaf();
  } /* jtop */
} /* main */
-- thread 2
worker() {
  catcher() {
    middle() {
      leaf();
      thrower() {
      } /* unwound: thrower */
    } /* unwound: middle */
    leaf();
  } /* catcher */
} /* worker */
-- thread 3
main() {
  child_work() {
    leaf();
    leaf();
  } /* child_work */
} /* main (unfinished) */"

for p in site plain; do
	out=$(cd $T && timeout 60 $F record -o $T/$p.rec -- ./$p 2> $T/$p.err)
	check record_${p}_status eq "$?: $out" "0: done"
	check record_${p}_tree eq "$($F replay --format graph $T/$p.rec | threads)" "$want"
	out=$(cd $T && timeout 60 $F trace --format graph -o $T/$p.txt -- ./$p 2> /dev/null)
	check trace_${p}_status eq "$?: $out" "0: done"
	check trace_${p}_tree eq "$(threads < $T/$p.txt)" "$want"
done
check said_once eq "$(grep -c 'through kprobes' $T/plain.err)" 1
check said_what eq "$(head -1 $T/plain.err)" \
	"fhook: record: ./plain has no patchable sites: recording its 10 functions through kprobes (a library's too: -e 'p *' -e 'r *' -e 'p LIB:*' -e 'r LIB:*')"
check site_says_nothing eq "$(grep -c 'kprobes' $T/site.err)" 0
check record_no_miss grep -q '^fhook: record: 51 events, 0 nmissed, 0 lost' $T/plain.err

check dry_run eq "$(cd $T && $F record --dry-run -- ./plain 2>&1)" \
"p:fhook/kentry plain:*
r:fhook/kexit plain:*"

# what a glob leaves out of the program, and why
why=$($F funcs --why $T/plain '*')
check why_crt eq "$(grep "start-up code" <<< "$why" | sed 's/ .*//' | sort | tr '\n' ' ')" \
	"__do_global_dtors_aux _fini _init _start deregister_tm_clones frame_dummy register_tm_clones "
check why_crt_reason grep -qx "_start skipped: the C run-time's start-up code (crt\*.o), not the program's" <<< "$why"
check why_cold eq "$(grep -c "\.cold skipped: the cold part of a function, entered by a jump from it: not a call's entry" <<< "$why")" 2

# a return probe on a cold part, named alone: refused, the program runs
out=$(cd $T && timeout 60 $F trace -o $T/cold.txt -e 'r catcher.cold' -- ./plain 2> $T/cold.err)
check cold_refused eq "$?: $out: $(head -1 $T/cold.err)" "1: done: fhook: trace: cannot probe catcher.cold+0: the cold part of a function, entered by a jump from it: no return of its own to probe"

# stripped: nothing to name; what to do instead
out=$(cd $T && timeout 60 $F record -o $T/s.rec -- ./stripped 2> $T/s.err)
check stripped_status eq "$?: $out" "1: done"
check stripped_says grep -qF "fhook: record: no events: ./stripped has no patchable sites and is stripped (no function symbol for a kprobe to name), nor had the programs it started sites; probe its libraries' functions (-e 'p LIB:*' -e 'r LIB:*')" $T/s.err

# a library's glob: placed at each dlopen, gone at dlclose, placed again
out=$(cd $T && timeout 60 $F record -o $T/dl.rec -e 'p *' -e 'r *' -e 'p kpw_lib.so:*' \
	-e 'r kpw_lib.so:*' -- ./dl $T/kpw_lib.so 2> $T/dl.err)
check dlopen_status eq "$?: $out" "0: 3 5"
check dlopen_tree eq "$($F replay --format graph $T/dl.rec | threads)" "-- thread 1
main() {
  call_lib() {
    kpw_lib_fn() {
      kpw_lib_inner();
    } /* kpw_lib_fn */
  } /* call_lib */
  call_lib() {
    kpw_lib_fn() {
      kpw_lib_inner();
    } /* kpw_lib_fn */
  } /* call_lib */
} /* main */"

# a running process: its functions from the attach on
$T/loop &
LP=$!
sleep 0.5
out=$(timeout 60 $F record -p $LP --duration 0.3 -o $T/p.rec 2>&1)
check attach_status eq "$?" 0
check attach_said grep -qF "$T/loop has no patchable sites: recording its 3 functions through kprobes" <<< "$out"
# (the returns are placed first: a call in flight then has an exit without an entry)
check attach_tree eq "$($F replay --format graph $T/p.rec | threads |
	awk '/^tick\(\) \{$/ { on = 1 } on' | head -3)" "tick() {
  tock();
} /* tick */"
kill $LP 2>/dev/null
wait $LP 2>/dev/null
LP=
exit 0
