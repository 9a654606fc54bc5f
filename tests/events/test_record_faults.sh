#!/bin/bash
# What every process of a suite pays under `fhook record`: a shell that
# starts many short untraced programs (a test suite's rm, cmp, mkdir),
# recorded, against the same shell run as it is.  The minor page faults of
# the whole tree for two loop lengths: their difference is what each more
# child costs (its fork, libfhook preloaded, the session), with the fixed
# costs (the command, the shell) cancelled.  A count, not a time: it does
# not depend on the load of the machine.
#
# Measured (Debian 12, x86-64, dash): 49 faults a child untraced, +17 or
# +18 recorded (+24 to +26 while every process parsed the event
# descriptions at start-up and its set-up code was spread over libfhook's
# text, +30 when a forked child still announced its objects before it
# exec'd and libfhook needed liburcu-bp).  The bound is the measurement and
# a few faults of noise.
set -o pipefail
cd "${FHOOK_ROOT:-$(dirname "$0")/../..}" || exit 2
F=$PWD/build/fhook
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
BOUND=22
N1=20
N2=60

. tests/faults.sh
if ! faults_build "$T"; then
	echo "FAIL record_faults_build: cc failed"
	exit 1
fi
loop() { echo "i=0; while [ \$i -lt $1 ]; do /bin/true; i=\$((i + 1)); done"; }
if ! p1=$(least 3 "$T/minflt" /bin/sh -c "$(loop $N1)") ||
   ! p2=$(least 3 "$T/minflt" /bin/sh -c "$(loop $N2)") ||
   ! r1=$(least 3 "$T/minflt" "$F" record -e 'f json_loads' -o "$T/r.rec" -- /bin/sh -c "$(loop $N1)" 2>/dev/null) ||
   ! r2=$(least 3 "$T/minflt" "$F" record -e 'f json_loads' -o "$T/r.rec" -- /bin/sh -c "$(loop $N2)" 2>/dev/null); then
	echo "FAIL record_faults_run: a run failed"
	exit 1
fi
plain=$(( (p2 - p1) / (N2 - N1) ))
added=$(( (r2 - r1) / (N2 - N1) - plain ))
if [ "$added" -le "$BOUND" ]; then
	echo "PASS record_faults: a child: $plain faults, +$added recorded (bound +$BOUND)"
else
	echo "FAIL record_faults: a child: $plain faults, +$added recorded (bound +$BOUND)"
fi
