#!/bin/busybox sh
# /init of the test initramfs (busybox only).  Mode "test" runs the checks
# and writes one "PASS name" / "FAIL name" line per check to the second
# serial port; mode "demo" writes the memcg before/with/after table there.
# Lines starting with "#" are details for humans; "DONE" marks a full run.

export PATH=/bin:/sbin
/bin/busybox mkdir -p /proc /sys /dev /tmp
/bin/busybox mount -t proc proc /proc
/bin/busybox mount -t sysfs sysfs /sys
/bin/busybox mount -t devtmpfs devtmpfs /dev 2>/dev/null

OUT=/dev/ttyS1
stty -F "$OUT" raw -echo 2>/dev/null
MODE=$(cat /mode 2>/dev/null)
KREL=$(uname -r)
case "$KREL" in
6.1.*) K=6.1 ;;
6.12.*) K=6.12 ;;
*) K=$KREL ;;
esac
M=/fhook
CG=/sys/fs/cgroup/task
EV=$CG/memory.events
EVL=$CG/memory.events.local
STATE=/sys/kernel/debug/fhook/state
npass=0
nfail=0

say() { echo "$*" > "$OUT"; }
pass() { npass=$((npass + 1)); say "PASS $K $1"; }
fail() {
	nfail=$((nfail + 1))
	say "FAIL $K $1"
	shift
	[ $# -gt 0 ] && printf '%s\n' "$@" | sed 's/^/#   /' > "$OUT"
}
# check NAME EXPECTED ACTUAL: exact comparison.
check() {
	if [ "$2" = "$3" ]; then
		pass "$1"
	else
		fail "$1" "expected:" "$2" "got:" "$3"
	fi
}
# ok NAME COMMAND...: the command must succeed.
ok() {
	name=$1
	shift
	if out=$("$@" 2>&1); then pass "$name"; else fail "$name" "$* -> $out"; fi
}
# dmesg_has NAME STRING: the kernel log must contain STRING.
dmesg_has() {
	if dmesg | grep -qF -- "$2"; then pass "$1"; else fail "$1" "no '$2' in dmesg"; fi
}
# dclear: start a fresh kernel log for dmesg_has, keeping the old part
# for the final Oops/BUG/WARNING check.
dclear() {
	dmesg -c >> /tmp/dmesg.old
}
finish() {
	[ "$MODE" = demo ] || say "# $K: $npass passed, $nfail failed"
	say "DONE"
	# Keep the full kernel log on the console for post-mortems.
	cat /tmp/dmesg.old 2>/dev/null
	dmesg
	sync
	poweroff -f
}

# The kernel's own __memory_events_show (6.1 and 6.12 print the same six
# lines) and the two replacements of the client module.
ORIG="low 0
high 0
max 0
oom 0
oom_kill 0
oom_group_kill 0"
FIVE="low 0
high 0
max 0
oom 0
oom_kill 0"
NEW="This is from __memory_events_show_new
$FIVE"
NEWL="This is from __memory_events_local_show_new
$FIVE"

setup() {
	mkdir -p /sys/fs/cgroup /sys/kernel/debug /sys/kernel/tracing
	mount -t cgroup2 none /sys/fs/cgroup || return 1
	grep -qw memory /sys/fs/cgroup/cgroup.controllers || return 1
	echo +memory > /sys/fs/cgroup/cgroup.subtree_control || return 1
	mkdir -p $CG || return 1
	[ -r $EV ] && [ -r $EVL ]
}

table() {
	say "\$ cat $EV"
	cat $EV > "$OUT" 2>&1
	say "\$ cat $EVL"
	cat $EVL > "$OUT" 2>&1
}

if [ "$MODE" = demo ]; then
	setup || say "# cgroup2 memory controller unavailable"
	mount -t debugfs none /sys/kernel/debug
	say "=== $KREL: before insmod ==="
	table
	insmod $M/fhook_redirect.ko && insmod $M/fhook_memevents.ko
	say "=== $KREL: with fhook_memevents loaded ==="
	table
	say "\$ cat $STATE"
	cat $STATE > "$OUT"
	rmmod fhook_memevents
	say "=== $KREL: after rmmod ==="
	table
	rmmod fhook_redirect
	say "\$ dmesg | grep fhook"
	dmesg | grep fhook > "$OUT"
	finish
fi

# --- environment ------------------------------------------------------
ok mount-cgroup2-memory setup
ok mount-debugfs mount -t debugfs none /sys/kernel/debug
ok mount-tracefs mount -t tracefs none /sys/kernel/tracing
check tracefs-function-tracer yes \
	"$(grep -qw function /sys/kernel/tracing/available_tracers && echo yes)"

# --- the memcg table: before -----------------------------------------
check before-events "$ORIG" "$(cat $EV)"
check before-events-local "$ORIG" "$(cat $EVL)"

# --- loaded ------------------------------------------------------------
ok insmod-framework insmod $M/fhook_redirect.ko
say "# $(dmesg | grep -o 'fhook: ready.*')"
check debugfs-empty "" "$(cat $STATE 2>&1)"
ok insmod-memevents insmod $M/fhook_memevents.ko
check loaded-events "$NEW" "$(cat $EV)"
check loaded-events-local "$ORIG" "$(cat $EVL)"
check loaded-events-again "$NEW" "$(cat $EV)"
st=$(cat $STATE)
echo "$st" | sed "s/^/#> /" > "$OUT"
check debugfs-redirect-line yes "$(echo "$st" |
	grep -q '^redirect __memory_events_show .*owner=fhook_memevents passthrough=1 missed=0$' && echo yes)"
