#!/bin/bash
# make test-real: real programs' own test suites under fhook (docs/real-programs.md).
#
# For each program (Debian 12 source package, built out of tree under
# build/real/ with `fhook cflags` added to CFLAGS), its own test suite runs
#   (a) untraced,
#   (b) under one `fhook record -e 'f *' -e 'f *%return' -o FILE`, following the
#       harness and every child; the trace is checked for completeness,
#   (c) with tests/real/toggle.c preloaded: an fprobe on every function
#       registered, disabled, enabled and unregistered in a loop in every process.
# Prints "PASS name" / "FAIL name: why" / "SKIP name: why" and a total line.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=$ROOT/build
R=$B/real
FH=$B/fhook
TIMEOUT=${FHOOK_REAL_TIMEOUT:-300}
npass=0 nfail=0 nskip=0
pass() { echo "PASS $1"; npass=$((npass + 1)); }
fail() { echo "FAIL $1: $2"; nfail=$((nfail + 1)); }
skip() { echo "SKIP $1: $2"; nskip=$((nskip + 1)); }
say() { echo "real: $*" >&2; }
finish() { echo "$npass passed, $nfail failed, $nskip skipped"; [ $nfail -eq 0 ]; exit $?; }

cd "$ROOT"
if [ ! -x "$FH" ] || [ ! -e "$B/libfhook.so" ]; then
	make -s all >/dev/null || { fail build "make all failed"; finish; }
fi
mkdir -p "$R/src"

# --- attaching to a running process, the long runs ---------------------------------
# tests/attach's cycles (fhook trace -p, and patch -p / unpatch -p, on the 8
# busy threads of att_prog, which check their own results) 100 times each;
# `make test` runs fewer.  Their PASS/FAIL lines, named attach-*.
attach_cycles() {
	local t=$1 out rc st name rest
	out=$(FHOOK_ATTACH_CYCLES=100 timeout "$TIMEOUT" bash "tests/attach/test_$t.sh" 2>&1)
	rc=$?
	while read -r st name rest; do
		case $st in
		PASS) pass "attach-$name" ;;
		FAIL) fail "attach-${name%:}" "$rest" ;;
		SKIP) skip "attach-${name%:}" "$rest" ;;
		esac
	done <<< "$out"
	[ $rc = 0 ] || fail "attach-$t" "exit status $rc"
}
if [ -z "${FHOOK_REAL_BUILD_ONLY:-}" ] && [ -z "${FHOOK_REAL_ONLY:-}" ]; then
	say "attach: 100 cycles of trace -p and of patch -p/unpatch"
	attach_cycles trace
	attach_cycles patch
fi

# --- source packages -----------------------------------------------------------
APT="apt-get -o DPkg::Lock::Timeout=300"
if [ "$(id -u)" != 0 ]; then
	skip setup "not root (apt-get install/source needs root)"; finish
