#!/bin/bash
# Events whose arguments come from registers (every width, signed and
# unsigned, hex, an immediate, doubles, $retval, an entry argument shown at
# the return) are written straight into the ring, not staged: the same
# replayed lines as staged (FHOOK_REC_FAST=0), exact, and (callgrind, where
# there is valgrind) fewer instructions a call than staged.
set -o pipefail
cd "${FHOOK_ROOT:-$(dirname "$0")/../..}" || exit 2
B=${FHOOK_BUILD:-build}
FHOOK=${FHOOK_CLI:-$B/fhook}
P=$B/tests/events/fast_args_prog
[ -x "$P" ] || make -s "$P" >/dev/null 2>&1
if [ ! -x "$FHOOK" ] || [ ! -x "$P" ]; then
	echo "SKIP rec_fast: $FHOOK or $P is not built"
	exit 0
fi
tmp=$(mktemp -d)
trap '[ "$BASHPID" = "$$" ] && rm -rf "$tmp"' EXIT
pass() { echo "PASS rec_fast/$1 ${2:-}"; }
fail() { echo "FAIL rec_fast/$1: $2"; }

. tests/events/lib.sh

EV=(-e 'f:t/mix fa_mix a=$arg1:u8 b=$arg2:s16 c=$arg3:s32 d=$arg4:s64 e=$arg5:x64 f=$arg6:x64 bx=$arg2:x16 cu=$arg3:u32 k=\7:u8'
    -e 'f:t/mixr fa_mix%return $retval:s32 a=$arg1:u8'
    -e 'f:t/dbl fa_dbl $arg*' -e 'f:t/dblr fa_dbl%return $retval'
    -e 'f:t/one fa_one $arg1' -e 'f:t/oner fa_one%return $retval')
# times, tids, cpus and code offsets vary
strip() {
	sed -E -e 's/^ *([a-z_]+)-[0-9]+ +\[[0-9]{3}\] +[0-9]+\.[0-9]{6}:/\1:/' \
	    -e 's/\+0x[0-9a-f]+\/0x[0-9a-f]+/+OFF/g'
}
cat >"$tmp/want" <<'OUT'
fast_args_prog: mix: (fa_mix+OFF) a=200 b=-3 c=-70000 d=-5000000000 e=0xdeadbeefcafe f=0x1000 bx=0xfffd cu=4294897296 k=7
fast_args_prog: mixr: (main+OFF <- fa_mix) arg1=-705102507 a=200
fast_args_prog: mix: (fa_mix+OFF) a=7 b=32767 c=2147483647 d=9 e=0x0 f=0x0 bx=0x7fff cu=2147483647 k=7
fast_args_prog: mixr: (main+OFF <- fa_mix) arg1=-2147450866 a=7
fast_args_prog: dbl: (fa_dbl+OFF) x=1.5 y=2
fast_args_prog: dblr: (main+OFF <- fa_dbl) arg1=3
fast_args_prog: one: (fa_one+OFF) x=41
fast_args_prog: oner: (main+OFF <- fa_one) arg1=42
OUT
for m in 1 0; do
	st=0
	FHOOK_REC_FAST=$m timeout 60 "$FHOOK" record "${EV[@]}" \
		-o "$tmp/r$m.rec" -- "$P" show >"$tmp/out$m" 2>"$tmp/err$m" || st=$?
	timeout 60 "$FHOOK" replay "$tmp/r$m.rec" 2>&1 | strip >"$tmp/got$m" || st=$?
	if [ $st = 0 ] && cmp -s "$tmp/got$m" "$tmp/want"; then
		pass "lines-$m"
	else
		fail "lines-$m" "exit $st; $(diff "$tmp/want" "$tmp/got$m" | head -6 | tr '\n' ' ') $(head -2 "$tmp/err$m")"
	fi
done

# taken: fewer instructions a call of fa_one() with its two events than staged
if [ -z "${FHOOK_EMULATOR:-}" ] && command -v valgrind >/dev/null 2>&1; then
	fast=$(rec_per_call "$tmp" "$P" 'loop @N@' FHOOK_REC_FAST=1 -- "${EV[@]:8}")
	staged=$(rec_per_call "$tmp" "$P" 'loop @N@' FHOOK_REC_FAST=0 -- "${EV[@]:8}")
	if [ "$fast" -gt 0 ] && [ "$fast" -lt "$staged" ]; then
		pass taken "($fast instructions a call of fa_one() with \$arg1 and \$retval, $staged staged)"
	else
		fail taken "$fast instructions a call with \$arg1 and \$retval, $staged staged"
	fi
else
	echo "SKIP rec_fast/taken: no valgrind (or under an emulator)"
fi
