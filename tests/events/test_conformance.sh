#!/bin/bash
# The conformance table: every spec of tests/events/conformance.tsv through
# `fhook trace --dry-run` against the known program.  Accepted specs must
# print the kernel's dynamic_events form; refused ones the kernel's message
# with the caret at the expected column, and exit with an error status (a
# signal is no refusal).  One PASS/FAIL line per spec.
cd "${FHOOK_ROOT:-$(dirname "$0")/../..}" || exit 2
B=${FHOOK_BUILD:-build}
FHOOK=${FHOOK_CLI:-$B/fhook}
PROG=$B/tests/events/prog
[ -x "$PROG" ] || make -s "$PROG" >/dev/null 2>&1
if [ ! -x "$FHOOK" ] || [ ! -x "$PROG" ]; then
	echo "SKIP conformance: $FHOOK or $PROG not built"
	exit 0
fi
n=0
while IFS=$'\t' read -r spec kind a b; do
	case $spec in '#'*|'') continue ;; esac
	n=$((n + 1))
	name="conformance/$n"
	out=$("$FHOOK" trace --dry-run -e "$spec" -- "$PROG" 2>&1)
	st=$?
	if [ "$kind" = ok ]; then
		if [ $st = 0 ] && [ "$out" = "$a" ]; then
			echo "PASS $name"
		else
			echo "FAIL $name: '$spec' printed '$out' (status $st), expected '$a'"
		fi
		continue
	fi
	msg=$(sed -n 1p <<< "$out")
	cmdl=$(sed -n 2p <<< "$out")
	caret=$(sed -n 3p <<< "$out")
	col=$(awk '{ print index($0, "^") - 1 }' <<< "$caret")
	if [ $st != 0 ] && [ $st -lt 128 ] && [ "$msg" = "fhook: error: $b" ] && [ "$col" = "$a" ] &&
	   [[ $cmdl == "  Command: "* ]] && [ "$(tr -d ' ^' <<< "$caret")" = "" ]; then
		echo "PASS $name"
	else
		echo "FAIL $name: '$spec' printed '$msg' caret at $col (status $st), expected '$b' at $a"
	fi
done < tests/events/conformance.tsv
[ $n -ge 80 ] && echo "PASS conformance/size" || echo "FAIL conformance/size: only $n specs"
