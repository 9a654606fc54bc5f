#!/bin/bash
# The kprobe events' grammar ('p', 'r'), resolved against a program built
# without fhook's flags: every accepted form as `fhook trace --dry-run`
# prints it (the kernel's dynamic_events form), and for every refused one
# the kernel's message with its caret, exactly (kprobe_grammar.expected:
# "## DEFINITION" and what the command prints for it).  Then removing a
# kprobe event, and a name used twice.
set -o pipefail
. "${FHOOK_ROOT:-$(dirname "$0")/../..}/tests/events/kp_setup.sh" kprobe_grammar

n=0
while IFS= read -r spec; do
	n=$((n + 1))
	want=$(S="## $spec" awk '$0 == ENVIRON["S"] { on = 1; next } /^## / { on = 0 } on' \
		tests/cli/kprobe_grammar.expected)
	got=$(timeout 20 "$FHOOK" trace --dry-run -e "$spec" -- "$PROG" 2>&1 |
	      grep -v 'has no patchable sites')
	check "grammar$n: $spec" eq "$got" "$want"
done < tests/cli/kprobe_grammar.specs

got=$(timeout 20 "$FHOOK" trace --dry-run -e 'p kp_add' -e 'r kp_add' \
	-e '-:kprobes/p_kp_add_0' -- "$PROG" 2>&1)
check remove eq "$got" "r:kprobes/r_kp_add_0 kp_add"
got=$(timeout 20 "$FHOOK" trace --dry-run -e 'p kp_add' -e 'r kp_add' -e '-:r_kp_add_0' \
	-- "$PROG" 2>&1)
check remove_any_group eq "$got" "p:kprobes/p_kp_add_0 kp_add"
got=$(timeout 20 "$FHOOK" trace --dry-run -e 'p kp_add' -e 'p:kprobes/p_kp_add_0 kp_name' \
	-- "$PROG" 2>&1)
check event_exists eq "$got" "fhook: error: Given group/event name is already used by another event
  Command: p:kprobes/p_kp_add_0 kp_name"
