# SPDX-License-Identifier: LGPL-2.1-or-later
# Sourced by bench/run.sh (or by hand after it: `. build/bench/results.vars;
# ROOT=$PWD B=$PWD/build/bench . bench/report.sh`): writes bench/RESULTS.md
# and bench/results.png from the measurements in the shell's variables.

RES=${RES:-$ROOT/bench/RESULTS.md}
PNG=${PNG:-$ROOT/bench/results.png}

# calc EXPR: awk arithmetic, "" when an operand is missing
calc() { awk "BEGIN { printf \"%s\", $1 }" 2>/dev/null; }
num() { [ -n "${1:-}" ] && [ "$1" != "-" ]; }
f1() { num "${1:-}" && awk -v v="$1" 'BEGIN { printf "%.1f", v }' || printf '–'; }
f2() { num "${1:-}" && awk -v v="$1" 'BEGIN { printf "%.2f", v }' || printf '–'; }
ms() { num "${1:-}" && awk -v v="$1" 'BEGIN { printf "%.1f", v / 1000 }' || printf '–'; }
# ratio A B: "A / B" as "N.N×", guarding small or missing values
ratio()
{
	num "${1:-}" && num "${2:-}" || { printf '–'; return; }
	awk -v a="$1" -v b="$2" 'BEGIN {
		if (b <= 0.05) { print "–"; exit }
		r = a / b; printf (r >= 10 ? "%.0f×" : r >= 0.1 ? "%.1f×" : "%.2f×"), r }'
}
# over KEY BASEKEY: instructions of KEY over BASEKEY
over() { num "${IR[$1]:-}" && num "${IR[$2]:-}" && calc "${IR[$1]} - ${IR[$2]}" || printf ''; }
nsover() { num "${NS[$1]:-}" && num "${NS[$2]:-}" && calc "${NS[$1]} - ${NS[$2]}" || printf ''; }
# met VALUE LIMIT: "yes" / "**no**"
met() { num "${1:-}" || { printf '–'; return; }; awk -v v="$1" -v l="$2" 'BEGIN { print (v <= l ? "yes" : "**no**") }'; }

declare -A TARGET TVAL TOVER
TARGET[nop]="+1 over untraced"; TVAL[nop]=1; TOVER[nop]=plain
TARGET[empty]="≤ 40 over untraced (cyg hooks: 16, uftrace minimal: 5)"; TVAL[empty]=40; TOVER[empty]=plain
TARGET[empty-gp]="≤ 40 over untraced"; TVAL[empty-gp]=40; TOVER[empty-gp]=plain
TARGET[redirect-hit]="≤ 20 over calling the replacement directly"; TVAL[redirect-hit]=20; TOVER[redirect-hit]=direct
TARGET[redirect-miss]="≤ 20 over untraced"; TVAL[redirect-miss]=20; TOVER[redirect-miss]=plain
TARGET[inject-hit]="(as a redirected call) ≤ 20 over untraced"; TVAL[inject-hit]=20; TOVER[inject-hit]=plain
TARGET[inject-miss]="(as a caller not redirected) ≤ 20 over untraced"; TVAL[inject-miss]=20; TOVER[inject-miss]=plain
TARGET[fprobe-both]="≤ 50 over untraced"; TVAL[fprobe-both]=50; TOVER[fprobe-both]=plain
for m in ipmodify-hit ipmodify-miss ipmodify-np-hit ipmodify-np-miss ipmodify-args-hit ipmodify-args-miss; do
	TARGET[$m]="≤ 40 over untraced"; TVAL[$m]=40; TOVER[$m]=plain
done

TARGET[trace]="≤ 60 per call (stretch 50); ≥ 4× faster than uftrace record"; TVAL[trace]=60
TARGET[record]="≤ 60 per call (stretch 50); ≥ 4× faster than uftrace record"; TVAL[record]=60
TARGET[record-args]="(arguments through C: bench/COSTS.md)"
TARGET[flight]="(as fhook trace: the rings' wrap costs the threads nothing more)"
TARGET[floor]="(what fhook record / trace would cost with nothing but their records)"
TARGET[uftrace-pg]="(measured when the targets were set: 585-805 here)"
TARGET[cyg]="(measured when the targets were set: 16 over untraced)"
TARGET[lttng]="(measured when the targets were set: 842 here)"

