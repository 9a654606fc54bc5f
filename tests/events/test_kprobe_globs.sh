#!/bin/bash
# Kprobe globs ("p [MOD:]GLOB", "r [MOD:]GLOB"): a program built without
# fhook's flags (gcc -O2 and -O0) recorded with -e 'p *' -e 'r *' has
# every function of its executable recorded, and the same call tree,
# call for call, as the program built with fhook's flags recorded the
# usual way; a library's glob; libc's glob leaves out what fhook runs
# itself, says so once and leaves the program's output alone; a glob
# that matches nothing is an error at the glob; a stripped executable;
# fhook funcs --why for a glob; every libc function libfhook imports is
# in the list a glob leaves out.
set -o pipefail
. "${FHOOK_ROOT:-$(dirname "$0")/../..}/tests/events/kp_setup.sh" kprobe_globs \
	kpglob_O2 kpglob_O0 kpglob_fh_O2 kpglob_fh_O0 kpglob_stripped kpglob_lib.so
CHECK_PREFIX=kprobe_globs

# main's call tree from a recording: no times, no tids, main's subtree
# only (a probe on every function also sees _start, _init, ...), GCC's
# clone suffixes dropped (-fpatchable-function-entry changes its choices)
tree() {
	"$FHOOK" replay --format graph "$1" |
		sed -E 's/^ *[0-9]+\.[0-9]+ +([0-9.]+ +[mun]?s)? *\[ *[0-9]+\] \| //' |
		awk 'match($0, /^ *main\(\) \{/) { on = 1; ind = index($0, "m") - 1 }
		     on { print substr($0, ind + 1) }
		     on && /\} \/\* main \*\// { on = 0 }' |
		sed -E 's/\.(constprop|isra|part)\.[0-9]+//g'
}

want_tree="main() {
  outer() {
    mid() {
      leaf();
      leaf();
      leaf();
    } /* mid */
    fib() {
      fib() {
        fib() {
          leaf();
        } /* fib */
        fib() {
          leaf();
        } /* fib */
      } /* fib */
      fib() {
        leaf();
      } /* fib */
    } /* fib */
    by_pointer() {
      leaf();
    } /* by_pointer */
  } /* outer */
} /* main */"

for o in O2 O0; do
	P=$D/kpglob_$o
	timeout 60 "$FHOOK" record -o "$T/p$o.rec" -e 'p *' -e 'r *' -- "$P" 3 > "$T/out" 2> "$T/err"
	check "${o}_status" eq "$?: $(cat "$T/out")" "0: 41"
	check "${o}_summary" grep -q '^fhook: record: [0-9]* events, 0 nmissed, 0 lost' "$T/err"
	timeout 60 "$FHOOK" record -o "$T/f$o.rec" -- "$D/kpglob_fh_$o" 3 > /dev/null 2>&1
	check "${o}_tree_with_fhook_flags" eq "$(tree "$T/f$o.rec")" "$want_tree"
	check "${o}_tree_without" eq "$(tree "$T/p$o.rec")" "$want_tree"
	# every function of the executable: an entry each (all are called)
	"$FHOOK" replay "$T/p$o.rec" | grep -o ': p___0: ([^+]*' | sed 's/.*(//' | sort -u > "$T/got"
	# (but the C run-time's start-up code, which is not the program's: crt*.o,
	# and GCC's cold parts, which no call enters)
	nm "$P" | awk '$2 ~ /^[tT]$/ { print $3 }' | sort -u | grep -vE '\.cold(\.|$)' |
		grep -vxE '_start|_init|_fini|frame_dummy|(de)?register_tm_clones|__do_global_dtors_aux' \
		> "$T/want"
	check "${o}_every_function" eq "$(cat "$T/got")" "$(cat "$T/want")"
	check "${o}_no_crt" eq "$("$FHOOK" funcs --why "$P" '*' | grep -c "crt\*.o")" 7
	# and a return from each that returns
	"$FHOOK" replay "$T/p$o.rec" | grep -o ': r___0: (.* <- [^)]*' | sed 's/.*<- //' |
		sort -u > "$T/got"
	check "${o}_every_return" eq "$(cat "$T/got")" "$(cat "$T/want")"
done