check debugfs-caller-hits yes "$(echo "$st" |
	grep -q '^  caller memory_events_show range=.* to=__memory_events_show_new \[fhook_memevents\] hits=2$' && echo yes)"
# The caller's range must start where /proc/kallsyms says it does.
ks=$(grep ' memory_events_show$' /proc/kallsyms | cut -d' ' -f1)
check debugfs-caller-range "0x$ks" "$(echo "$st" |
	sed -n 's/^  caller memory_events_show range=\[\(0x[0-9a-f]*\),.*/\1/p')"
check debugfs-call-site yes "$(echo "$st" |
	grep -q '^  caller memory_events_show .* calls=+0x[0-9a-f]* ' && echo yes)"

# --- fprobe: per-caller entry/exit counts (6.12 only) -------------------
if [ -e $M/fhook_memprobe.ko ]; then
	ok insmod-memprobe insmod $M/fhook_memprobe.ko
	for i in 1 2 3; do cat $EV > /dev/null; done
	for i in 1 2; do cat $EVL > /dev/null; done
	check probe-redirect-still-works "$NEW" "$(cat $EV)"
	st=$(cat $STATE)
	echo "$st" | sed "s/^/#> /" > "$OUT"
	check probe-counts-events yes "$(echo "$st" |
		grep -q '^  caller memory_events_show range=.* entry=4 exit=4$' && echo yes)"
	check probe-counts-events-local yes "$(echo "$st" |
		grep -q '^  caller memory_events_local_show range=.* entry=2 exit=2$' && echo yes)"
	check probe-redirect-hits yes "$(echo "$st" |
		grep -q 'to=__memory_events_show_new \[fhook_memevents\] hits=6$' && echo yes)"
	ok rmmod-memprobe rmmod fhook_memprobe
	check probe-gone "" "$(grep '^probe ' $STATE)"
else
	check no-fprobe-on-this-kernel no "$(grep -q ' register_fprobe_ips$' /proc/kallsyms && echo yes || echo no)"
fi

