# Sourced by the kprobe events' tests (after set -o pipefail): the tree,
# the command, the programs built without fhook's flags (kp_* under
# $D), a temporary directory $T.  Skips the test when they cannot be built.
#   . tests/events/kp_setup.sh NAME FILE...   (FILE: under $D)
cd "${FHOOK_ROOT:-$(dirname "$0")/../..}" || exit 2
. tests/check.sh
B=${FHOOK_BUILD:-build}
FHOOK=${FHOOK_CLI:-$B/fhook}
D=$B/tests/events
PROG=$D/kp_prog
kp_name=$1
shift
for f in kp_prog "$@"; do
	[ -e "$D/$f" ] || make -s "$D/$f" >/dev/null 2>&1
done
if [ ! -x "$FHOOK" ] || [ ! -x "$PROG" ]; then
	echo "SKIP $kp_name: $FHOOK or $PROG not built"
	exit 0
fi
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