# ---- values a -O2 caller keeps in registers across a call (GCC's -fipa-ra): kept
[ -e "$D/kpglob_fp" ] || make -s "$D/kpglob_fp" > /dev/null 2>&1
want=$("$D/kpglob_fp")
for mode in "" 1; do
	got=$(FHOOK_KPROBE_NOJUMP=$mode timeout 60 "$FHOOK" record -o "$T/fp.rec" -e 'p *' \
		-e 'r *' -- "$D/kpglob_fp" 2> /dev/null)
	check "ipa_ra_registers_kept${mode:+_traps}" eq "$got" "$want"
done

# ---- the program built with fhook's flags: the glob's probes are its sites, one ops for all
timeout 60 "$FHOOK" record -o "$T/site.rec" -e 'p *' -e 'r *' -- "$D/kpglob_fh_O2" 3 \
	> "$T/out" 2> "$T/err"
check sites_status eq "$?: $(cat "$T/out")" "0: 41"
check sites_tree eq "$(tree "$T/site.rec")" "$want_tree"

# ---- a library's functions by prefix: those, no other
timeout 60 "$FHOOK" trace -e 'p kpglob_lib.so:kpg_*' -e 'r kpglob_lib.so:kpg_* $retval' \
	-o "$T/lib" -- "$D/kpglob_O2" 3 > "$T/out" 2> "$T/err"
check lib_status eq "$?: $(cat "$T/out")" "0: 41"
check lib_lines eq "$(sed -E 's/^ *[a-zA-Z0-9_]+-[0-9]+ +\[[0-9]{3}\] +[0-9]+\.[0-9]{6}: //' "$T/lib")" \
"p_kpglob_lib_so_kpg___0: (kpg_lib_add+0x0/0x16)
r_kpglob_lib_so_kpg___0: (outer+0x32/0x60 <- kpg_lib_add) arg1=0x4
p_kpglob_lib_so_kpg___0: (kpg_lib_twice+0x0/0x19)
p_kpglob_lib_so_kpg___0: (kpg_lib_add+0x0/0x16)
r_kpglob_lib_so_kpg___0: (outer+0x3a/0x60 <- kpg_lib_add) arg1=0x8
r_kpglob_lib_so_kpg___0: (outer+0x3a/0x60 <- kpg_lib_twice) arg1=0x8"

# ---- libc: what fhook runs is left out, said once; the program unchanged
timeout 120 "$FHOOK" record -o "$T/libc.rec" -e 'p libc.so.6:*' -e 'r libc.so.6:*' -- \
	"$D/kpglob_O2" 3 > "$T/out" 2> "$T/err"
check libc_status eq "$?: $(cat "$T/out")" "0: 41"
libc=$(ldd "$D/kpglob_O2" | awk '$1 == "libc.so.6" { print $3 }')
skipped=$("$FHOOK" funcs --why "$libc" '*' | grep -c ' skipped: ')
total=$("$FHOOK" funcs --why "$libc" '*' | sed -n 's/^# \([0-9]*\) functions.*/\1/p')
check libc_left_out_said_once eq "$(grep 'left out' "$T/err")" \
	"fhook: record: libc.so.6:*: $skipped of $total functions left out (\`fhook funcs --why $libc '*'\` lists them and why)"
check libc_some_skipped test "$skipped" -gt 50
check libc_no_miss grep -q '^fhook: record: [0-9]* events, 0 nmissed, 0 lost' "$T/err"
check libc_printf_recorded grep -q ' printf();\| printf() {' <<< "$("$FHOOK" replay --format graph "$T/libc.rec")"
check libc_memcpy_not eq "$("$FHOOK" replay "$T/libc.rec" | grep -c '(memcpy+\|<- memcpy)')" 0

# ---- a glob that matches nothing: the error at the glob
got=$(timeout 20 "$FHOOK" record -o "$T/none.rec" -e 'p nosuch_*' -- "$D/kpglob_O2" 2>&1)
check nothing_status eq "$?" 1
check nothing_message eq "$(head -3 <<< "$got")" "fhook: error: Invalid probed address or symbol
  Command: p nosuch_*
             ^"
got=$(timeout 20 "$FHOOK" record -o "$T/none.rec" -e 'r kpglob_lib.so:nosuch_*' -- "$D/kpglob_O2" 2>&1)
check nothing_lib_message eq "$(head -3 <<< "$got")" "fhook: error: Invalid probed address or symbol
  Command: r kpglob_lib.so:nosuch_*
             ^"
got=$(timeout 20 "$FHOOK" record -o "$T/none.rec" -e 'p kp*+4' -- "$D/kpglob_O2" 2>&1)
check glob_offset_message eq "$(head -3 <<< "$got")" "fhook: error: Invalid probed address or symbol
  Command: p kp*+4
                ^"

