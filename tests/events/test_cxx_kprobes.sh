#!/bin/bash
# C++ names in kprobe events and C++ globs with $arg*, on a program built
# without fhook's flags: `p geo::*` becomes one probe per function (the
# traced process cannot demangle, so the command resolves each name to its
# symbol), each named by its name and parameters, with its own DWARF
# arguments; a name of several overloads is the kernel's "The symbol is
# not unique" and the command lists them; void functions lose $retval;
# fprobe globs of C++ names with $arg* on the same program built with
# sites; record + replay the same; and a whole C++ program without sites,
# exceptions thrown through it, recorded through kprobes with the call
# tree its sited build gives.  Exact lines throughout.
set -o pipefail
cd "${FHOOK_ROOT:-$(dirname "$0")/../..}" || exit 2
F=${FHOOK_CLI:-$PWD/${FHOOK_BUILD:-build}/fhook}
# the compilers of the machine the programs run on (scripts/test-aarch64.sh: cross)
CC=${FHOOK_TEST_CC:-gcc} CXX=${FHOOK_TEST_CXX:-g++}
SRC=$PWD/tests/events/cxx_kp.cc
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
CHECK_PREFIX=cxx_kprobes
. tests/check.sh

# times, tids, cpus, code offsets and object addresses vary
normalize() {
	sed -E -e 's/^ *([a-z_]+)-[0-9]+ +\[[0-9]{3}\] +[0-9]+\.[0-9]{6}:/\1:/' \
	    -e 's/main\+0x[0-9a-f]+\/0x[0-9a-f]+/main+OFF/' \
	    -e 's/\+0x0\/0x[0-9a-f]+\)/+0x0)/' \
	    -e 's/this=0x[0-9a-f]+/this=ADDR/g'
}

"$CXX" -g -O1 -o "$T/kp" "$SRC" || exit 2
"$CXX" -g -O1 $("$F" cflags) -o "$T/kps" "$SRC" || exit 2

EVENTS=(-e 'p geo::* $arg*' -e 'r geo::* $retval')

# ---- one definition per function, named by its name and parameters
check dry_run eq "$("$F" trace --dry-run "${EVENTS[@]}" -- "$T/kp" 2>/dev/null | sort)" \
"$(printf '%s\n' \
'p:kprobes/p_geo__scale_double_int__0 geo::scale(double,int) v=v k=k' \
'p:kprobes/p_geo__scale_long_int__0 geo::scale(long,int) v=v k=k' \
'p:kprobes/p_geo__Rect__area__const_0 geo::Rect::area()const this=this' \
'p:kprobes/p_geo__Rect__grow_double__0 geo::Rect::grow(double) this=this by=by' \
'p:kprobes/p_geo__Box_int___get__const_0 geo::Box<int>::get()const this=this' \
'p:kprobes/p_geo__Box_long___get__const_0 geo::Box<long>::get()const this=this' \
'r:kprobes/r_geo__scale_double_int__0 geo::scale(double,int) arg1=$retval' \
'r:kprobes/r_geo__scale_long_int__0 geo::scale(long,int) arg1=$retval' \
'r:kprobes/r_geo__Rect__area__const_0 geo::Rect::area()const arg1=$retval' \
'r:kprobes/r_geo__Rect__grow_double__0 geo::Rect::grow(double)' \
'r:kprobes/r_geo__Box_int___get__const_0 geo::Box<int>::get()const arg1=$retval' \
'r:kprobes/r_geo__Box_long___get__const_0 geo::Box<long>::get()const arg1=$retval' | sort)"

WANT="kp: p_geo__Rect__grow_double__0: (geo::Rect::grow+0x0) this=ADDR by=1
kp: r_geo__Rect__grow_double__0: (main+OFF <- geo::Rect::grow)
kp: p_geo__Rect__area__const_0: (geo::Rect::area+0x0) this=ADDR
kp: r_geo__Rect__area__const_0: (main+OFF <- geo::Rect::area) arg1=13.5
kp: p_geo__scale_double_int__0: (geo::scale(double, int)+0x0) v=1.5 k=4
kp: r_geo__scale_double_int__0: (main+OFF <- geo::scale(double, int)) arg1=6
kp: p_geo__scale_long_int__0: (geo::scale(long, int)+0x0) v=7 k=3
kp: r_geo__scale_long_int__0: (main+OFF <- geo::scale(long, int)) arg1=21
kp: p_geo__Box_long___get__const_0: (geo::Box<long>::get+0x0) this=ADDR
kp: r_geo__Box_long___get__const_0: (main+OFF <- geo::Box<long>::get) arg1=5
kp: p_geo__Box_int___get__const_0: (geo::Box<int>::get+0x0) this=ADDR
kp: r_geo__Box_int___get__const_0: (main+OFF <- geo::Box<int>::get) arg1=4"

timeout 60 "$F" trace "${EVENTS[@]}" -o "$T/t" -- "$T/kp" > "$T/out" 2> "$T/err"
check glob_status eq "$?" 0
check glob_output eq "$(cat "$T/out")" "40.5 4 5"
check glob_lines eq "$(normalize < "$T/t")" "$WANT"
check glob_void_said eq "$(grep -c 'r geo::\* \$retval: 1 of 6 functions return void' "$T/err")" 1

# ---- record + replay: the same events
timeout 60 "$F" record "${EVENTS[@]}" -o "$T/rec" -- "$T/kp" > /dev/null 2>&1
check record_status eq "$?" 0
timeout 60 "$F" replay "$T/rec" > "$T/t" 2>&1
check replay_status eq "$?" 0
check replay_lines eq "$(normalize < "$T/t")" "$WANT"

