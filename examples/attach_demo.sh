#!/bin/bash
# make demo, live: the memcg server started as an ordinary process (no
# fhook, no libfhook), the caller-selective redirect patched in from
# outside with `fhook patch -p PID`, listed, and removed with `fhook
# unpatch -p PID` -- insmod, lsmod and rmmod for a running process.
cd "$(dirname "$0")/.." || exit 2
ROOT=$PWD
FHOOK=$ROOT/build/fhook
MEMCG=$ROOT/build/examples/memcg/memcg
PATCH=$ROOT/build/examples/memcg/memcg_patch.so
for f in "$FHOOK" "$MEMCG" "$PATCH"; do
	[ -e "$f" ] || { echo "demo: $f is missing (run make)" >&2; exit 2; }
done

coproc SRV { exec "$MEMCG" 2>/dev/null; }
in=${SRV[1]} out=${SRV[0]} pid=$SRV_PID
trap 'kill $pid 2>/dev/null' EXIT

. "$ROOT/examples/memcg_client.sh"

echo "memcg server started as an ordinary process, pid $pid (no fhook, no libfhook)"
echo
echo "---- before ----"
show memory.events;       got[before,ev]=$reply
show memory.events.local; got[before,local]=$reply
echo
echo "---- patch the running server from outside ----"
echo "# fhook patch -p $pid --func __memory_events_show --caller memory_events_show \\"
echo "#     --with memcg_patch.so:__memory_events_show_new"
"$FHOOK" patch -p "$pid" --func __memory_events_show --caller memory_events_show \
	--with "$PATCH:__memory_events_show_new" || { echo "demo: patch -p FAILED"; exit 1; }
show memory.events;       got[patched,ev]=$reply
show memory.events.local; got[patched,local]=$reply
echo "# fhook patch -p $pid --list"
"$FHOOK" patch -p "$pid" --list || { echo "demo: patch --list FAILED"; exit 1; }
echo
echo "---- unpatch ----"
echo "# fhook unpatch -p $pid __memory_events_show"
"$FHOOK" unpatch -p "$pid" __memory_events_show || { echo "demo: unpatch FAILED"; exit 1; }
show memory.events;       got[after,ev]=$reply
show memory.events.local; got[after,local]=$reply
echo "quit" >&"$in"
wait "$pid" 2>/dev/null

verdict() {
	if [ "$1" = "$2" ]; then echo "$3"; else echo "MISMATCH"; fi
}
echo
echo "Results (pid $pid, one process throughout, patched from outside)"
printf '%-16s | %-52s | %s\n' "" "memory.events" "memory.events.local"
printf '%-16s-+-%-52s-+-%s\n' "----------------" \
	"----------------------------------------------------" "-----------------------"
printf '%-16s | %-52s | %s\n' "before patch" \
	"$(verdict "${got[before,ev]}" "$orig" "low 0 / high 0 / max 0 / oom 0 / oom_kill 0")" \
	"$(verdict "${got[before,local]}" "$orig" "low 0 / high 0 / max 0 / oom 0 / oom_kill 0")"
printf '%-16s | %-52s | %s\n' "patch -p" \
	"$(verdict "${got[patched,ev]}" "$new" "\"This is from __memory_events_show_new\" <- REDIRECTED")" \
	"$(verdict "${got[patched,local]}" "$orig" "original five lines <- UNTOUCHED")"
printf '%-16s | %-52s | %s\n' "unpatch -p" \
	"$(verdict "${got[after,ev]}" "$orig" "low 0 / high 0 / max 0 / oom 0 / oom_kill 0")" \
	"$(verdict "${got[after,local]}" "$orig" "low 0 / high 0 / max 0 / oom 0 / oom_kill 0")"
[ "${got[before,ev]}${got[before,local]}" = "$orig$orig" ] &&
[ "${got[patched,ev]}${got[patched,local]}" = "$new$orig" ] &&
[ "${got[after,ev]}${got[after,local]}" = "$orig$orig" ] || { echo "demo: FAILED"; exit 1; }