CPU=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
if [ -z "${REV:-}" ]; then
	REV=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null)
	git -C "$ROOT" diff --quiet HEAD -- lib include 2>/dev/null ||
		REV="$REV + uncommitted changes in lib/ or include/"
fi
RUNDATE=${RUNDATE:-$(date -u '+%Y-%m-%d %H:%M UTC')}

{
echo "# fhook against its peers: \`make bench\` results"
echo
echo "Produced by \`make bench\` (bench/run.sh) on $RUNDATE, in one run:"
echo "$(nproc) cores ($CPU), shared and noisy, kernel $(uname -r), Debian $(cat /etc/debian_version),"
echo "gcc $(gcc -dumpfullversion), fhook at $REV; uftrace $(uftrace --version 2>/dev/null | head -1 | awk '{ print $2 }'),"
echo "valgrind $(valgrind --version 2>/dev/null | sed 's/valgrind-//'), lttng-ust $(dpkg-query -W -f='${Version}' liblttng-ust-dev 2>/dev/null), bpftrace $(bpftrace --version 2>/dev/null | awk '{ print $2 }')."
echo "Numbers are measured, never asserted; each target stands beside its number."
echo
echo "![fhook and its peers](results.png)"
echo
echo "## 1. Tight loop: \`tiny()\` called from a loop (bench/tight.c)"
echo
echo "Instructions per call: \`valgrind --tool=callgrind\` over the whole process (every"
echo "process, for uftrace: the traced program's), run with $N1 and $N2 calls, difference"
echo "divided by $((N2 - N1)): start-up and set-up cancel out; exact and repeatable."
echo "ns per call: the loop timed inside the program, median and min-max over $ROUNDS"
echo "interleaved rounds (every mode once per round)."
echo
echo "| mode | instr/call | over untraced | ns/call median (min-max) | target (instructions) | met |"
echo "|---|---:|---:|---:|---|---|"
for k in $ORDER; do
	if [ -n "${SKIP[$k]:-}" ]; then
		echo "| ${LABEL[$k]} | – | – | – | ${TARGET[$k]:-} | skipped: ${SKIP[$k]} |"
		continue
	fi
	ir=${IR[$k]:-}
	[ "$k" = uprobe ] && ir=
	o=$(over "$k" plain)
	m=""
	if [ -n "${TVAL[$k]:-}" ]; then
		if [ -n "${TOVER[$k]:-}" ]; then
			m=$(met "$(over "$k" "${TOVER[$k]}")" "${TVAL[$k]}")
			[ "${TOVER[$k]}" = direct ] && m="$m ($(f1 "$(over "$k" direct)") over direct)"
		else
			m=$(met "$ir" "${TVAL[$k]}")
		fi
	fi
	irs=$(f1 "$ir"); [ "$k" = uprobe ] && irs="n/a (kernel)"
	echo "| ${LABEL[$k]} | $irs | $(f1 "$o") | $(f2 "${NS[$k]:-}") ($(f2 "${NSMIN[$k]:-}")-$(f2 "${NSMAX[$k]:-}")) | ${TARGET[$k]:-} | $m |"
done
echo
echo "\"pad, no libfhook\" is the pad as gcc leaves it (five 1-byte nops), which the peers"
echo "that patch at run time (uftrace -P) start from; libfhook turns it into one 5-byte nop."
[ -n "${SKIP_IR_uprobe:-}" ] && echo "The uprobe has no instruction count: $SKIP_IR_uprobe."
[ -n "${LT_DISC:-}" ] && echo "LTTng session: $(echo $LT_DISC)."
[ -n "${TRACE_STAT:-}" ] && echo "fhook trace (last ns run): $TRACE_STAT; its text goes to a file in /tmp."
echo "Where each path's instructions go, and what stands between the paths and their targets:"
echo "[COSTS.md](COSTS.md)."
echo
echo "### Ratio to each peer (the peer's cost over untraced ÷ fhook's)"
echo
echo "Above 1×: fhook is cheaper by that factor; below 1×: the peer is cheaper."
echo
PEERS="cyg uftrace-pg uftrace-P lttng uprobe"
printf '| fhook mode |'
for p in $PEERS; do printf ' vs %s (instr) | vs %s (ns) |' "$p" "$p"; done
echo
printf '|---|'; for p in $PEERS; do printf -- '---:|---:|'; done; echo
for k in empty redirect-miss redirect-hit inject-hit fprobe-entry fprobe-both trace record; do
	[ -z "${SKIP[$k]:-}" ] || continue
	printf '| %s |' "${LABEL[$k]#fhook: }"
	for p in $PEERS; do
		if [ -n "${SKIP[$p]:-}" ]; then printf ' – | – |'; continue; fi
		ri=–; [ "$p" != uprobe ] && ri=$(ratio "$(over "$p" plain)" "$(over "$k" plain)")
		printf ' %s | %s |' "$ri" "$(ratio "$(nsover "$p" plain)" "$(nsover "$k" plain)")"
	done
	echo
done
if [ -z "${SKIP[trace]:-}" ] && num "${NS[trace]:-}" && num "${NS[uftrace-pg]:-}"; then
	echo
	echo "fhook trace against \`uftrace record\` (-pg) in this run: $(ratio "${NS[uftrace-pg]}" "${NS[trace]}") faster per call (target ≥ 4×)."
fi
if num "${NS[record]:-}" && num "${NS[uftrace-pg]:-}"; then
	echo
	echo "fhook record against \`uftrace record\` (-pg) in this run, both writing binary records to a file: $(ratio "${NS[uftrace-pg]}" "${NS[record]}") faster per call (target ≥ 4×)."
fi
echo
echo "## 2. Start-up: enabling every site of a program with 2,000 and 20,000 functions"
echo
echo "Generated programs (bench/gen_funcs.sh, bench/startup.c) built with \`$(build/fhook cflags 2>/dev/null | sed "s| -B.*| -B.../gcc-as/|")\`."
echo "fhook: the program links libfhook and registers one \`ftrace_ops\` with an empty"
echo "filter (every site) in \`main()\`; \"prepared\" is the same binary after \`fhook prepare\`."
echo "uftrace: \`uftrace record -P . PROG\` of the build without libfhook. Process time is"
echo "user + system CPU of the whole process tree (wait4), median of $ROUNDS interleaved"
echo "runs; \"added\" is over the same program run untraced. Instructions: callgrind over"
echo "every process of the tree. Minor page faults: the program's own (wait4), median."
[ -n "${ONLY:-}" ] && echo "This section alone was measured (\`BENCH_ONLY=startup\`) on $RUNDATE, fhook at $REV."
[ -n "${LOAD0:-}" ] && echo "Load average (1, 5, 15 min) of the machine: $LOAD0 at the start, ${LOAD1:-?} at the end; times stretch with it, page faults and instructions do not."
echo
echo "| measure | 2,000 functions | 20,000 functions | target (20,000) |"
echo "|---|---:|---:|---|"
row() { printf '| %s | %s | %s | %s |\n' "$1" "$2" "$3" "$4"; }
cpu() { ms "${SU[$1,cpu,$2]:-}"; }
added() { num "${SU[$1,cpu,$2]:-}" && num "${SU[$1,cpu,pad]:-}" && ms "$(calc "${SU[$1,cpu,$2]} - ${SU[$1,cpu,pad]}")" || printf '–'; }
irper() { num "${SU[$1,ir,$2]:-}" && num "${SU[$1,ir,${3:-pad}]:-}" && calc "(${SU[$1,ir,$2]} - ${SU[$1,ir,${3:-pad}]}) / $1" || printf ''; }
row "untraced: process CPU time, ms" "$(cpu 2000 pad)" "$(cpu 20000 pad)" ""
row "fhook: process CPU time, ms" "$(cpu 2000 fhook-all)" "$(cpu 20000 fhook-all)" ""
row "fhook: **added** process CPU time, ms" "$(added 2000 fhook-all)" "$(added 20000 fhook-all)" "< 5 ms: $(met "$(calc "(${SU[20000,cpu,fhook-all]:-0} - ${SU[20000,cpu,pad]:-0}) / 1000")" 5)"
row "… of which libfhook start-up (no ops), ms" "$(added 2000 fhook-none)" "$(added 20000 fhook-none)" ""
row "fhook, prepared binary: **added** process CPU time, ms" "$(added 2000 prep-all)" "$(added 20000 prep-all)" "< 5 ms: $(met "$(calc "(${SU[20000,cpu,prep-all]:-0} - ${SU[20000,cpu,pad]:-0}) / 1000")" 5)"
row "… of which libfhook start-up, prepared (no ops), ms" "$(added 2000 prep-none)" "$(added 20000 prep-none)" ""
flt() { printf '%s / %s / %s / %s' "${SU[$1,flt,pad]:-–}" "${SU[$1,flt,fhook-none]:-–}" "${SU[$1,flt,fhook-all]:-–}" "${SU[$1,flt,prep-all]:-–}"; }
row "minor page faults: untraced / libfhook started / every site enabled / the same, prepared" "$(flt 2000)" "$(flt 20000)" ""
row "fhook: \`register_ftrace_function\` (all sites), ms, median (min-max)" \
	"$(f2 "${SU[2000,en,fhook-all]:-}") ($(f2 "${SU[2000,enmin,fhook-all]:-}")-$(f2 "${SU[2000,enmax,fhook-all]:-}"))" \
	"$(f2 "${SU[20000,en,fhook-all]:-}") ($(f2 "${SU[20000,enmin,fhook-all]:-}")-$(f2 "${SU[20000,enmax,fhook-all]:-}"))" ""
row "uftrace record -P .: process CPU time, ms" "$(cpu 2000 uftrace)" "$(cpu 20000 uftrace)" ""
row "uftrace record -P .: **added** process CPU time, ms" "$(added 2000 uftrace)" "$(added 20000 uftrace)" "(measured when the targets were set: 33-38 ms)"
row "fhook: added instructions per function" "$(f1 "$(irper 2000 fhook-all)")" "$(f1 "$(irper 20000 fhook-all)")" "< 400: $(met "$(irper 20000 fhook-all)" 400)"
row "… libfhook start-up (find, rewrite pads)" "$(f1 "$(irper 2000 fhook-none)")" "$(f1 "$(irper 20000 fhook-none)")" ""
row "… enabling every site" "$(f1 "$(irper 2000 fhook-all fhook-none)")" "$(f1 "$(irper 20000 fhook-all fhook-none)")" ""
row "fhook, prepared: added instructions per function" "$(f1 "$(irper 2000 prep-all)")" "$(f1 "$(irper 20000 prep-all)")" "< 1,000: $(met "$(irper 20000 prep-all)" 1000)"
row "uftrace record -P .: added instructions per function" "$(f1 "$(irper 2000 uftrace)")" "$(f1 "$(irper 20000 uftrace)")" "(measured when the targets were set: about 6,000)"
# the per-function slope between the two sizes: fixed costs cancel
slope() { num "${SU[2000,ir,$1]:-}" && num "${SU[20000,ir,$1]:-}" && num "${SU[2000,ir,${2:-pad}]:-}" && num "${SU[20000,ir,${2:-pad}]:-}" &&
	calc "((${SU[20000,ir,$1]} - ${SU[20000,ir,${2:-pad}]}) - (${SU[2000,ir,$1]} - ${SU[2000,ir,${2:-pad}]})) / 18000" || printf ''; }
row "instructions per function, slope 2,000 → 20,000 (fixed costs cancel): fhook / prepared / uftrace -P ." "" \
	"$(f1 "$(slope fhook-all)") / $(f1 "$(slope prep-all)") / $(f1 "$(slope uftrace)")" "fhook < 1,000: $(met "$(slope fhook-all)" 1000)"
row "ratio uftrace ÷ fhook, added process time" "$(ratio "$(calc "${SU[2000,cpu,uftrace]:-0} - ${SU[2000,cpu,pad]:-0}")" "$(calc "${SU[2000,cpu,fhook-all]:-0} - ${SU[2000,cpu,pad]:-0}")")" \
	"$(ratio "$(calc "${SU[20000,cpu,uftrace]:-0} - ${SU[20000,cpu,pad]:-0}")" "$(calc "${SU[20000,cpu,fhook-all]:-0} - ${SU[20000,cpu,pad]:-0}")")" ""
row "ratio uftrace ÷ fhook, added instructions" "$(ratio "$(irper 2000 uftrace)" "$(irper 2000 fhook-all)")" "$(ratio "$(irper 20000 uftrace)" "$(irper 20000 fhook-all)")" ""
hb=""; num "${SU[20000,heap,fhook-all]:-}" && num "${SU[2000,heap,fhook-all]:-}" &&
	hb=$(calc "(${SU[20000,heap,fhook-all]} - ${SU[2000,heap,fhook-all]}) / 18000")
row "fhook: malloc'd bytes per site, all state after enabling (Δ 2,000 → 20,000)" \
	"$(f1 "$(calc "${SU[2000,heap,fhook-all]:-0} / 2000")") (total ÷ n)" "$(f1 "$(calc "${SU[20000,heap,fhook-all]:-0} / 20000")") (total ÷ n); Δ: $(f1 "$hb")" \
	"site record ≤ 16 B: \`struct dyn_ftrace\` is 16 B"
echo
echo "The malloc'd bytes count everything libfhook holds after start-up and enabling"
echo "(site records, symbol tables of every loaded object, filter state), not only the"
echo "16-byte \`struct dyn_ftrace\` site record."
echo
echo "Most of the added time is page faults, and the fault counts, unlike the times, do not"
echo "depend on the machine's load. On this virtual machine a fault costs tens of"
echo "microseconds (a fresh page 6-12 µs, the private copy of a text page that is already"
echo "mapped 20-100 µs), so every page a start-up touches counts: with 20,000 functions,"
echo "rewriting the pads copies the program's text pages (about 133), enabling every site"
echo "adds the site records and the list of writes (16 bytes a site each; the list is kept"
echo "for the next update), applied in one batch: every batch makes its pages writable and"
echo "serializes every thread three times, IPIs that wait for the busy CPUs of a loaded machine."
echo
echo "### What every traced process pays"
echo
echo "An empty program (\`int main(void) { return 0; }\`, no patchable site) run as it is and"
echo "with \`LD_PRELOAD\` of libfhook or of uftrace's libmcount: CPU time and minor page faults of"
echo "the program alone, median of $((ROUNDS * 7)) interleaved runs. Then a suite of many short"
echo "processes: jansson's \`make check\` in its test directory (about 700 processes under make"
echo "and sh, 215 of them built with \`fhook cflags\`; \`make test-real\` builds it), untraced and"
echo "under \`fhook record -e 'f json_loads'\` (libfhook in every process, one function"
echo "recorded), wall and CPU time of the whole tree, median of 3 interleaved runs."
echo
echo "| measure | untraced | libfhook | uftrace's libmcount | target |"
echo "|---|---:|---:|---:|---|"
eadd() { num "${SU[empty,$1,$2]:-}" && num "${SU[empty,$1,plain]:-}" && calc "${SU[empty,$1,$2]} - ${SU[empty,$1,plain]}" || printf ''; }
plus() { num "${1:-}" && printf ' (+%s)' "$1"; }
printf '| empty program: minor page faults | %s | %s%s | %s%s | ≤ +40: %s |\n' "${SU[empty,flt,plain]:-–}" \
	"${SU[empty,flt,fhook]:-–}" "$(plus "$(eadd flt fhook)")" "${SU[empty,flt,mcount]:-–}" "$(plus "$(eadd flt mcount)")" \
	"$(met "$(eadd flt fhook)" 40)"
printf '| empty program: process CPU time, ms | %s | %s%s | %s%s | ≤ +1 ms: %s |\n' "$(ms "${SU[empty,cpu,plain]:-}")" \
	"$(ms "${SU[empty,cpu,fhook]:-}")" "$(plus "$(ms "$(eadd cpu fhook)")")" "$(ms "${SU[empty,cpu,mcount]:-}")" \
	"$(plus "$(ms "$(eadd cpu mcount)")")" "$(met "$(calc "$(eadd cpu fhook) / 1000")" 1)"
echo
if [ -n "${SUITE_SKIP:-}" ]; then
	echo "jansson's suite: skipped: $SUITE_SKIP."
else
	echo "| jansson's \`make check\` | untraced | one function recorded | ratio | target |"
	echo "|---|---:|---:|---:|---|"
	sratio() { calc "${SU[suite,$1,one]:-0} / ${SU[suite,$1,plain]:-1}"; }
	printf '| wall time, s | %s | %s | %s× | ≤ 1.2×: %s |\n' "$(f2 "$(calc "${SU[suite,wall,plain]:-0} / 1000000")")" \
		"$(f2 "$(calc "${SU[suite,wall,one]:-0} / 1000000")")" "$(f2 "$(sratio wall)")" "$(met "$(sratio wall)" 1.2)"
	printf '| CPU time of the tree, s | %s | %s | %s× |  |\n' "$(f2 "$(calc "${SU[suite,cpu,plain]:-0} / 1000000")")" \
		"$(f2 "$(calc "${SU[suite,cpu,one]:-0} / 1000000")")" "$(f2 "$(sratio cpu)")"
	echo
	echo "fhook record on jansson's suite (last run): ${SUITE_STAT:-?}."
fi
echo
echo "## 3. A real program: bzip2 compressing a real input, every function traced"
echo
if [ -n "${W3:-}" ]; then
	echo "Skipped: $W3."
else
	echo "\`$BZVER\` from \`apt-get source bzip2\` (Debian 12), built three ways: untraced, with"
	echo "\`$(build/fhook cflags 2>/dev/null | sed "s| -B.*| -B.../gcc-as/|")\` and with \`-pg\` (libbz2 linked statically, so that the"
	echo "compressor's $BZFUNCS traceable functions are all in the program). Work: \`bzip2 -9 -c\` of"
	echo "the first $((INSZ / 1000)) kB of a tar of the kernel's UAPI headers (/usr/include/linux,"
	echo "asm-generic), $BZCALLS function calls (counted by uftrace). Every output is compared with"
	echo "the system bzip2's. Wall time of the whole process, median (min-max) of 3 interleaved runs."
	echo
	declare -A BZL
	BZL[plain]="untraced"
	BZL[pad]="pad, no libfhook"
	BZL[nop]="fhook: preloaded, no ops (5-byte nops)"
	BZL[fprobe-entry]="fhook: fprobe on \"*\", empty entry handler"
	BZL[fprobe-both]="fhook: fprobe on \"*\", empty entry + exit handlers"
	BZL[uftrace-pg]="uftrace record (-pg build)"
	BZL[uftrace-P]="uftrace record -P . (patchable build)"
	BZL[trace]="fhook trace, entry + exit events on \"*\", text to /dev/null"
	BZL[record]="fhook record (every function's entry and exit, to a file)"
	BZL[record-tsc]="fhook record --clock tsc (the TSC instead of clock_gettime)"
	BZL[record-kp]="fhook record of the untraced build (no sites: every function through kprobes)"
	echo "| mode | wall ms median (min-max) | slowdown vs untraced | uftrace -pg ÷ this | uftrace -P ÷ this | output |"
	echo "|---|---:|---:|---:|---:|---|"
	for v in $BZMODES; do
		num "${BZT[$v]:-}" || continue
		echo "| ${BZL[$v]} | $(ms "${BZT[$v]}") ($(ms "${BZTMIN[$v]}")-$(ms "${BZTMAX[$v]}")) | $(ratio "${BZT[$v]}" "${BZT[plain]}") | $(ratio "${BZT[uftrace-pg]:-}" "${BZT[$v]}") | $(ratio "${BZT[uftrace-P]:-}" "${BZT[$v]}") | $([ -n "${BZBAD[$v]:-}" ] && echo "**differs**" || echo same) |"
	done
	[ -n "${BZ_TRACE_STAT:-}" ] && echo && echo "fhook trace on bzip2 (last run, formatted as text to /dev/null): $BZ_TRACE_STAT."
	[ -n "${BZ_REC_STAT:-}" ] && echo && echo "fhook record on bzip2 (last run): ${BZ_REC_STAT%% in /*}. Target: 0 lost, and at least 2× faster than \`uftrace record\`: $(ratio "${BZT[uftrace-pg]:-}" "${BZT[record]:-}") here."
	if num "${TSC_NS:-}" && num "${BZT[record]:-}" && num "${BZT[plain]:-}" && [ "${BZCALLS:-0}" -gt 0 ]; then
		echo
		echo "The floor under it: \`fhook record\` adds $(f1 "$(calc "(${BZT[record]} - ${BZT[plain]}) * 1000 / $BZCALLS")") ns per call here (wall time over the"
		echo "untraced run, its start included, ÷ the calls); a timestamp costs $(f1 "$TSC_NS") ns on this machine"
		echo "(bench/tsc_cost.c: rdtsc back to back, best of 20 rounds), and a recorded call takes two,"
		echo "$(f1 "$(calc "2 * $TSC_NS")") ns. A slowdown of 1.4× would leave $(f1 "$(calc "0.4 * ${BZT[plain]} * 1000 / $BZCALLS")") ns per call for everything."
	fi
	[ -n "${BZ_KP_STAT:-}" ] && echo && echo "fhook record of the untraced build (last run): ${BZ_KP_STAT%% in /*}; its cost over the same recording with sites: $(ratio "$(calc "${BZT[record-kp]:-0} - ${BZT[plain]:-0}")" "$(calc "${BZT[record]:-0} - ${BZT[plain]:-0}")") (time added by the recording), and \`uftrace record -P .\` ÷ it: $(ratio "${BZT[uftrace-P]:-}" "${BZT[record-kp]:-}")."
	case " $BZMODES " in *" trace "*) ;; *) echo; echo "fhook trace on \"*\": pending (${SKIP[trace]:-not run})." ;; esac