# ---- one C++ name: exact, in the executable named as MOD
check exact_dry_run eq "$("$F" trace --dry-run -e 'p kp:geo::scale(long,int) $arg*' \
	-e 'r geo::Rect::area()const $retval' -- "$T/kp" 2>&1)" \
"p:kprobes/p_kp_geo__scale_long_int__0 kp:geo::scale(long,int) v=v k=k
r:kprobes/r_geo__Rect__area__const_0 geo::Rect::area()const arg1=\$retval"
timeout 60 "$F" trace -e 'p kp:geo::scale(long,int) $arg*' -o "$T/t" -- "$T/kp" > /dev/null 2>&1
check exact_status eq "$?" 0
check exact_lines eq "$(normalize < "$T/t")" \
	"kp: p_kp_geo__scale_long_int__0: (geo::scale(long, int)+0x0) v=7 k=3"

# ---- names alike in their first 63 characters: one event each all the same
check long_names eq "$("$F" trace --dry-run -e 'p averylongnamespacename::* $arg*' \
	-e 'r:ev averylongnamespacename::*' -- "$T/kp" 2>&1 | sed 's/ .*//')" \
"p:kprobes/p_averylongnamespacename__inner__process_the_widget_now_averylo
p:kprobes/p_averylongnamespacename__inner__process_the_widget_now_avery_2
r:kprobes/ev_averylongnamespacename__inner__process_the_widget_now_averyl
r:kprobes/ev_averylongnamespacename__inner__process_the_widget_now_aver_2"

# ---- a name of several functions: the kernel's error, and which they are
timeout 60 "$F" trace -e 'p geo::scale $arg*' -- "$T/kp" > "$T/out" 2>&1
check overloads_status eq "$?" 1
check overloads_said eq "$(cat "$T/out")" \
"fhook: error: The symbol is not unique
  Command: p geo::scale \$arg*
             ^
fhook: trace: geo::scale names several functions: geo::scale(double,int), geo::scale(long,int); name one with its parameters, or each with a glob"

# the same with an offset: the overloads of the name before it
timeout 60 "$F" trace -e 'p geo::scale+4' -- "$T/kp" > "$T/out" 2>&1
check overloads_offset_said eq "$(tail -1 "$T/out")" \
"fhook: trace: geo::scale names several functions: geo::scale(double,int), geo::scale(long,int); name one with its parameters, or each with a glob"

# ---- a C++ glob in a library that is not loaded at start: said, exit 1
timeout 60 "$F" trace -e 'p libgeo.so:geo::*' -- "$T/kp" > "$T/out" 2>&1
check unloaded_status eq "$?" 1
check unloaded_said eq "$(cat "$T/out")" \
"fhook: trace: p libgeo.so:geo::*: C++ names are matched when the command starts, and libgeo.so is not loaded then: name its functions by their symbols (_Z...)"

# ---- fprobe globs of C++ names with $arg*: one event per function
timeout 60 "$F" trace -e 'f geo::*%return $arg* $retval' -o "$T/t" -- "$T/kps" \
	> "$T/out" 2> "$T/err"
check f_glob_status eq "$?" 0
check f_glob_output eq "$(cat "$T/out")" "40.5 4 5"
check f_glob_lines eq "$(normalize < "$T/t")" \
"kps: geo__Rect__grow_double___exit: (main+OFF <- geo::Rect::grow) this=ADDR by=1
kps: geo__Rect__area__const__exit: (main+OFF <- geo::Rect::area) this=ADDR arg2=13.5
kps: geo__scale_double_int___exit: (main+OFF <- geo::scale(double, int)) v=1.5 k=4 arg3=6
kps: geo__scale_long_int___exit: (main+OFF <- geo::scale(long, int)) v=7 k=3 arg3=21
kps: geo__Box_long___get__const__exit: (main+OFF <- geo::Box<long>::get) this=ADDR arg2=5
kps: geo__Box_int___get__const__exit: (main+OFF <- geo::Box<int>::get) this=ADDR arg2=4"
check f_glob_void_said eq "$(grep -c '1 of 6 functions return void' "$T/err")" 1


# ---- a whole C++ program without sites, exceptions thrown through it:
# recorded through kprobes (every function), the call tree the sited build gives
tree() {	# main's call tree, without times or thread ids
	"$F" replay --format graph "$1" |
		sed -E 's/^ *[0-9]+\.[0-9]+ +([0-9.]+ +[mun]?s)? *\[ *[0-9]+\] \| //' |
		awk 'match($0, /^ *main\(\) \{/) { on = 1; ind = index($0, "m") - 1 }
		     on { print substr($0, ind + 1) }'
}
"$CXX" -std=gnu++17 -O1 -g -o "$T/cxx_plain" tests/events/cxx_prog.cc || exit 2
timeout 60 "$F" record -o "$T/k.rec" -- "$T/cxx_plain" throw > "$T/out" 2> "$T/err"
check whole_status eq "$?: $(cat "$T/out")" "0: caught deep
34"
check whole_said eq "$(grep -c 'has no patchable sites: recording its [0-9]* functions through kprobes' \
	"$T/err")" 1
timeout 60 "$F" record -o "$T/s.rec" -- "${FHOOK_BUILD:-build}/tests/events/cxx_prog_gcc" throw > /dev/null 2>&1
check whole_tree_as_sites eq "$(tree "$T/k.rec")" "$(tree "$T/s.rec")"
check whole_tree eq "$(tree "$T/k.rec")" "main() {
  geo::Rect::area();
  geo::scale(double, int);
  geo::scale(long, int);
  geo::check() {
    geo::check() {
      geo::check() {
        geo::check() {
        } /* unwound: geo::check */
      } /* unwound: geo::check */
    } /* unwound: geo::check */
  } /* unwound: geo::check */
} /* main */"