# ---- a stripped executable: what to name instead
got=$(timeout 20 "$FHOOK" record -o "$T/s.rec" -e 'p *' -e 'r *' -- "$D/kpglob_stripped" 2>&1)
check stripped_status eq "$?" 1
check stripped_message eq "$got" "fhook: error: Invalid probed address or symbol
  Command: p *
             ^
fhook: record: $D/kpglob_stripped is stripped: no function in .symtab or .dynsym; probe its libraries' functions (MOD:SYM) or an address (p ADDR)
fhook: record: for a program $D/kpglob_stripped starts, name its file: p NAME:SYM"
# its libraries' globs still work
timeout 60 "$FHOOK" record -o "$T/s.rec" -e 'p kpglob_lib.so:*' -- "$D/kpglob_stripped" 3 \
	> "$T/out" 2> "$T/err"
check stripped_lib eq "$?: $("$FHOOK" report "$T/s.rec" | awk '/kpg_|other_/ { print $(NF-4), $NF }' | sort)" \
"0: 1 kpg_lib_twice
1 other_lib_fn
2 kpg_lib_add"

# ---- fhook funcs --why for a glob
check why_lib eq "$("$FHOOK" funcs --why "$D/kpglob_lib.so" 'kpg_*')" "kpg_lib_add jump
kpg_lib_twice jump
# 2 functions: 2 jump (100.00%), 0 trap, 0 site, 0 none, 0 skipped"
# (memcmp is bcmp's alias; memcpy has two versions, GLIBC_2.2.5 and 2.14)
check why_libc eq "$("$FHOOK" funcs --why "$libc" 'mem[cs]*' | sort)" "# 5 functions: 1 jump (20.00%), 0 trap, 0 site, 0 none, 4 skipped
memccpy jump
memchr skipped: fhook's probe and recording path calls it
memcpy skipped: fhook's probe and recording path calls it
memcpy skipped: fhook's probe and recording path calls it
memset skipped: fhook's probe and recording path calls it"
got=$("$FHOOK" funcs --why "$D/kpglob_lib.so" 'nosuch*' 2> "$T/err")
check why_nothing eq "$?: $got: $(cat "$T/err")" "1: # 0 functions: 0 jump (0.00%), 0 trap, 0 site, 0 none, 0 skipped: fhook: funcs: no function of $D/kpglob_lib.so matches nosuch*"

# ---- every libc function libfhook calls is one a glob leaves out
missing=$(nm -D --undefined-only "$B/libfhook.so" | awk '$1 == "U" { sub(/@.*/, "", $2); print $2 }' |
	while read -r f; do grep -q "\"$f\"" lib/kprobes/nokprobe.c || echo "$f"; done)
check nokprobe_has_imports eq "$missing" ""

# ---- a library the program loads later with dlopen(): its glob placed then
timeout 60 "$FHOOK" trace -e 'p kp_lib.so:kp_*' -o "$T/dl" -- "$PROG" 2 "$PWD/$D/kp_lib.so" \
	> "$T/out" 2> "$T/err"
check dlopen_glob_status eq "$?: $(head -1 "$T/out")" "0: kp_lib_fn 2"
check dlopen_glob_lines eq "$(sed -E 's/^ *[a-zA-Z0-9_]+-[0-9]+ +\[[0-9]{3}\] +[0-9]+\.[0-9]{6}: //' "$T/dl")" \
"p_kp_lib_so_kp___0: (kp_lib_fn+0x0/0x6)
p_kp_lib_so_kp___0: (kp_lib_fn+0x0/0x6)"

# ---- honest ends: a MOD that never loads is an error naming it, at exit
timeout 60 "$FHOOK" record -o "$T/n.rec" -e 'p nosuch.so:foo_*' -e 'p kp_add' -- "$PROG" 2 \
	> "$T/out" 2> "$T/err"
check never_loaded_status eq "$?: $(cat "$T/out")" "1: kp_add 2 kp_asm 2 kp_name 1 sum 219"
check never_loaded_message eq "$(cat "$T/err")" \
"fhook: record: nosuch.so was never loaded by a traced process: nothing probed nosuch.so:foo_*
fhook: record: 2 events, 0 nmissed, 0 lost, 0 waits; 0.1 MB in $T/n.rec"
# ... and a run that placed no probe at all says why, for each
timeout 60 "$FHOOK" trace -o "$T/n.trace" -e 'p nosuch.so:*' -e 'r kpglob_O2:*' -- sh -c 'exit 0' \
	> "$T/out" 2> "$T/err"
