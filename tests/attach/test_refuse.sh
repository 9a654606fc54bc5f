#!/bin/bash
# Attaching where the kernel's ptrace rules (or the process) do not allow
# it: another user, a process already traced, a program without sites, no
# such process, a process recorded by the most fhook commands at once.
# Each gets a message saying why, and the process is left
# exactly as it was (signal masks and handlers, no libfhook, its output).
. "$(dirname "$0")/lib.sh"

state() {	# what must not change: every thread's signal state, libfhook absent
	grep -h '^Sig[PBIC]' /proc/"$1"/task/*/status | tr '\n' ' '
	grep -c libfhook /proc/"$1"/maps
}

start_prog 2
before=$(state "$pid")

# ---- another user (a throwaway one, removed afterwards) ----
if [ "$(id -u)" = 0 ] && command -v useradd >/dev/null && command -v setpriv >/dev/null; then
	user=fhookt$$
	if useradd -r -M -s /usr/sbin/nologin "$user" 2>/dev/null; then
		uid=$(id -u "$user") gid=$(id -g "$user")
		setpriv --reuid="$uid" --regid="$gid" --clear-groups -- \
			"$FHOOK" patch -p "$pid" --func ping --with "$R:ping_new" 2>"$TMP/err"
		expect other_user_status "$?" 1
		expect other_user_message "$(cat "$TMP/err")" \
			"fhook: patch: not permitted to attach to process $pid: it runs as user 0 and you are user $uid (the kernel's ptrace rule: the same user, or CAP_SYS_PTRACE)"
		setpriv --reuid="$uid" --regid="$gid" --clear-groups -- \
			"$FHOOK" trace -p "$pid" -e 'f ping' 2>"$TMP/err"
		expect other_user_trace "$?:$(grep -c "it runs as user 0 and you are user $uid" "$TMP/err")" "1:1"
		userdel "$user" 2>/dev/null
		expect other_user_unchanged "$(state "$pid")" "$before"
	else
		echo "SKIP other_user: useradd failed"
	fi
else
	echo "SKIP other_user: needs root, useradd and setpriv"
fi

# ---- yama ----
if [ -r /proc/sys/kernel/yama/ptrace_scope ]; then
	echo "SKIP yama_scope: not changed by the tests (a system setting)"
else
	echo "SKIP yama_scope: this kernel has no yama (the kernel tests check it in QEMU)"
fi

# ---- already traced (by strace) ----
if command -v strace >/dev/null; then
	strace -p "$pid" -o /dev/null 2>/dev/null &
	spid=$!
	for i in $(seq 100); do
		grep -q "^TracerPid:[[:space:]]*$spid" /proc/"$pid"/status && break
		sleep 0.02
	done
	"$FHOOK" patch -p "$pid" --func ping --with "$R:ping_new" 2>"$TMP/err"
	expect traced_status "$?" 1
	expect traced_message "$(cat "$TMP/err")" \
		"fhook: patch: process $pid is already traced by process $spid (strace): a process has one tracer; detach the debugger first"
	kill "$spid"
	wait "$spid" 2>/dev/null
	sleep 0.1
	expect traced_unchanged "$(state "$pid")" "$before"
else
	echo "SKIP traced: no strace"
fi

expect still_answers "$(ask 'call 3')" "ping 3 -> 4"
expect still_correct "$(stop_prog)" "calls ok, bad 0"

# Wait (2 s at most) until background process $1 is sleep, not the shell
# before its exec: it may still be in ld.so then.
sleep_execd() {
	local i

	for i in $(seq 1000); do
		[[ "$(readlink /proc/"$1"/exe)" == */sleep ]] && return
		sleep 0.002
	done
}

