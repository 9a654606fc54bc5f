#!/bin/bash
# The records the trampolines write themselves (x86-64: graph_rec.S,
# rethook_tramp.S; aarch64: graph_rec.S) and those C writes (another cpu, a
# full ring, a signal handler's), read back in order: three threads on
# fewer cores, yielding, each signalled at any moment by a fourth whose
# handler calls a traced function.  Every thread's records in time order
# (never a step back; two records may share a time: the TSC of this kind
# of machine counts in steps of about 10 ns, 21 ticks on the 2.1 GHz EPYC
# here), every exit after its entry and matching it (a signal handler's
# calls nested anywhere), every call of f() and g() there once, nothing
# lost, and every event's time within the program's own monotonic clock
# readings around the threads.  On aarch64 also of the program built with
# pointer authentication and BTI (rec_order_prog_pac: the tests' names end
# in _pac).
set -o pipefail
cd "${FHOOK_ROOT:-$(dirname "$0")/../..}" || exit 2
B=${FHOOK_BUILD:-build}
FHOOK=${FHOOK_CLI:-$B/fhook}
P=$B/tests/fprobe/rec_order_prog
if [ ! -x "$FHOOK" ] || [ ! -x "$P" ]; then
	echo "SKIP rec_order: $FHOOK or $P not built"
	exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
N=100000
# the clock's readings and the recording's may differ by the conversion of
# the TSC to the monotonic clock: well under a millisecond
SLACK=1000000
# The trampolines write records only with the arch's counter for a clock,
# which fhook picks by itself where the kernel keeps time with it: an
# aarch64 machine's arch_sys_counter, not the x86-64 host of qemu-user.
CLOCK=()
PROGS=$P
if [ "${FHOOK_TEST_ARCH:-$(uname -m)}" = aarch64 ]; then
	CLOCK=(--clock tsc)
	[ -x "${P}_pac" ] && PROGS="$P ${P}_pac"
fi

# check PROG SUFFIX: PROG recorded and its records checked, each test's name + SUFFIX
check() {
	local P=$1 sfx=$2 t0 t1 hc
	if ! timeout 120 "$FHOOK" record "${CLOCK[@]}" -o "$tmp/o.rec" -- "$P" $N >"$tmp/out" 2>"$tmp/err"; then
		echo "FAIL rec_order_recorded$sfx: $(tail -3 "$tmp/err")"
		return
	fi
	if grep -q ' 0 lost' "$tmp/err"; then
		echo "PASS rec_order_nothing_lost$sfx"
	else
		echo "FAIL rec_order_nothing_lost$sfx: $(tail -1 "$tmp/err")"
	fi
	read -r _ t0 < <(grep '^t0 ' "$tmp/out")
	read -r _ t1 < <(grep '^t1 ' "$tmp/out")
	read -r _ hc < <(grep '^h ' "$tmp/out")
	if ! timeout 120 "$FHOOK" replay --format json "$tmp/o.rec" >"$tmp/o.json" 2>"$tmp/rerr"; then
		echo "FAIL rec_order_replayed$sfx: $(tail -3 "$tmp/rerr")"
		return
	fi

	awk -v sfx="$sfx" -v t0="$t0" -v t1="$t1" -v slack=$SLACK -v n=$N -v hc="$hc" '
	match($0, /"tid":[0-9]+/) { tid = substr($0, RSTART + 6, RLENGTH - 6) }
	match($0, /"ts":[0-9]+/) { ts = substr($0, RSTART + 5, RLENGTH - 5) + 0 }
	match($0, /"cpu":[0-9]+/) { cpu = substr($0, RSTART + 6, RLENGTH - 6) }
	match($0, /"type":"[a-z]+"/) { ty = substr($0, RSTART + 8, RLENGTH - 9) }
	match($0, /"func":"[^"]*"/) { fn = substr($0, RSTART + 8, RLENGTH - 9) }
	{
		if ((tid in last) && ts < last[tid]) {
			if (!unordered++)
				first_bad = sprintf("tid %s: %s %s at %.0f after %s %s at %.0f, cpu %s after %s", tid, ty, fn, ts, lty[tid], lfn[tid], last[tid], cpu, lcpu[tid])
		}
		last[tid] = ts; lty[tid] = ty; lfn[tid] = fn; lcpu[tid] = cpu
		if (ty == "entry") {
			stack[tid, ++depth[tid]] = fn
		} else if (ty == "exit") {
			if (depth[tid] < 1 || stack[tid, depth[tid]] != fn) {
				if (!mismatched++)
					first_mis = sprintf("tid %s: exit of %s, top %s", tid, fn,
							    depth[tid] ? stack[tid, depth[tid]] : "(none)")
			} else {
				depth[tid]--
			}
		}
		if (fn == "f" || fn == "g" || fn == "h" || fn == "on_sig") {
			if (ts < t0 - slack || ts > t1 + slack)
				if (!outside++)
					first_out = sprintf("%s %s at %.0f, the clock read %.0f and %.0f", ty, fn, ts, t0, t1)
			calls[tid, fn, ty]++
			if (!(tid in seen)) { seen[tid] = 1; tids[++ntid] = tid }
		}
		if (fn == "h")
			h[ty]++
	}
	END {
		print (unordered ? "FAIL rec_order_in_time" sfx ": " unordered " back in time, first " first_bad \
				 : "PASS rec_order_in_time" sfx)
		print (mismatched ? "FAIL rec_order_nested" sfx ": " mismatched " exits not of the top call, first " first_mis \
				  : "PASS rec_order_nested" sfx)
		print (outside ? "FAIL rec_order_clock" sfx ": " outside " outside the clock, first " first_out \
			       : "PASS rec_order_clock" sfx)
		workers = 0; wrong = ""
		for (i = 1; i <= ntid; i++) {
			t = tids[i]
			if (!calls[t, "f", "entry"])
				continue
			workers++
			if (calls[t, "f", "entry"] != n || calls[t, "f", "exit"] != n ||
			    calls[t, "g", "entry"] != n || calls[t, "g", "exit"] != n)
				wrong = wrong sprintf(" tid %s: f %d/%d g %d/%d", t, calls[t, "f", "entry"],
						      calls[t, "f", "exit"], calls[t, "g", "entry"], calls[t, "g", "exit"])
		}
		print (workers == 3 && wrong == "" ? "PASS rec_order_counts" sfx \
			: "FAIL rec_order_counts" sfx ": " workers " threads with f;" wrong)
		print (h["entry"] > 0 && h["entry"] == h["exit"] && h["entry"] <= hc ? \
			"PASS rec_order_signal_calls" sfx : \
			"FAIL rec_order_signal_calls" sfx ": h " h["entry"] + 0 "/" h["exit"] + 0 " recorded, " hc " made")
	}' "$tmp/o.json"
}

for p in $PROGS; do
	case $p in *_pac) check "$p" _pac ;; *) check "$p" "" ;; esac
done