fi
echo
echo "## 4. Recordings: size, reading speed, many threads"
echo
if num "${REC_BYTES:-}" && num "${REC_EVENTS:-}" && [ "${REC_EVENTS:-0}" -gt 0 ]; then
	echo "The last bzip2 recording above: $REC_EVENTS events in $REC_BYTES bytes, **$(f1 "$(calc "$REC_BYTES / $REC_EVENTS")") bytes per event**"
	echo "(symbols, processes and threads included; target ≤ 16 for the records themselves);"
	num "${UT_BYTES:-}" && echo "uftrace's data directory for the same run: $(f1 "$(calc "$UT_BYTES / $REC_EVENTS")") bytes per event."
	echo
	echo "| reading it back (CPU time, best of 3) | events/s on one core | target |"
	echo "|---|---:|---|"
	for k in replay report; do
		num "${REC_READ[$k]:-}" || continue
		echo "| fhook $k$([ $k = replay ] && echo ' (kernel text format, to /dev/null)') | $(calc "$REC_EVENTS / (${REC_READ[$k]} / 1e6) / 1e6" | awk '{ printf "%.1f M", $1 }') | ≥ 2 M |"
	done
	echo
fi
if [ -n "${MT_STAT:-}" ]; then
	echo "\`fhook record\` of $MT_N threads each calling a tiny function $MT_CALLS times (bench/threads.c):"
	echo "${MT_STAT%% in /*}. Peak resident memory of the \`fhook\` process: **$((MT_HWM / 1024)) MB**"
	echo "(target: 0 lost, at most 256 MB; each thread's ring is 2 MB of shared memory)."
	echo
