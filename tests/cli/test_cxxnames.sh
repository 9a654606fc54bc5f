#!/bin/bash
# C++ names (docs/events.md, "C++ names") on a program of
# tests/cli/cxxnames.cpp: what fhook funcs prints in each --demangle mode,
# what the decoder names a recording's functions in each mode
# (tests/cli/cxxnames_dec.c: dec_set_demangle(), dec_name_match()), what
# report and replay print by default; and the glob rule: report -F and -e
# name a function by its short or template form or its mangled name, never
# by its return or parameter types.
set -o pipefail
cd "$FHOOK_ROOT" || exit 2
F=$FHOOK_ROOT/build/fhook
DEC=$FHOOK_ROOT/${FHOOK_BUILD:-build}/tests/cli/cxxnames_dec
T=$(mktemp -d)
trap 'rm -rf $T' EXIT

check() {	# name, condition (as a command), message
	local name=$1; shift
	if "$@"; then echo "PASS $name"; else echo "FAIL $name: $*"; fi
}
eq() { [ "$1" = "$2" ] || { echo "  got:      $(printf %q "$1")"; echo "  expected: $(printf %q "$2")"; return 1; }; }
sorted() { LC_ALL=C sort; }
# report's Function column, one a line
functions() { awk 'NR == 1 { p = index($0, "Function") } NR > 2 && p { print substr($0, p) }'; }
# the functions of replay's text entries (and trace's), "(NAME+0x0/0x1c)"
entries() { sed -nE 's/.*: \((.*)\+0x[0-9a-f]+\/0x[0-9a-f]+\)$/\1/p'; }

if ! g++ -O0 -g $($F cflags) -o $T/prog tests/cli/cxxnames.cpp 2>$T/cc.err; then
	echo "FAIL cxxnames_build: $(cat $T/cc.err)"
	exit 1
fi
out=$($T/prog); st=$?
check cxxnames_prog_runs eq "$out, exit $st" "47, exit 0"