check no_probe_status eq "$?" 1
check no_probe_message eq "$(cat "$T/err")" \
"fhook: trace: nosuch.so was never loaded by a traced process: nothing probed nosuch.so:*
fhook: trace: kpglob_O2 was never loaded by a traced process: nothing probed kpglob_O2:*
fhook: trace: no probe could be placed:
fhook: trace:   nosuch.so:*: its object was never loaded
fhook: trace:   kpglob_O2:*: its object was never loaded
fhook: trace: 0 events, 0 nmissed, 0 lost"
# the same program named by its file, run by the harness: probed
timeout 60 "$FHOOK" trace -o "$T/h.trace" -e 'p kpglob_O2:fib' -e 'r kpglob_O2:*' -- \
	sh -c "$D/kpglob_O2 3" > "$T/out" 2> "$T/err"
timeout 60 "$FHOOK" trace -o "$T/d.trace" -e 'p kpglob_O2:fib' -e 'r kpglob_O2:*' -- \
	"$D/kpglob_O2" 3 > /dev/null 2>&1
check harness_glob eq "$(grep -o ' <- [^)]*' "$T/h.trace" | sort | uniq -c)" \
	"$(grep -o ' <- [^)]*' "$T/d.trace" | sort | uniq -c)"
check harness_glob_fib eq "$(grep -c '<- fib)' "$T/h.trace")" 5

# ---- another tool's bytes: refused, named; the rest probed
for f in kpg_victim.so kpg_patcher.so; do
	[ -e "$D/$f" ] || make -s "$D/$f" > /dev/null 2>&1
done
timeout 60 "$FHOOK" trace -e 'p kpg_victim.so:victim_*' -o "$T/v" -- "$PROG" 2 \
	"$PWD/$D/kpg_patcher.so" > "$T/out" 2> "$T/err"