# --- a second redirect of the same target: -EBUSY -----------------------
out=$(insmod $M/fhook_memevents_dup.ko 2>&1)
rc=$?
check second-redirect-ebusy "busy" "$([ $rc -ne 0 ] && echo "$out" | grep -q 'Device or resource busy' && echo busy || echo "rc=$rc $out")"
dmesg_has second-redirect-ebusy-dmesg "__memory_events_show already has its ip modified by fhook redirect of module fhook_memevents: IPMODIFY conflict"
check second-redirect-not-loaded "" "$(grep '^fhook_memevents_dup ' /proc/modules)"
check first-redirect-intact "$NEW" "$(cat $EV)"

# --- after rmmod -------------------------------------------------------
ok rmmod-memevents rmmod fhook_memevents
check after-events "$ORIG" "$(cat $EV)"
check after-events-local "$ORIG" "$(cat $EVL)"
check debugfs-empty-after "" "$(cat $STATE)"

# --- one redirect, two callers, two replacements ------------------------
ok insmod-two-callers insmod $M/fhook_memevents.ko local_caller=memory_events_local_show
check two-callers-events "$NEW" "$(cat $EV)"
check two-callers-events-local "$NEWL" "$(cat $EVL)"
check two-callers-debugfs yes "$(grep -q '^  caller memory_events_local_show .*to=__memory_events_local_show_new \[fhook_memevents\] hits=1$' $STATE && echo yes)"
ok rmmod-two-callers rmmod fhook_memevents
check two-callers-after "$ORIG" "$(cat $EVL)"

# --- error cases -------------------------------------------------------
# insmod_fails NAME ERRNO ARGS...: loading must fail with -ERRNO, reported
# by the client in dmesg, and leave nothing behind.
insmod_fails() {
	name=$1
	errno=$2
	shift 2
	if insmod $M/fhook_memevents.ko "$@" > /dev/null 2>&1; then
		rmmod fhook_memevents
		fail "$name" "insmod $* succeeded"
		return
	fi
	if grep -q '^fhook_memevents ' /proc/modules; then
		fail "$name" "module left loaded"
		return
	fi
	# Anchored: "-2" must not match a "-22".
	if dmesg | grep -qE "failed: -$errno\$"; then
		pass "$name"
	else
		fail "$name" "no 'failed: -$errno' in dmesg"
	fi
}
dclear
insmod_fails unknown-target-enoent 2 target=fhook_no_such_function
dmesg_has unknown-target-message "fhook: symbol 'fhook_no_such_function' not found in kallsyms"
dclear
insmod_fails unknown-caller-enoent 2 caller=fhook_no_such_caller
dmesg_has unknown-caller-message "fhook: symbol 'fhook_no_such_caller' not found in kallsyms"
dclear
insmod_fails caller-without-call-einval 22 caller=memory_stat_show
dmesg_has caller-without-call-message "fhook: caller memory_stat_show ["
dclear
# exc_int3 is noinstr: it has no ftrace site on either kernel.
insmod_fails untraceable-target-einval 22 target=exc_int3
dmesg_has untraceable-target-message "fhook: target exc_int3 is not traceable"
check after-errors-events "$ORIG" "$(cat $EV)"
check after-errors-debugfs "" "$(cat $STATE)"