fi
echo "## Skipped or pending"
echo
any=
for k in $ORDER; do
	[ -n "${SKIP[$k]:-}" ] && { echo "- ${LABEL[$k]}: ${SKIP[$k]}"; any=1; }
done
[ -n "${W3:-}" ] && { echo "- real program: $W3"; any=1; }
[ -z "$any" ] && echo "Nothing: every peer ran."
} >"$RES"

# ---------------------------------------------------------------- plot

if command -v gnuplot >/dev/null 2>&1; then
	D=$(mktemp -d /tmp/fhook-plot.XXXXXX)
	i=0
	for k in $ORDER; do
		[ -z "${SKIP[$k]:-}" ] || continue
		[ "$k" = pad ] || [ "$k" = direct ] && continue
		short=${k}
		ir=${IR[$k]:-}; [ "$k" = uprobe ] && ir=
		printf '%d "%s" %s %s %s %s %s\n' "$i" "$short" "${ir:-NaN}" "${NS[$k]:-NaN}" \
			"${NSMIN[$k]:-NaN}" "${NSMAX[$k]:-NaN}" \
			"$(case $k in plain|nop|empty|redirect-*|inject-*|fprobe-*|trace|record*|flight) echo 1 ;; *) echo 2 ;; esac)" >>"$D/loop.dat"
		i=$((i + 1))
	done
	if [ -z "${W3:-}" ]; then
		i=0
		for v in $BZMODES; do
			num "${BZT[$v]:-}" || continue
			printf '%d "%s" %s %s\n' "$i" "$v" "$(calc "${BZT[$v]} / ${BZT[plain]}")" \
				"$(case $v in uftrace-*) echo 2 ;; *) echo 1 ;; esac)" >>"$D/bz.dat"
			i=$((i + 1))
		done
	fi
	term="pngcairo size 1500,560 font 'DejaVu Sans,10'"
	gnuplot -e "set terminal $term" -e "quit" >/dev/null 2>&1 || term="png size 1500,560"
	cat >"$D/plot.gp" <<-EOF
	set terminal $term
	set output '$PNG'
	set multiplot layout 1,3 title "fhook and its peers (make bench, $(nproc) cores, $(date -u +%Y-%m-%d)); blue: fhook, red: peers"
	set style fill solid 0.8 border -1
	set boxwidth 0.7
	set grid ytics
	set xtics rotate by -50 left nomirror
	set logscale y
	set key off
	set palette defined (1 '#3465a4', 2 '#cc0000')
	unset colorbox
	set cbrange [1:2]
	set title 'tight loop: instructions per call (callgrind)'
	set yrange [5:*]
	plot '$D/loop.dat' using 1:3:7:xtic(2) with boxes lc palette, \
	     '' using 1:3:(sprintf("%.0f", \$3)) with labels offset 0,0.7 font ',8'
	set title 'tight loop: ns per call, median and min-max'
	set yrange [0.5:*]
	plot '$D/loop.dat' using 1:4:7:xtic(2) with boxes lc palette, \
	     '' using 1:4:5:6 with yerrorbars lc rgb 'black' pt 0
	unset logscale y
	set yrange [0:*]
	set title 'bzip2 -9, every function traced: slowdown vs untraced'
	EOF
	if [ -s "$D/bz.dat" ]; then
		cat >>"$D/plot.gp" <<-EOF
		plot '$D/bz.dat' using 1:3:4:xtic(2) with boxes lc palette, \
		     '' using 1:3:(sprintf("%.2fx", \$3)) with labels offset 0,0.7 font ',8'
		EOF
	else
		echo "set label 1 'skipped' at graph 0.5,0.5 center; plot NaN" >>"$D/plot.gp"
	fi
	echo "unset multiplot" >>"$D/plot.gp"
	gnuplot "$D/plot.gp" 2>"$D/err" || { echo "gnuplot failed:"; cat "$D/err"; }
	rm -rf "$D"
else
	echo "gnuplot not installed: no plot"
fi