check foreign_status eq "$?: $(head -1 "$T/out")" "0: kp_lib_fn 2"
check foreign_refused eq "$(grep 'cannot probe' "$T/err")" \
"fhook: trace: cannot probe victim_int3+0x0/0x17 [kpg_victim.so]: an int3 that is not fhook's at +0 (a uprobe's or a debugger's breakpoint): refused
fhook: trace: cannot probe victim_jmp+0x0/0x21 [kpg_victim.so]: a jump or call that is not fhook's at +0, not the file's code (another tool's patch): refused"
check foreign_rest_probed eq "$(grep -c ': (victim_ok+0x0/' "$T/v")" 2
check foreign_untraced grep -q '(kp_prog): 2 of 3 functions of kpg_victim.so:victim_\* not probed' "$T/err"

# ---- a real uprobe (the kernel's int3 in the process's copy of the page): root, tracefs
uprobe_test() {
	local tfs=$T/tfs off got
	mkdir -p "$tfs"
	cp "$D/kpglob_O2" "$T/victim" && cp "$D/kpglob_lib.so" "$T/" || return 1
	mount -t tracefs nodev "$tfs" 2> /dev/null || return 1
	[ -w "$tfs/uprobe_events" ] || { umount "$tfs"; return 1; }
	off=$(nm "$T/victim" | awk '$3 == "fib" { print $1 }')
	if ! echo "p:fhook_kpglob/fib $T/victim:0x$off" >> "$tfs/uprobe_events" ||
	   ! echo 1 > "$tfs/events/fhook_kpglob/enable"; then
		echo "-:fhook_kpglob/fib" >> "$tfs/uprobe_events" 2> /dev/null
		umount "$tfs"
		return 1
	fi
	timeout 60 "$FHOOK" trace -o "$T/u" -e 'p *' -- "$T/victim" 3 > "$T/out" 2> "$T/err"
	got="$?: $(cat "$T/out")"
	echo 0 > "$tfs/events/fhook_kpglob/enable"
	echo "-:fhook_kpglob/fib" >> "$tfs/uprobe_events"
	umount "$tfs"
	check uprobe_status eq "$got" "0: 41"
	check uprobe_refused eq "$(grep 'cannot probe' "$T/err" | sed -E 's/fib\+0x0\/0x[0-9a-f]+/fib/')" \
		"fhook: trace: cannot probe fib: an int3 that is not fhook's at +0 (a uprobe's or a debugger's breakpoint): refused"
	check uprobe_rest_probed grep -q ': (leaf+0x0/' "$T/u"
	return 0
}
if [ "$(id -u)" != 0 ] || ! uprobe_test; then
	echo "SKIP kprobe_globs/uprobe: needs root and the kernel's uprobe_events (tracefs)"
fi

# ---- unmodified Debian programs (bash, sqlite3, gzip, python3), every function of the
# executable and of libc, or of the library that does the work: the output unchanged,
# nothing missed
real() {	# name, -e definitions..., --, command...
	local name=$1 want got defs=()
	shift
	while [ "$1" != -- ]; do defs+=(-e "$1"); shift; done
	shift
	command -v "$1" > /dev/null || { echo "SKIP kprobe_globs/real_$name: $1 is not installed"; return; }
	want=$(timeout 120 "$@" < "$T/stdin" | md5sum)
	got=$(timeout 300 "$FHOOK" record -o "$T/real.rec" "${defs[@]}" -- "$@" < "$T/stdin" \
		2> "$T/err" | md5sum)
	check "real_${name}_unchanged" eq "$got" "$want"
	# a signal (bash's SIGCHLD) that lands while the thread is inside a probe's
	# handler has its calls missed, as in the kernel; bash failed this once in a
	# run of the whole suite (its line was not kept, hence the echo below) and
	# never in 15 runs alone: a second run must then miss nothing
	if ! grep -q '^fhook: record: [1-9][0-9]* events, 0 nmissed, 0 lost' "$T/err"; then
		echo "# real_$name: $(grep '^fhook: record:' "$T/err" | tail -1); run again"
		timeout 300 "$FHOOK" record -o "$T/real.rec" "${defs[@]}" -- "$@" < "$T/stdin" \
			2> "$T/err" > /dev/null
	fi
	check "real_${name}_no_miss" grep -q '^fhook: record: [1-9][0-9]* events, 0 nmissed, 0 lost' \
		"$T/err"
	grep -q '^fhook: record: [1-9][0-9]* events, 0 nmissed, 0 lost' "$T/err" ||
		echo "# real_$name: $(grep '^fhook: record:' "$T/err" | tail -1)"
}
cat > "$T/script.sh" <<'SH'
s=0; for i in $(seq 1 300); do s=$((s + i * i % 7)); done; echo $s
f() { local x=$1; [ $x -le 1 ] && echo 1 && return; echo $(( x * $(f $((x-1))) )); }; f 8
str="hello world"; echo ${str^^} ${str//o/0} $(printf '%05d' 42)
SH
: > "$T/stdin"
real bash 'p *' 'r *' 'p libc.so.6:*' 'r libc.so.6:*' -- bash "$T/script.sh"
cat > "$T/stdin" <<'SQL'
create table t(a integer primary key, b text);
with recursive n(i) as (select 1 union all select i+1 from n where i < 3000)
  insert into t select i, 'v' || (i*7 % 100) from n;
select count(*), max(b) from t;
SQL
real sqlite3 'p libsqlite3.so.0:*' 'r libsqlite3.so.0:* $retval' -- sqlite3 :memory:
seq 1 20000 | sed 's/$/ every function probed/' > "$T/stdin"
# (Debian's gzip is stripped: nothing of its own to name)
real gzip 'p libc.so.6:*' 'r libc.so.6:*' -- gzip -9 -c
: > "$T/stdin"
real python3 'p *' 'r *' -- /usr/bin/python3 -c 'import json; print(sum(len(json.dumps({"k": i})) for i in range(2000)))'

# ---- a return probe on the entry point: refused with the reason (r * leaves it out)
timeout 60 "$FHOOK" trace -o "$T/start" -e 'r _start' -- "$D/kpglob_O2" 3 > "$T/out" 2> "$T/err"
check r_start_refused grep -qx "fhook: trace: cannot probe _start+0: the program's entry point: no call enters it, no return to probe" "$T/err"
check r_start_runs eq "$(cat "$T/out")" 41

# ---- every probe refused: no probe placed, said, status 1
timeout 60 "$FHOOK" trace -o "$T/x" -e 'p kpg_victim.so:victim_int3' -- "$PROG" 2 \
	"$PWD/$D/kpg_patcher.so" > "$T/out" 2> "$T/err"
check all_refused_status eq "$?: $(head -1 "$T/out")" "1: kp_lib_fn 2"
check all_refused_said eq "$(grep -A1 'no probe could be placed' "$T/err")" \
"fhook: trace: no probe could be placed:
fhook: trace:   kpg_victim.so:victim_int3: every probe was refused (said above)"