# ---- a program without sites: no refusal, a kprobe takes the function ----
sleep 30 &
spid=$!
PIDS+=("$spid")
sleep_execd "$spid"
"$FHOOK" patch -p "$spid" --func nanosleep --with "$R:ping_new" 2>"$TMP/err"
expect no_sites "$?:$(cat "$TMP/err")" \
	"0:fhook: patch: 'nanosleep' applied in process $spid; \`fhook unpatch -p $spid nanosleep\` removes it"
"$FHOOK" unpatch -p "$spid" nanosleep 2>"$TMP/err"
expect no_sites_unpatched "$?:$(cat "$TMP/err")" \
	"0:fhook: unpatch: 'nanosleep' removed from process $spid"
kill "$spid"
wait "$spid" 2>/dev/null

# ---- a process still in its dynamic loader (a long library path to
# search, libc not mapped yet): waited for, not refused for having no dlopen ----
llp=$(for i in $(seq 6000); do printf '/nonexistent/%d:' "$i"; done)
LD_LIBRARY_PATH=$llp sleep 30 &
spid=$!
PIDS+=("$spid")
sleep_execd "$spid"
in_loader=$(grep -c 'libc[.-]' /proc/"$spid"/maps)
"$FHOOK" patch -p "$spid" --func nanosleep --with "$R:ping_new" 2>"$TMP/err"
expect in_loader "$?:$(cat "$TMP/err")" \
	"0:fhook: patch: 'nanosleep' applied in process $spid; \`fhook unpatch -p $spid nanosleep\` removes it"
[ "$in_loader" = 0 ] || echo "(in_loader: libc was mapped already; the wait was not needed this time)"
kill "$spid"
wait "$spid" 2>/dev/null

# ---- recorded by the most commands at once (4) already: the refused command,
# named, touches no file; the others record on ----
start_prog 2
rpids=()
for n in 1 2 3 4; do
	"$FHOOK" record -p "$pid" -e 'f ping' -o "$TMP/r$n.rec" 2>"$TMP/r$n.err" &
	rpids+=("$!")
	for i in $(seq 250); do
		grep -q 'attached to process' "$TMP/r$n.err" && break
		sleep 0.02
	done
done
printf 'an older recording\n' > "$TMP/old.rec"
cp "$TMP/old.rec" "$TMP/old.copy"
"$FHOOK" record -p "$pid" -e 'f ping' -o "$TMP/old.rec" 2>"$TMP/err"
expect recorded_already_status "$?:$(grep -c "^fhook: record: process $pid is being recorded or traced by 4 fhook commands already, the most at once: stop one of them first$" "$TMP/err")" "1:1"
expect recorded_already_file_kept "$(cmp "$TMP/old.rec" "$TMP/old.copy" && echo same)" same
"$FHOOK" trace -p "$pid" -e 'f ping' -o "$TMP/new.out" 2>"$TMP/err"
# named by the command that was refused
expect traced_already_status "$?:$(grep -c "^fhook: trace: process $pid is being recorded or traced by 4 fhook commands already" "$TMP/err")" "1:1"
expect traced_already_no_file "$([ -e "$TMP/new.out" ] && echo created || echo none)" none
ask 'call 1' > /dev/null
ends=
for n in 1 2 3 4; do
	kill -INT "${rpids[$((n - 1))]}"
	wait "${rpids[$((n - 1))]}"
	ends+="$?:$(grep -c 'detached from process' "$TMP/r$n.err"):$("$FHOOK" replay "$TMP/r$n.rec" | grep -c ping__entry) "
done
expect recorders_end "$ends" "0:1:1 0:1:1 0:1:1 0:1:1 "
expect recorded_already_still_correct "$(stop_prog)" "calls ok, bad 0"

# ---- no such process ----
"$FHOOK" unpatch -p "$spid" 2>"$TMP/err"
expect no_process "$?:$(cat "$TMP/err")" "1:fhook: unpatch: no process $spid"
"$FHOOK" unpatch -p 12x 2>"$TMP/err"
expect bad_pid "$?:$(head -1 "$TMP/err")" "2:fhook: unpatch: -p needs a process id, got '12x'"
