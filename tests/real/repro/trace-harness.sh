#!/bin/bash
# fhook trace refuses a glob when PROG itself (a harness: sh, make) has no
# patchable site, although --follow (the default) would trace its children.
# Expected: the child's functions are traced.  Actual: "Invalid probed address
# or symbol" and exit 1, nothing runs.
set -u
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
printf 'int work(int x) { return x + 1; }\nint main(void) { return work(41) != 42; }\n' >"$T/p.c"
cc -O0 $("$ROOT/build/fhook" cflags) -o "$T/p" "$T/p.c"
echo "== direct: works"
"$ROOT/build/fhook" trace -e 'f *' -- "$T/p"; echo "exit $?"
echo "== under sh -c: refused"
"$ROOT/build/fhook" trace -e 'f *' -- sh -c "$T/p"; echo "exit $?"
