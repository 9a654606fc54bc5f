#!/bin/bash
# The flight recorder's event trigger, --trigger 'EVENT if FILTER': an
# EVENT whose fields match FILTER (the kernel's event filter grammar:
# numbers, strings, globs, signed fields, &&, ||, !, parentheses) dumps
# the rings; one that never matches fires nothing; the bad filters say
# what and where, as the kernel's filter file does.
set -o pipefail
cd "${FHOOK_ROOT:-$(dirname "$0")/../..}" || exit 2
F=$PWD/build/fhook
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
CHECK_PREFIX=flight_filter
. tests/check.sh

cat > $T/req.c <<'C'
#include <stdio.h>
#include <string.h>
__attribute__((noinline)) long req(int id, const char *path, long size)
{
	__asm__ volatile("");
	return size + (long)strlen(path) + id;
}
/* 200 requests: /files/N of N*10 bytes; number 150 is /etc/secret, 120 has size -5 */
int main(void)
{
	char path[64];
	long s = 0;
	int i;

	for (i = 0; i < 200; i++) {
		snprintf(path, sizeof(path), i == 150 ? "/etc/secret" : "/files/%d", i);
		s += req(i, path, i == 120 ? -5 : i * 10L);
	}
	printf("%ld\n", s);
	return 0;
}
C
gcc -O1 $($F cflags) -o $T/req $T/req.c || exit 2
EV='f:app/req req id=$arg1:s32 path=+0($arg2):string size=$arg3:s64'

run() {	# name, trigger; sets out, st, $T/err
	out=$(timeout 60 $F record --flight-recorder --trigger "$2" -e "$EV" -o "$T/$1.rec" -- \
		$T/req 2> "$T/err")
	st=$?
}

# a number: fires once, at that call
run num 'req if id == 57'
check num_status eq "$st: $out" "0: 219586"
check num_fired eq "$(grep -c 'flight recorder: req if id == 57: dump 1, ' $T/err)" 1
check num_dumps eq "$(grep -o '[0-9]* dumps (the last at the end)' $T/err)" "2 dumps (the last at the end)"
check num_events eq "$($F replay $T/num.rec 2>/dev/null | grep -c 'req: ')" 200

# a string glob and a number, by GROUP/EVENT
run glob 'app/req if path ~ "*secret*" && size > 100'
check glob_fired eq "$(grep -c 'flight recorder: app/req if path ~ "\*secret\*" && size > 100: dump 1, ' $T/err)" 1

# a signed field below zero; || and ! and parentheses
run sgn 'req if size < 0'
check signed_fired eq "$(grep -c 'dump 1, ' $T/err)" 1
run not 'req if !(id < 199) || id == 1000'
check not_fired eq "$(grep -c ': dump [0-9]*, ' $T/err)" 1
run paren 'req if (path == "/files/3" || path == "/files/5") && size & 8'
check paren_fired eq "$(grep -c ': dump [0-9]*, ' $T/err)" 1

# never: only the end's dump
run never 'req if id > 1000 || path == "/nowhere"'
check never_status eq "$st: $out" "0: 219586"
check never_quiet eq "$(grep -c ': dump [0-9]*, ' $T/err)" 0
check never_dumps eq "$(grep -o '[0-9]* dump[s]* (the last at the end)' $T/err)" "1 dump (the last at the end)"

# EVENT:N: ten matches 100 ms apart, each its own dump; with :3, three and the end's
cat > $T/req10.c <<'C'
#include <stdio.h>
#include <unistd.h>
__attribute__((noinline)) long req(int id, long size) { __asm__ volatile(""); return size + id; }
int main(void)
{
	long s = 0;
	int i;

	for (i = 0; i < 10; i++) {
		s += req(i, 1000 + i);
		usleep(100000);
	}
	printf("%ld\n", s);
	return 0;
}
C
gcc -O1 $($F cflags) -o $T/req10 $T/req10.c || exit 2
EV10='f:app/req req id=$arg1:s32 size=$arg2:s64'
out=$(timeout 60 $F record --flight-recorder --trigger 'req if size > 100' -e "$EV10" \
	-o $T/c.rec -- $T/req10 2> $T/err)
check nocount_dumps eq "$?: $out: $(grep -o '[0-9]* dumps (the last at the end)' $T/err)" \
	"0: 10090: 11 dumps (the last at the end)"
out=$(timeout 60 $F record --flight-recorder --trigger 'app/req:3 if size > 100' -e "$EV10" \
	-o $T/c.rec -- $T/req10 2> $T/err)
check count_status eq "$?: $out" "0: 10090"
check count_fired eq "$(grep -c 'flight recorder: app/req:3 if size > 100: dump [0-9]*, ' $T/err)" 3
check count_said eq "$(grep -c '^fhook: record: flight recorder: the trigger fired its 3 dumps: no more but the end.s$' $T/err)" 1
check count_dumps eq "$(grep -o '[0-9]* dumps (the last at the end)' $T/err)" "4 dumps (the last at the end)"
check count_events eq "$($F replay $T/c.rec 2>/dev/null | grep -c 'req: ')" 10

# bad filters: said with a caret, exit 1; usage errors exit 2
bad() {	# name, trigger, status and message wanted
	out=$(timeout 30 $F record --flight-recorder --trigger "$2" -e "$EV" -o $T/x.rec -- \
		$T/req 2>&1)
	check "$1" eq "$?: $out" "$3"
}
bad no_field 'req if nosuch == 1' "1: fhook: record: --trigger: parse_error: Field not found
  Command: req if nosuch == 1
                  ^"
bad string_op 'req if path > 5' "1: fhook: record: --trigger: parse_error: Illegal operation for field type
  Command: req if path > 5
                       ^"
bad open_paren 'req if (id == 1' "1: fhook: record: --trigger: parse_error: Too many '('
  Command: req if (id == 1
                  ^"
bad bad_int 'req if id == 12abc' "1: fhook: record: --trigger: parse_error: Illegal integer value
  Command: req if id == 12abc
                        ^"
bad no_event 'nope if id == 1' "1: fhook: record: --trigger nope if id == 1: no event nope among the -e events"
bad count_zero 'req:0 if id == 1' "1: fhook: record: --trigger req:0 if id == 1: the count after ':' is a number of dumps, 1 to 4294967295"
bad count_word 'req:many if id == 1' "1: fhook: record: --trigger req:many if id == 1: the count after ':' is a number of dumps, 1 to 4294967295"
bad no_event_name ' if id == 1' "1: fhook: record: --trigger  if id == 1: no event  among the -e events"
out=$(timeout 30 $F record --trigger 'req if id == 1' -e "$EV" -o $T/x.rec -- $T/req 2>&1)
check needs_flight eq "$?: $out" "2: fhook: record: --trigger needs --flight-recorder"
