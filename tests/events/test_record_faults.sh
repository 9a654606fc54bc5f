#!/bin/bash
# What every process of a suite pays under `fhook record`: a shell that
# starts many short untraced programs (a test suite's rm, cmp, mkdir),
# recorded, against the same shell run as it is.  The minor page faults of
# the whole tree for two loop lengths: their difference is what each more
# child costs (its fork, libfhook preloaded, the session), with the fixed
# costs (the command, the shell) cancelled.  A count, not a time: it does
# not depend on the load of the machine.
#
# Measured (Debian 12, x86-64), each child of the shell:
#   dash: 49 faults untraced, +13 to +15 recorded; +19 to +21 on a later
#         machine of the same kind (the same commit measured both ways),
#         bash +29 to +35 there
#   bash: 93 faults untraced, +19 to +26 recorded, +29 to +34 once
#         kprobe frames were inherited at fork (the parent shell's
#         copy-on-write faults after each fork depend on whether the
#         child exec'd first, which is the machine's timing: a few faults
#         from one machine to another)
# (dash +17 to +20, bash +27 to +30 while each program announced its
# objects at start-up, read the descriptions' page for kprobe events,
# faulted in crti's _fini at exit and mapped libfhook in three segments;
# dash +25, bash +37 while every process parsed the event descriptions
# at start-up, a forked child bound memcmp() lazily before its exec and
# wrote 8 KiB of ring pointers, and the set-up and fork code was spread
# over libfhook's text; dash +30 when a forked child still announced its
# objects before it exec'd and libfhook needed liburcu-bp).  The bounds
# are the measurements and a few faults of noise: on a machine of the
# same kind at a load average of 10 (other builds and emulators running),
# the same commit measured dash +22 to +24 and bash +35 to +42.
set -o pipefail
cd "${FHOOK_ROOT:-$(dirname "$0")/../..}" || exit 2
F=$PWD/build/fhook
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
N1=20
N2=60

. tests/faults.sh
if ! faults_build "$T"; then
	echo "FAIL record_faults_build: cc failed"
	exit 1
fi
# the suite's last program has a site the recording takes (a run that traces
# nothing fails): one more child in both lengths, which cancels out
printf '__attribute__((noinline)) int mark(int x) { __asm__ volatile(""); return x; }\nint main(void) { return mark(0); }\n' > "$T/mark.c"
if ! cc -O1 $("$F" cflags) -o "$T/mark" "$T/mark.c"; then
	echo "FAIL record_faults_build: cc failed"
	exit 1
fi
loop() { echo "i=0; while [ \$i -lt $1 ]; do /bin/true; i=\$((i + 1)); done; $T/mark"; }

# measure NAME SHELL BOUND
measure() {
	local name=$1 sh=$2 bound=$3 p1 p2 r1 r2 plain added

	if ! p1=$(least 3 "$T/minflt" "$sh" -c "$(loop $N1)") ||
	   ! p2=$(least 3 "$T/minflt" "$sh" -c "$(loop $N2)") ||
	   ! r1=$(least 3 "$T/minflt" "$F" record -e 'f mark' -o "$T/r.rec" -- \
		  "$sh" -c "$(loop $N1)" 2>/dev/null) ||
	   ! r2=$(least 3 "$T/minflt" "$F" record -e 'f mark' -o "$T/r.rec" -- \
		  "$sh" -c "$(loop $N2)" 2>/dev/null); then
		echo "FAIL ${name}_run: a run failed"
		return
	fi
	plain=$(( (p2 - p1) / (N2 - N1) ))
	added=$(( (r2 - r1) / (N2 - N1) - plain ))
	bounded "$name" "$added" "$bound" \
		"a child of $sh: $plain faults, +$added recorded (bound +$bound)"
}

measure record_faults /bin/sh 25
if [ -x /bin/bash ]; then
	measure record_faults_bash /bin/bash 44
else
	echo "SKIP record_faults_bash: no /bin/bash"
fi
