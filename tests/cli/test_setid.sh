#!/bin/bash
# Privilege boundaries: a throwaway user runs a set-user-ID root
# copy of a traceable program.
#  - `fhook trace/record/patch/inject` refuse it by name (exit 125, not run),
#    where they used to run it untraced ("did not exit normally");
#  - a set-id program linked with libfhook takes no FHOOK_* variable from
#    that user: no injected fault, no report written as root, no message.
# Also: 32-bit, foreign-architecture and corrupt ELF files are refused by
# name (no /bin/sh syntax error, no "has no patchable sites").
# The user and the set-id files are removed at exit.
set -o pipefail
cd "${FHOOK_ROOT:-$(dirname "$0")/../..}" || exit 2
ROOT=$PWD
F=$ROOT/build/fhook
T=$(mktemp -d)
user=fhk$$
cleanup() {
	rm -rf "$T"
	id "$user" >/dev/null 2>&1 && userdel "$user" >/dev/null 2>&1
}
trap cleanup EXIT
chmod 755 "$T"

CHECK_PREFIX=setid
. tests/check.sh
has() { grep -qF -- "$2" <<< "$1" || { echo "  got: $(printf %q "$1")"; return 1; }; }

gcc -O2 $($F cflags) -o $T/prog tests/cli/prog.c || exit 2

# ---- foreign and corrupt ELF files (any user) ----
elfpatch() {	# file, EI_CLASS, e_machine: a copy of prog with those fields
	cp $T/prog "$1"
	printf "\\x$(printf %02x "$2")" | dd of="$1" bs=1 seek=4 conv=notrunc status=none
	printf "\\x$(printf %02x $(($3 & 255)))\\x$(printf %02x $(($3 >> 8)))" |
		dd of="$1" bs=1 seek=18 conv=notrunc status=none
}
elfpatch $T/p32 1 3
elfpatch $T/arm64 2 183
head -c 3000 $T/prog > $T/trunc && chmod +x $T/trunc
head -c 40 $T/prog > $T/trunc_hdr && chmod +x $T/trunc_hdr
for p in p32:"is a 32-bit x86 program: fhook runs x86-64 programs only" \
	 arm64:"is an AArch64 program: fhook runs x86-64 programs only" \
	 trunc:"is a corrupt ELF file (its program headers or segments run past its end, 3000 bytes)" \
	 trunc_hdr:"is a corrupt ELF file (cut short at 40 bytes)"; do
	n=${p%%:*} msg=${p#*:}
	out=$(timeout 30 $F trace -e 'f alpha' -o $T/out -- $T/$n 2>&1); st=$?
	check ${n}_trace eq "$st" 125
	check ${n}_trace_msg eq "$out" "fhook: $T/$n $msg"
	out=$(timeout 30 $F inject --func alpha --retval 1 -- $T/$n 2>&1); st=$?
	check ${n}_inject eq "$st:$out" "125:fhook: $T/$n $msg"
done

if [ "$(id -u)" != 0 ] || ! command -v useradd >/dev/null || ! command -v runuser >/dev/null; then
	echo "SKIP setid/user: needs root, useradd and runuser"
	exit 0
fi
useradd -M -s /bin/sh -d /nonexistent "$user" || { echo "FAIL setid/useradd"; exit 0; }
mkdir $T/out $T/rootonly && chmod 777 $T/out && chmod 700 $T/rootonly
as_user() { timeout 60 runuser -u "$user" -- "$@"; }

cp $T/prog $T/suid && chown root:root $T/suid && chmod 4755 $T/suid
cp $T/prog $T/sgid && chown root:root $T/sgid && chmod 2755 $T/sgid
cp $T/prog $T/plain && chmod 755 $T/plain
why="it would run with privileges you do not have, where the dynamic loader ignores LD_PRELOAD; fhook does not act inside it (run fhook as that user, or use a copy without the set-id bit or capabilities)"

out=$(as_user $F trace -e 'f alpha' -o $T/out/t -- $T/suid 2>&1); st=$?
check trace_refused eq "$st:$out" "125:fhook: $T/suid is set-user-ID root: $why"
out=$(as_user $F record -e 'f alpha' -o $T/out/r.rec -- $T/suid 2>&1); st=$?
check record_refused eq "$st:$out" "125:fhook: $T/suid is set-user-ID root: $why"
out=$(as_user $F inject --func alpha --retval 7 -- $T/suid 2>&1); st=$?
check inject_refused eq "$st:$out" "125:fhook: $T/suid is set-user-ID root: $why"
out=$(as_user $F patch --func alpha --with /lib/x86_64-linux-gnu/libc.so.6:abs -- $T/suid 2>&1); st=$?
check patch_refused eq "$st:$out" "125:fhook: $T/suid is set-user-ID root: $why"
out=$(as_user $F trace -e 'f alpha' -o $T/out/t -- $T/sgid 2>&1); st=$?
check sgid_refused eq "$st:$out" "125:fhook: $T/sgid is set-group-ID root: $why"
# the same program without the bit is traced for that user
out=$(as_user $F trace -e 'f alpha' -o $T/out/t -- $T/plain 2>&1); st=$?
check plain_traced eq "$st:$(grep -c 'alpha+0x0' $T/out/t)" "0:1"
# root running a set-user-ID root program loses nothing: traced
$F trace -e 'f alpha' -o $T/out/t -- $T/suid >/dev/null 2>&1; st=$?
check root_own_suid_traced eq "$st:$(grep -c 'alpha+0x0' $T/out/t)" "0:1"
# file capabilities
if command -v setcap >/dev/null && cp $T/prog $T/caps && setcap cap_net_raw+ep $T/caps 2>/dev/null; then
	out=$(as_user $F trace -e 'f alpha' -o $T/out/t -- $T/caps 2>&1); st=$?
	check caps_refused eq "$st:$out" "125:fhook: $T/caps is given file capabilities: $why"
else
	echo "SKIP setid/caps_refused: no setcap, or no file capabilities here"
fi

# ---- libfhook inside a set-id process takes nothing from the environment ----
gcc -O2 $($F cflags) -o $T/linked tests/cli/prog.c -L$ROOT/build -Wl,--no-as-needed -lfhook \
	-Wl,-rpath,$ROOT/build && chown root:root $T/linked && chmod 4755 $T/linked
out=$(as_user env FHOOK_LP_MODE=inject FHOOK_LP_FUNC=no_such_function \
	FHOOK_LP_REPORT=$T/rootonly/report $T/linked 2>&1); st=$?
check lib_lp_ignored eq "$st:$out" "0:1"
check lib_no_report_as_root test ! -e $T/rootonly/report
out=$(as_user env FHOOK_EV_SHM=0 $T/linked 2>&1 < /dev/null); st=$?
check lib_ev_shm_ignored eq "$st:$out" "0:1"
# the same, not set-id: the variables are read (the test would see them)
cp $T/linked $T/linked_plain && chmod 755 $T/linked_plain
out=$(as_user env FHOOK_LP_MODE=inject FHOOK_LP_FUNC=no_such_function $T/linked_plain 2>&1); st=$?
check lib_lp_read_when_not_setid eq "$st" 125
exit 0
