#!/bin/bash
# Arguments without rebuilding: DWARF names and types the arguments of
# kprobe events on a program built without fhook's flags (p on an entry, r
# on a return: $arg*, $argN named after its parameter, struct fields,
# doubles from the vector registers, a double $retval, a string), the
# same from a separate debug file found by .gnu_debuglink and by build-id,
# globs with $arg* (one event per function, each with its parameters, and
# a program without debug information said and recorded without them),
# fprobe globs likewise, and fhook record + replay of the same.  Exact
# lines throughout.
set -o pipefail
cd "${FHOOK_ROOT:-$(dirname "$0")/../..}" || exit 2
F=${FHOOK_CLI:-$PWD/${FHOOK_BUILD:-build}/fhook}
# the compilers of the machine the programs run on (scripts/test-aarch64.sh: cross)
CC=${FHOOK_TEST_CC:-gcc} CXX=${FHOOK_TEST_CXX:-g++}
# and their binutils (aarch64-linux-gnu-objcopy for an aarch64 gcc)
OBJCOPY=${CC%gcc}objcopy STRIP=${CC%gcc}strip
SRC=$PWD/tests/events/dwarf_args.c
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
CHECK_PREFIX=dwarf_args
. tests/check.sh

. tests/events/lib.sh
# times, tids and cpus vary; so do the addresses of the stack and the string
# (a site's event at its function's start: +0x0, after aarch64's "mov x9, x30")
normalize() {
	sed -E -e 's/^ *([a-z_]+)-[0-9]+ +\[[0-9]{3}\] +[0-9]+\.[0-9]{6}:/\1:/' \
	    -e 's/main\+0x[0-9a-f]+\/0x[0-9a-f]+/main+OFF/' \
	    -e 's/(da_[a-z]+\+0x0)\/0x[0-9a-f]+/\1/' -e "s/(da_[a-z]+\\+)$SITE_OFF\\/0x[0-9a-f]+/\\10x0/" \
	    -e 's/(p|label)=0x[0-9a-f]+/\1=ADDR/g'
}

"$CC" -g -O1 -o "$T/plain" "$SRC" || exit 2
"$CC" -O1 -o "$T/nodebug" "$SRC" || exit 2
"$CC" -g -O1 $("$F" cflags) -o "$T/sites" "$SRC" || exit 2

EVENTS=(-e 'p da_add $arg* p->x p->y' -e 'r da_add $retval $arg1' -e 'p da_scale $arg*'
	-e 'r da_scale $retval $arg2:string' -e 'p da_none')
WANT="plain: p_da_add_0: (da_add+0x0) a=1 b=2 p=ADDR arg4=3 arg5=1.5
plain: r_da_add_0: (main+OFF <- da_add) arg1=7 a=1
plain: p_da_scale_0: (da_scale+0x0) v=2.5 label=ADDR k=3
plain: r_da_scale_0: (main+OFF <- da_scale) arg1=7.5 label=\"scaled\"
plain: p_da_none_0: (da_none+0x0)"

# ---- the definitions as the kernel would list them
check dry_run eq "$("$F" trace --dry-run "${EVENTS[@]}" -- "$T/plain" 2>&1)" \
"p:kprobes/p_da_add_0 da_add a=a b=b p=p arg4=p->x arg5=p->y
r:kprobes/r_da_add_0 da_add arg1=\$retval a=a
p:kprobes/p_da_scale_0 da_scale v=v label=label k=k
r:kprobes/r_da_scale_0 da_scale arg1=\$retval label=label:string
p:kprobes/p_da_none_0 da_none"

# ---- debug information in the program
timeout 60 "$F" trace "${EVENTS[@]}" -o "$T/t" -- "$T/plain" > "$T/out" 2> "$T/err"
check in_file_status eq "$?" 0
check in_file_output eq "$(cat "$T/out")" "scaled
7 7.5 7"
check in_file_lines eq "$(normalize < "$T/t")" "$WANT"

# ---- in a separate file: .gnu_debuglink, beside the program and in .debug/
mkdir -p "$T/link/.debug"
cp "$T/plain" "$T/link/plain"
"$OBJCOPY" --only-keep-debug "$T/link/plain" "$T/link/.debug/plain.debug" &&
	"$STRIP" --strip-debug "$T/link/plain" &&
	"$OBJCOPY" --add-gnu-debuglink="$T/link/.debug/plain.debug" "$T/link/plain" || exit 2
check debuglink_stripped eq "$(readelf -S "$T/link/plain" | grep -c debug_info)" 0
timeout 60 "$F" trace "${EVENTS[@]}" -o "$T/t" -- "$T/link/plain" > "$T/out" 2> "$T/err"
check debuglink_status eq "$?" 0
check debuglink_lines eq "$(normalize < "$T/t")" "$WANT"