# --- livepatch, the other IPMODIFY user: -EBUSY both ways ----------------
KLP=/sys/kernel/livepatch/fhook_klp
LIVE="This is from livepatch
$FIVE"
# klp_settled: wait (30 s at most) until the patch is not in transition.
klp_settled() {
	for i in $(seq 1 60); do
		[ "$(cat $KLP/transition 2>/dev/null)" = 1 ] || return 0
		sleep 0.5
	done
	return 1
}
# klp_gone: disable the patch and wait for its sysfs directory to go.
klp_gone() {
	[ -e $KLP/enabled ] && echo 0 > $KLP/enabled
	for i in $(seq 1 60); do
		[ -e $KLP ] || return 0
		sleep 0.5
	done
	return 1
}
if [ -e $M/fhook_klp.ko ]; then
	dclear
	ok insmod-livepatch insmod $M/fhook_klp.ko
	ok livepatch-transition klp_settled
	check livepatch-events "$LIVE" "$(cat $EV)"
	check livepatch-events-local "$LIVE" "$(cat $EVL)"
	insmod_fails redirect-after-livepatch-ebusy 16
	dmesg_has redirect-after-livepatch-message "__memory_events_show already has its ip modified by another ftrace user (livepatch?): IPMODIFY conflict"
	ok livepatch-disable klp_gone
	ok rmmod-livepatch rmmod fhook_klp
	check livepatch-gone-events "$ORIG" "$(cat $EV)"
	ok insmod-memevents-before-livepatch insmod $M/fhook_memevents.ko
	dclear
	out=$(insmod $M/fhook_klp.ko 2>&1)
	check livepatch-after-redirect-ebusy busy "$(echo "$out" | grep -q 'Device or resource busy' && echo busy || echo "$out")"
	check livepatch-after-redirect-not-loaded no "$([ -e $KLP ] && echo yes || echo no)"
	check livepatch-after-redirect-events "$NEW" "$(cat $EV)"
	ok rmmod-memevents-after-livepatch rmmod fhook_memevents
	check livepatch-after "$ORIG" "$(cat $EV)"
fi

# --- 50 load/unload cycles under concurrent readers ----------------------
# Every read must be one of the two complete outputs, never anything else.
reader() {
	while [ ! -e /tmp/stop ]; do
		o=$(cat $1)
		[ "$o" = "$ORIG" ] || [ "$o" = "$2" ] || echo "$1: $o" >> /tmp/bad
		: $((n = n + 1))
	done
	echo $n > /tmp/reads.$3
}
# The debugfs view is read concurrently too: it walks the lists that
# registration and unregistration change.
state_reader() {
	while [ ! -e /tmp/stop ]; do
		cat $STATE > /dev/null 2>&1
	done
}
rm -f /tmp/stop /tmp/bad
reader $EV "$NEW" 1 &
reader $EVL "$ORIG" 2 &
reader $EV "$NEW" 3 &
state_reader &
# Where fprobe exists, a probe joins the redirect on the same site in
# every fifth cycle, so the site switches between one and two ops.
probe=
cycles=0
for i in $(seq 1 50); do
	probe=
	[ -e $M/fhook_memprobe.ko ] && [ $((i % 5)) = 0 ] && probe=1
	insmod $M/fhook_memevents.ko || break
	if [ -n "$probe" ]; then
		insmod $M/fhook_memprobe.ko || break
	fi
	[ "$(cat $EV)" = "$NEW" ] || break
	if [ -n "$probe" ]; then
		rmmod fhook_memprobe || break
	fi
	rmmod fhook_memevents || break
	cycles=$i
done
touch /tmp/stop
wait
check stress-50-cycles 50 "$cycles"
check stress-reads-consistent "" "$(head -n 5 /tmp/bad 2>/dev/null)"
say "# reads during the cycles: $(cat /tmp/reads.1) + $(cat /tmp/reads.2) + $(cat /tmp/reads.3)"
check stress-after-events "$ORIG" "$(cat $EV)"

ok rmmod-framework rmmod fhook_redirect
check debugfs-removed no "$([ -e /sys/kernel/debug/fhook ] && echo yes || echo no)"