fi
if ! grep -rqs '^Types:.*deb-src' /etc/apt/sources.list.d/ &&
   ! grep -rqs '^deb-src' /etc/apt/sources.list /etc/apt/sources.list.d/; then
	# the machine's own Debian entries (its mirror, suites and key), as deb-src
	{
		echo "# Added by fhook's tests/real/run.sh: source packages for make test-real."
		# deb822 paragraphs in any field order; comments dropped
		awk 'BEGIN { RS = ""; FS = "\n" }
		     { out = ""; src = 0
		       for (i = 1; i <= NF; i++) {
			       if ($i ~ /^#/) continue
			       if ($i ~ /^Types:/) {
				       if ($i !~ /[: ]deb( |$)/) { src = -1; break }
				       $i = "Types: deb-src"; src = 1
			       }
			       out = out $i "\n"
		       }
		       if (src == 1) print out }' /etc/apt/sources.list.d/*.sources 2>/dev/null
	} > /etc/apt/sources.list.d/fhook-src.sources
	sed -n 's/^deb \(.*\)/deb-src \1/p' /etc/apt/sources.list 2>/dev/null \
		> /etc/apt/sources.list.d/fhook-src.list
	[ -s /etc/apt/sources.list.d/fhook-src.list ] || rm -f /etc/apt/sources.list.d/fhook-src.list
	grep -q '^Types' /etc/apt/sources.list.d/fhook-src.sources ||
		rm -f /etc/apt/sources.list.d/fhook-src.sources
fi
if ! grep -rqs '^Types:.*deb-src' /etc/apt/sources.list.d/ &&
   ! grep -rqs '^deb-src' /etc/apt/sources.list /etc/apt/sources.list.d/; then
	cat > /etc/apt/sources.list.d/fhook-src.sources <<'SRC'
# Added by fhook's tests/real/run.sh: source packages for make test-real.
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
fi
if ! apt-cache showsrc zlib 2>/dev/null | grep -q '^Package:'; then
	say "apt-get update"
	$APT update -qq >/dev/null 2>&1
fi
# what the three builds need (apt-get build-dep would add debhelper, ruby
# and valgrind for the packaging and documentation we do not build)
say "apt-get install the build tools"
$APT install -y -qq --no-install-recommends dpkg-dev xz-utils bzip2 autoconf automake \
	libtool make bison flex libonig-dev >"$R/install.log" 2>&1 ||
	say "apt-get install failed (see $R/install.log)"

fetch() {	# fetch PKG DIRGLOB: the unpacked source tree
	local d
	d=$(ls -d "$R"/src/$2 2>/dev/null | head -1)
	if [ -z "$d" ]; then
		(cd "$R/src" && $APT source -qq "$1" >"$R/src/$1.log" 2>&1)
		d=$(ls -d "$R"/src/$2 2>/dev/null | head -1)
	fi
	echo "$d"
}

# --- helpers -------------------------------------------------------------------
CFL="-O2 -g $($FH cflags)"
cc -std=gnu11 -O2 -g -Wall -fPIC -shared -Iinclude -o "$R/toggle.so" tests/real/toggle.c \
	-L"$B" -lfhook -lpthread || { fail build "tests/real/toggle.c"; finish; }
PRE="$B/libfhook.so:$R/toggle.so"

# suite NAME DIR OKTEST CMD...: run CMD in DIR (already prefixed), time it,
# leave the output in $R/NAME.out; OKTEST is a shell test on it
run_suite() {
	local name=$1 dir=$2 ok=$3 t0 t1 rc
	shift 3
	t0=$(date +%s.%N)
	(cd "$dir" && timeout "$TIMEOUT" "$@") >"$R/$name.out" 2>&1
	rc=$?
	t1=$(date +%s.%N)
	SECS=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
	if [ $rc = 124 ]; then WHY="timed out after ${TIMEOUT}s"; return 1; fi
	if [ $rc != 0 ]; then WHY="exit status $rc (see $R/$name.out)"; return 1; fi
	if ! eval "$ok" <"$R/$name.out"; then WHY="suite output not as expected ($R/$name.out)"; return 1; fi
	return 0
}

# balance TRACE: per thread, every exit must be the innermost open entry;
# prints "entries exits open unmatched"
balance() {
	awk '
	/: ___entry: \(/ {
		tid = $1; sub(/.*-/, "", tid)
		f = $0; sub(/.*___entry: \(/, "", f); sub(/\+0x.*/, "", f)
		st[tid, ++d[tid]] = f; e++; next }
	/: ___exit: \(/ {
		tid = $1; sub(/.*-/, "", tid)
		f = $0; sub(/.*<- /, "", f); sub(/\).*/, "", f)
		x++
		# frames left by longjmp/exit may be skipped: pop down to the match
		for (i = d[tid]; i > 0 && st[tid, i] != f; i--) ;
		if (i == 0) { bad++; next }
		d[tid] = i - 1; next }
	END { for (t in d) o += d[t]; printf "%d %d %d %d\n", e, x, o, bad }' "$1"
}

logsum() {	# logsum FILE KEY
	sed -n "s/.* $2=\([0-9]*\).*/\1/p" "$1" | awk '{ s += $1 } END { print s + 0 }'
}

# three_ways NAME DIR OKTEST CMD...
three_ways() {
	local name=$1 dir=$2 ok=$3 ev nm lost ent ex open bad cnt
	shift 3
	# FHOOK_REAL_BUILD_ONLY=1: the builds only (make bench uses jansson's)
	if [ -n "${FHOOK_REAL_BUILD_ONLY:-}" ]; then
		pass "$name-built"
		return
	fi
	# (a)
	if run_suite "$name-a" "$dir" "$ok" "$@"; then
		pass "$name-a-untraced (${SECS}s)"
	else
		fail "$name-a-untraced" "$WHY"; return
	fi
	# (b)
	rm -f "$R/$name.trace"
	if [ -n "${NO_TRACE:-}" ]; then
		skip "$name-b-traced" "$NO_TRACE"
	elif run_suite "$name-b" "$dir" "$ok" "$FH" record -e 'f *' -e 'f *%return' \
			-o "$R/$name.rec" -- "$@"; then
		pass "$name-b-recorded (${SECS}s)"
	else
		fail "$name-b-recorded" "$WHY"
	fi
	[ -n "${NO_TRACE:-}" ] || {
	read -r ev nm lost < <(sed -n 's/^fhook: record: \([0-9]*\) events, \([0-9]*\) nmissed, \([0-9]*\) lost, .*/\1 \2 \3/p' "$R/$name-b.out" | tail -1)
	# the recording read back as the kernel's trace text
	"$FH" replay -o "$R/$name.trace" "$R/$name.rec" 2>"$R/$name-replay.err" ||
		fail "$name-b-replay" "$(head -3 "$R/$name-replay.err")"
	rm -f "$R/$name.rec"
	if [ -z "${ev:-}" ]; then
		fail "$name-b-summary" "no 'fhook: record:' summary line"
	else
		read -r ent ex open bad < <(balance "$R/$name.trace")
		if [ "$ev" != $((ent + ex)) ]; then
			fail "$name-b-file" "summary says $ev events, the file has $((ent + ex))"
		else
			pass "$name-b-file ($ev events = $ent entries + $ex exits in $R/$name.trace)"
		fi
		if [ "$nm" != 0 ] || [ "$lost" != 0 ]; then
			fail "$name-b-nolosses" "$nm nmissed, $lost lost"
		else
			pass "$name-b-nolosses"
		fi
		if [ "$bad" != 0 ] || [ $ent != $((ex + open)) ]; then
			fail "$name-b-balance" "$ent entries, $ex exits, $open open at exit, $bad exits without their entry"
		else
			pass "$name-b-balance ($ent entries = $ex exits + $open frames open at exit)"
		fi
		# the independent count: the same suite with a counting fprobe
		rm -f "$R/$name.count"
		if FHOOK_REAL_MODE=count FHOOK_REAL_LOG="$R/$name.count" LD_PRELOAD="$PRE" \
				run_suite "$name-count" "$dir" "$ok" "$@"; then
			cnt=$(logsum "$R/$name.count" entries)
			cm=$(logsum "$R/$name.count" nmissed)
			if [ $((ent + nm + lost)) = $((cnt + cm)) ]; then
				pass "$name-b-count (trace entries + nmissed + lost = $((ent + nm + lost)) = calls counted)"
			else
				fail "$name-b-count" "trace has $ent entries + $nm nmissed + $lost lost, a counting fprobe saw $cnt calls + $cm missed"
			fi
		else
			fail "$name-b-count" "suite under the counting fprobe: $WHY"
		fi
	fi
	}
	# a jq trace is gigabytes: keep only small ones
	[ ! -f "$R/$name.trace" ] || [ $(stat -c %s "$R/$name.trace") -lt 100000000 ] ||
		rm -f "$R/$name.trace"
	# (c)
	rm -f "$R/$name.toggle"
	if FHOOK_REAL_LOG="$R/$name.toggle" LD_PRELOAD="$PRE" \
			run_suite "$name-c" "$dir" "$ok" "$@"; then
		pass "$name-c-toggled (${SECS}s; $(logsum "$R/$name.toggle" cycles) register/unregister cycles, $(logsum "$R/$name.toggle" entries) calls probed in $(wc -l <"$R/$name.toggle") processes)"
	else
		fail "$name-c-toggled" "$WHY"
	fi
	if [ -s "$R/$name.toggle" ]; then
		bad=$(logsum "$R/$name.toggle" bad); err=$(logsum "$R/$name.toggle" errors)
		if [ "$bad" != 0 ] || [ "$err" != 0 ]; then
			fail "$name-c-handlers" "$bad exits with another call's entry data, $err register/unregister errors or hangs ($R/$name.toggle)"
		else
			pass "$name-c-handlers"
		fi
	fi
}

# --- the programs --------------------------------------------------------------
# FHOOK_REAL_ONLY="zlib jansson" runs a subset
want() { [ -z "${FHOOK_REAL_ONLY:-}" ] || [[ " $FHOOK_REAL_ONLY " == *" $1 "* ]]; }

# prepare NAME GLOB BUILT: $SRC is NAME's unpacked source; $R/NAME its
# out-of-tree build, made by build_NAME (run there) unless $R/NAME/BUILT exists
prepare() {
	local name=$1 glob=$2 built=$3
	SRC=$(fetch "$name" "$glob")
	[ -n "$SRC" ] || { skip "$name" "apt-get source $name failed (see $R/src/$name.log)"; return 1; }
	if [ ! -x "$R/$name/$built" ]; then
		say "building $name"
		rm -rf "$R/$name" && mkdir -p "$R/$name"
		(cd "$R/$name" && "build_$name") >"$R/$name.build.log" 2>&1
	fi
	[ -x "$R/$name/$built" ] || { fail "$name-build" "see $R/$name.build.log"; return 1; }
}

# configure in an autotools tree without a generated configure script
autoreconf_src() { (cd "$SRC" && { [ -x configure ] || autoreconf -fi; }); }

# zlib: make test (example, minigzip; static, shared, 64-bit)
build_zlib() { CFLAGS="$CFL" "$SRC/configure" && make -j2; }
real_zlib() {
	prepare zlib 'zlib-1.*' example || return
	NO_TRACE=
	three_ways zlib "$R/zlib" '[ $(grep -c "\*\*\* zlib .*test OK \*\*\*") = 3 ]' make test
}

# jansson: make check in test/ (run-suites: api, encoding-flags, invalid,
# invalid-unicode, valid: one json_process or test_* process per case)
build_jansson() {
	autoreconf_src && CFLAGS="$CFL" "$SRC/configure" --disable-static &&
		make -j2 && make -C test -j2 check TESTS=
}
real_jansson() {
	prepare jansson 'jansson-2.*' test/bin/json_process || return
	NO_TRACE=
	three_ways jansson "$R/jansson/test" 'grep -q "^PASS: run-suites"' make check
}

# jq: make check (mantest, jqtest, onigtest)
build_jq() {
	autoreconf_src && CFLAGS="$CFL" "$SRC/configure" --disable-docs \
		--disable-maintainer-mode --disable-valgrind --with-oniguruma=yes && make -j2
}
real_jq() {
	prepare jq 'jq-1.*' jq || return
	# jq 1.6's test scripts run $srcdir/jq
	ln -sf "$R/jq/jq" "$SRC/jq"
	# jq's suite makes ~100 million calls: a full text trace is tens of GB
	# and takes far beyond the budget (FHOOK_REAL_JQ_TRACE=1 runs it anyway)
	NO_TRACE=
	[ -n "${FHOOK_REAL_JQ_TRACE:-}" ] ||
		NO_TRACE="about 100 million calls (tens of GB of text trace); FHOOK_REAL_JQ_TRACE=1 runs it"
	three_ways jq "$R/jq" 'grep -q "^# PASS: *3$"' \
		env NO_VALGRIND=1 make check TESTS="tests/mantest tests/jqtest tests/onigtest"
}

for p in zlib jansson jq; do
	want $p && real_$p
done
finish
