#!/bin/bash
# make demo: the memcg redirect example's results table, in user space, then
# a recording of the same server's calls.
#
# build/examples/memcg/memcg is a server with the kernel's
# __memory_events_show, memory_events_show and memory_events_local_show.
# While it keeps running, we read both files, load the example's module
# (build/examples/caller-redirect/caller_redirect.so, dlopen'ed by the server: its
# constructor is module_init), read them again, unload it (dlclose:
# module_exit) and read them a last time.
cd "$(dirname "$0")/.." || exit 2
ROOT=$PWD
MEMCG=$ROOT/build/examples/memcg/memcg
MODULE=$ROOT/build/examples/caller-redirect/caller_redirect.so
for f in "$MEMCG" "$MODULE"; do
	[ -e "$f" ] || { echo "demo: $f is missing (run make)" >&2; exit 2; }
done
log=$(mktemp)
trap 'rm -f "$log"' EXIT

coproc SRV { exec "$MEMCG" 2>"$log"; }
in=${SRV[1]} out=${SRV[0]} pid=$SRV_PID

. "$ROOT/examples/memcg_client.sh"

echo "memcg server running, pid $pid"
echo
echo "---- before loading the module ----"
show memory.events;       got[before,ev]=$reply
show memory.events.local; got[before,local]=$reply
echo
echo "---- load caller_redirect.so into the running server (pid $pid) ----"
ask "load $MODULE"
echo "# dmesg | tail -2"
tail -2 "$log"
show memory.events;       got[loaded,ev]=$reply
show memory.events.local; got[loaded,local]=$reply
echo
echo "---- unload the module ----"
ask "unload"
tail -1 "$log"
show memory.events;       got[after,ev]=$reply
show memory.events.local; got[after,local]=$reply
echo "quit" >&"$in"
wait "$pid" 2>/dev/null

verdict() {		# $1 got, $2 expected, $3 description
	if [ "$1" = "$2" ]; then echo "$3"; else echo "MISMATCH"; bad=1; fi
}
bad=0
echo
echo "Results (pid $pid, one process throughout)"
printf '%-16s | %-52s | %s\n' "" "memory.events" "memory.events.local"
printf '%-16s-+-%-52s-+-%s\n' "----------------" \
	"----------------------------------------------------" "-----------------------"
printf '%-16s | %-52s | %s\n' "before load" \
	"$(verdict "${got[before,ev]}" "$orig" "low 0 / high 0 / max 0 / oom 0 / oom_kill 0")" \
	"$(verdict "${got[before,local]}" "$orig" "low 0 / high 0 / max 0 / oom 0 / oom_kill 0")"
printf '%-16s | %-52s | %s\n' "module loaded" \
	"$(verdict "${got[loaded,ev]}" "$new" "\"This is from __memory_events_show_new\" <- REDIRECTED")" \
	"$(verdict "${got[loaded,local]}" "$orig" "original five lines <- UNTOUCHED")"
printf '%-16s | %-52s | %s\n' "after unload" \
	"$(verdict "${got[after,ev]}" "$orig" "low 0 / high 0 / max 0 / oom 0 / oom_kill 0")" \
	"$(verdict "${got[after,local]}" "$orig" "low 0 / high 0 / max 0 / oom 0 / oom_kill 0")"
# verdict ran in subshells: compare again here for the exit status
[ "${got[before,ev]}${got[before,local]}" = "$orig$orig" ] &&
[ "${got[loaded,ev]}${got[loaded,local]}" = "$new$orig" ] &&
[ "${got[after,ev]}${got[after,local]}" = "$orig$orig" ] || { echo "demo: FAILED"; exit 1; }

# The same redirect patched into a server started without fhook, from
# outside (fhook patch -p PID), listed and removed.
echo
echo "---- live: fhook patch -p / unpatch -p on a server started without fhook ----"
bash "$ROOT/examples/attach_demo.sh" || exit 1

# Tracing the same server: every function's entry and exit recorded (fhook
# record), then the time per function and the calls as a tree.
rec=$(mktemp)
trap 'rm -f "$log" "$rec"' EXIT
echo
echo "---- fhook record: every call of the server, then fhook report and replay ----"
echo "# printf 'cat memory.events\\ncat memory.events.local\\n' | fhook record -o demo.rec -- memcg"
printf 'cat memory.events\ncat memory.events.local\n' |
	"$ROOT/build/fhook" record -o "$rec" -- "$MEMCG" >/dev/null || { echo "demo: record FAILED"; exit 1; }
echo "# fhook report demo.rec"
"$ROOT/build/fhook" report "$rec" || { echo "demo: report FAILED"; exit 1; }
echo "# fhook replay --format graph demo.rec"
"$ROOT/build/fhook" replay --format graph "$rec" || { echo "demo: replay FAILED"; exit 1; }

# The kernel edition, where QEMU is there (make -C kernel demo installs the
# kernel it boots; FHOOK_DEMO_NO_KERNEL=1 leaves it out).
if [ -f kernel/Makefile ] && command -v qemu-system-x86_64 >/dev/null &&
   [ -z "$FHOOK_DEMO_NO_KERNEL" ] && [ "$(id -u)" = 0 ]; then
	echo
	echo "---- the same module in a real kernel (make -C kernel demo) ----"
	make -s -C kernel demo
fi