# --- the fallback an IBT-enforcing CPU gets: names resolved by kprobes ---
dclear
ok insmod-framework-kprobe-lookup insmod $M/fhook_redirect.ko kprobe_lookup=1
dmesg_has kprobe-lookup-active "kprobe_lookup=1: resolving names with kprobes"
insmod_fails kprobe-lookup-unknown-enoent 2 caller=fhook_no_such_caller
ok insmod-memevents-kprobe-lookup insmod $M/fhook_memevents.ko
check kprobe-lookup-events "$NEW" "$(cat $EV)"
check kprobe-lookup-events-local "$ORIG" "$(cat $EVL)"
ok rmmod-memevents-kprobe-lookup rmmod fhook_memevents
ok rmmod-framework-kprobe-lookup rmmod fhook_redirect
check kprobe-lookup-after "$ORIG" "$(cat $EV)"
# --- attaching to a process (user-space fhook) under yama's ptrace_scope ---
# The host's kernel has no yama; these kernels do.  att_prog runs as user fh,
# the child of a shell that exits (so no process's descendant); fhook, as fh
# too, is refused with scope 1 (only ancestors and CAP_SYS_PTRACE may
# attach) with a message naming the rule, and the process is left as it was;
# with scope 0 the same command is let in.  Then, the process having its
# control thread, scope 1 refuses the same way and scope 0 uses the socket.
YAMA=/proc/sys/kernel/yama/ptrace_scope
if [ -x /u/fhook ] && [ -w $YAMA ]; then
	chmod 1777 /tmp
	su fh -c 'sleep 600 | /u/att_prog 2 > /tmp/att.out 2>&1 &'
	apid=
	for i in $(seq 1 100); do
		apid=$(sed -n 's/^ready \([0-9]*\)$/\1/p' /tmp/att.out 2>/dev/null)
		[ -n "$apid" ] && break
		sleep 0.1
	done
	check attach-target-started yes "$([ -n "$apid" ] && echo yes || echo no)"
	status() { grep -E '^(State|TracerPid|SigPnd|ShdPnd|SigBlk|SigIgn|SigCgt)' /proc/$apid/status; }
	before=$(status)
	echo 1 > $YAMA
	out=$(su fh -c "/u/fhook patch -p $apid --list" 2>&1)
	check attach-yama1-refused "fhook: patch: not permitted to attach to process $apid: kernel.yama.ptrace_scope is 1, so only its ancestors (or a process it named with prctl(PR_SET_PTRACER)) and CAP_SYS_PTRACE may attach" "$out"
	check attach-yama1-unchanged "$before" "$(status)"
	check attach-yama1-no-libfhook 0 "$(grep -c libfhook /proc/$apid/maps)"
	echo 0 > $YAMA
	out=$(su fh -c "/u/fhook patch -p $apid --list" 2>&1)
	check attach-yama0-accepted "no patches in process $apid" "$out"
	# libfhook stays loaded, with its SIGTRAP handler (docs/attach.md)
	check attach-yama0-unchanged "$(echo "$before" | grep -v SigCgt)" \
		"$(status | grep -v SigCgt)"
	# that attach started the process's control thread: its socket is no
	# way around yama (the command must seize the thread to be served)
	check attach-ctl-thread 1 "$(cat /proc/$apid/task/*/comm | grep -c '^fhook-ctl$')"
	echo 1 > $YAMA
	out=$(su fh -c "/u/fhook patch -p $apid --list" 2>&1)
	check attach-ctl-yama1-refused "fhook: patch: not permitted to attach to process $apid: kernel.yama.ptrace_scope is 1, so only its ancestors (or a process it named with prctl(PR_SET_PTRACER)) and CAP_SYS_PTRACE may attach" "$out"
	echo 0 > $YAMA
	out=$(su fh -c "FHOOK_ATTACH_VERBOSE=1 /u/fhook patch -p $apid --list" 2>&1 | grep -c 'channel: control socket')
	check attach-ctl-yama0-socket 1 "$out"
	kill $apid
else
	say "# no user-space fhook in the initramfs, or no yama: attach checks left out"
fi

bad=$({ cat /tmp/dmesg.old 2>/dev/null; dmesg; } | grep -E 'Oops|BUG|WARNING|Call Trace|general protection|RIP:' | head -n 5)
check dmesg-clean "" "$bad"

finish