# every function, short: distinct functions stay distinct, by the least that tells them apart
SHORT=$(sorted <<'EOF'
(anonymous namespace)::helper
geo::Box::put(int)
geo::Box::put(long)
geo::Box<int>::get
geo::Box<long>::get
geo::Shape::len()
geo::Shape::len() const
geo::area(double, double)
geo::area(int, int)
geo::operator<<
main
main::{lambda(int)#1}::operator()
make_box(int)
make_box(long)
EOF
)
# the whole signatures, as c++filt: a template function with its return type
FULL=$(sorted <<'EOF'
(anonymous namespace)::helper(int)
geo::Box<int> make_box<int>(int)
geo::Box<int>::get() const
geo::Box<int>::put(int)
geo::Box<long> make_box<long>(long)
geo::Box<long>::get() const
geo::Box<long>::put(long)
geo::Shape::len()
geo::Shape::len() const
geo::area(double, double)
geo::area(int, int)
geo::operator<<(geo::Out&, geo::P const&)
main
main::{lambda(int)#1}::operator()(int) const
EOF
)
MANGLED=$(sorted <<'EOF'
_Z8make_boxIiEN3geo3BoxIT_EES2_
_Z8make_boxIlEN3geo3BoxIT_EES2_
_ZN12_GLOBAL__N_16helperEi
_ZN3geo3BoxIiE3putEi
_ZN3geo3BoxIlE3putEl
_ZN3geo4areaEdd
_ZN3geo4areaEii
_ZN3geo5Shape3lenEv
_ZN3geolsERNS_3OutERKNS_1PE
_ZNK3geo3BoxIiE3getEv
_ZNK3geo3BoxIlE3getEv
_ZNK3geo5Shape3lenEv
_ZZ4mainENKUliE_clEi
main
EOF
)

# ---- fhook funcs, in each mode
out=$($F funcs $T/prog); st=$?
check cxxnames_funcs_short eq "$(sorted <<< "$out"), exit $st" "$SHORT, exit 0"
out=$($F funcs --demangle=short $T/prog | sorted)
check cxxnames_funcs_demangle_short eq "$out" "$SHORT"
out=$($F funcs --demangle=full $T/prog | sorted)
check cxxnames_funcs_full eq "$out" "$FULL"
out=$($F funcs --demangle=no $T/prog | sorted)
check cxxnames_funcs_no eq "$out" "$MANGLED"
out=$($F funcs --demangle=full -v $T/prog | grep -cE '^[0-9a-f]{16} +[0-9]+ geo::Box<int> make_box<int>\(int\)$')
check cxxnames_funcs_verbose eq "$out" 1
out=$($F funcs --why $T/prog | grep -E '^geo::(area|Box)' | sorted)
want=$(printf '%s\n' 'geo::Box::put(int) site' 'geo::Box::put(long) site' 'geo::Box<int>::get site' \
	'geo::Box<long>::get site' 'geo::area(double, double) site' 'geo::area(int, int) site' | sorted)
check cxxnames_funcs_why eq "$out" "$want"
out=$($F funcs --demangle=long $T/prog 2>&1); st=$?
check cxxnames_funcs_bad_mode eq "$out, exit $st" "fhook: funcs: --demangle long: short, full or no, exit 2"
out=$($F funcs -h); st=$?
check cxxnames_funcs_help eq "$st $(grep -c -- '^  --demangle=MODE' <<< "$out") $(grep -c '^usage: fhook funcs' <<< "$out")" "0 1 1"

# ---- a recording: the decoder in each mode, report and replay by default
if ! $F record -o $T/r.rec -- $T/prog >$T/rec.out 2>$T/rec.err; then
	echo "FAIL cxxnames_record: $(cat $T/rec.err)"
	exit 1
fi
out=$($DEC short $T/r.rec | sorted)
check cxxnames_dec_short eq "$out" "$SHORT"
out=$($DEC full $T/r.rec | sorted)
check cxxnames_dec_full eq "$out" "$FULL"
out=$($DEC no $T/r.rec | sorted)
check cxxnames_dec_no eq "$out" "$MANGLED"
out=$($F report $T/r.rec | functions | sorted)
check cxxnames_report eq "$out" "$SHORT"
out=$($F replay --format text $T/r.rec | entries | sorted -u)
check cxxnames_replay eq "$out" "$SHORT"

# ---- globs: names, never types
glob() {	# test name, glob, the functions it names (short, one a line)
	local got want
	want=$(sorted <<< "$3")
	got=$($DEC match "$2" $T/r.rec | sorted)
	check "cxxnames_match_$1" eq "$got" "$want"
}
glob namespace 'geo::*' 'geo::Box::put(int)
geo::Box::put(long)
geo::Box<int>::get
geo::Box<long>::get
geo::Shape::len()
geo::Shape::len() const
geo::area(double, double)
geo::area(int, int)
geo::operator<<'
# make_box's return type, geo::Box<T>, is no part of its name
glob return_type '*Box<long>*' 'geo::Box::put(long)
geo::Box<long>::get'
glob template_function 'make_box*' 'make_box(int)
make_box(long)'
glob template_form 'geo::Box<int>::*' 'geo::Box::put(int)
geo::Box<int>::get'
glob template_exact 'make_box<long>' 'make_box(long)'
# "int" in a template argument or a lambda's name, never in a parameter list
glob no_params '*int*' 'geo::Box::put(int)
geo::Box<int>::get
main::{lambda(int)#1}::operator()
make_box(int)'
glob short_shared 'geo::Box::put' 'geo::Box::put(int)
geo::Box::put(long)'
glob shown_name 'geo::area(int, int)' 'geo::area(int, int)'
glob mangled '_ZN3geo4areaEdd' 'geo::area(double, double)'
glob anonymous '(anonymous namespace)::*' '(anonymous namespace)::helper'
glob lambda 'main::{lambda(int)#1}::*' 'main::{lambda(int)#1}::operator()'
glob operator 'geo::operator<<' 'geo::operator<<'
glob c_name 'mai?' 'main'
glob nothing 'std::*' ''
# report -F: the same rule (an -F function and the calls under it)
out=$($F report -F 'geo::*' $T/r.rec | functions | sorted)
check cxxnames_report_filter eq "$out" "$($DEC match 'geo::*' $T/r.rec | sorted)"
out=$($F report -F '*Box<long>*' $T/r.rec | functions | sorted)
check cxxnames_report_filter_return_type eq "$out" "$(printf 'geo::Box::put(long)\ngeo::Box<long>::get' | sorted)"

# ---- -e: the same rule for a definition's symbol
probe() {	# test name, symbol, the functions probed (short, one a line)
	local got want
	want=$(sorted <<< "$3")
	got=$($F trace -e "f $2" -- $T/prog 2>&1 | entries | sorted)
	check "cxxnames_probe_$1" eq "$got" "$want"
}
probe namespace 'geo::*' 'geo::Box::put(int)
geo::Box::put(long)
geo::Box<int>::get
geo::Box<long>::get
geo::Shape::len()
geo::Shape::len() const
geo::area(double, double)
geo::area(int, int)
geo::operator<<'
probe return_type '*Box<long>*' 'geo::Box::put(long)
geo::Box<long>::get'
probe template_function 'make_box*' 'make_box(int)
make_box(long)'
probe template_form 'geo::Box<int>::*' 'geo::Box::put(int)
geo::Box<int>::get'
probe params 'geo::area(double,*)' 'geo::area(double, double)'
probe const 'geo::Shape::len()const' 'geo::Shape::len() const'
probe mangled '_ZN3geo4areaEii' 'geo::area(int, int)'
out=$($F trace -e 'f std::*' -- $T/prog 2>&1); st=$?
check cxxnames_probe_nothing bash -c "[ $st -ne 0 ] && [ $st -lt 128 ] && grep -q 'Invalid probed address or symbol' <<< '$out'"