# ---- by build-id, in a debug directory (/usr/lib/debug's layout)
id=$(readelf -n "$T/plain" | awk '/Build ID/ { print $3 }')
if [ -n "$id" ]; then
	mkdir -p "$T/bid/prog" "$T/dbg/.build-id/${id:0:2}"
	cp "$T/plain" "$T/bid/prog/plain"
	"$OBJCOPY" --only-keep-debug "$T/plain" "$T/dbg/.build-id/${id:0:2}/${id:2}.debug" &&
		"$STRIP" --strip-debug "$T/bid/prog/plain" || exit 2
	timeout 60 env FHOOK_DEBUGINFO_PATH="$T/dbg" "$F" trace "${EVENTS[@]}" -o "$T/t" -- \
		"$T/bid/prog/plain" > "$T/out" 2> "$T/err"
	check build_id_status eq "$?" 0
	check build_id_lines eq "$(normalize < "$T/t")" "$WANT"
	# not found: $arg* says so, at the word
	"$F" trace --dry-run -e 'p da_add $arg*' -- "$T/bid/prog/plain" > "$T/out" 2>&1
	check build_id_missing eq "$?/$(head -1 "$T/out")" \
		"1/fhook: error: BTF is not available or not supported"
else
	echo "SKIP dwarf_args/build_id: the linker wrote no build-id"
fi

# ---- a glob with $arg*: one event per function, its own parameters
timeout 60 "$F" trace -e 'p da_* $arg*' -e 'r:my/ret da_* $retval $arg*' -o "$T/t" -- "$T/plain" \
	> "$T/out" 2> "$T/err"
check glob_status eq "$?" 0
check glob_lines eq "$(normalize < "$T/t" | sort)" "$(printf '%s\n' \
	"plain: p_da_add_0: (da_add+0x0) a=1 b=2 p=ADDR" \
	"plain: p_da_none_0: (da_none+0x0)" \
	"plain: p_da_scale_0: (da_scale+0x0) v=2.5 label=ADDR k=3" \
	"plain: ret_da_add: (main+OFF <- da_add) arg1=7 a=1 b=2 p=ADDR" \
	"plain: ret_da_none: (main+OFF <- da_none) arg1=7" \
	"plain: ret_da_scale: (main+OFF <- da_scale) arg1=7.5 v=2.5 label=ADDR k=3" | sort)"
check glob_said_nothing eq "$(grep -c 'debug information' "$T/err")" 0
check glob_dry_run eq "$("$F" trace --dry-run -e 'p:my/ent da_* $arg*' -- "$T/plain" 2>&1 | sort)" \
"p:my/ent_da_add da_add a=a b=b p=p
p:my/ent_da_none da_none
p:my/ent_da_scale da_scale v=v label=label k=k"

# ---- the same glob on a program without debug information: said, no arguments
timeout 60 "$F" trace -e 'p da_* $arg*' -o "$T/t" -- "$T/nodebug" > "$T/out" 2> "$T/err"
check nodebug_status eq "$?" 0
check nodebug_said eq "$(grep 'debug information' "$T/err")" \
	"fhook: trace: p da_* \$arg*: \$arg* names the parameters of 0 of 3 functions; the other 3 have no debug information (their events have no arguments)"
check nodebug_lines eq "$(normalize < "$T/t" | sed 's/^nodebug:/plain:/' | sort)" \
"plain: p_da_add_0: (da_add+0x0)
plain: p_da_none_0: (da_none+0x0)
plain: p_da_scale_0: (da_scale+0x0)"

# ---- fprobe globs on a program built with sites, likewise
timeout 60 "$F" trace -e 'f da_* $arg*' -o "$T/t" -- "$T/sites" > "$T/out" 2> "$T/err"
check f_glob_status eq "$?" 0
check f_glob_lines eq "$(normalize < "$T/t" | sed 's/^sites:/plain:/' | sort)" \
"plain: da_add__entry: (da_add+0x0) a=1 b=2 p=ADDR
plain: da_none__entry: (da_none+0x0)
plain: da_scale__entry: (da_scale+0x0) v=2.5 label=ADDR k=3"

# ---- kprobe events on the sites of that build (the site method): the same values
timeout 60 "$F" trace "${EVENTS[@]}" -o "$T/t" -- "$T/sites" > "$T/out" 2> "$T/err"
check site_method_status eq "$?" 0
check site_method_lines eq "$(normalize < "$T/t" | sed 's/^sites:/plain:/')" "$WANT"

# ---- recorded, then replayed: the same lines
timeout 60 "$F" record "${EVENTS[@]}" -o "$T/r.rec" -- "$T/link/plain" > "$T/out" 2> "$T/err"
check record_status eq "$?" 0
"$F" replay "$T/r.rec" > "$T/t" 2> "$T/err"
check replay_status eq "$?" 0
check replay_lines eq "$(normalize < "$T/t")" "$WANT"
