#!/bin/bash
# `fhook prepare` and the file it is handed: owner, group and mode
# kept exactly; set-id files of another owner, files with several hard links
# and read-only files refused unless --force; a symlink followed, the link
# left a link; a refused file byte-for-byte unchanged.
set -o pipefail
cd "${FHOOK_ROOT:-$(dirname "$0")/../..}" || exit 2
F=$PWD/build/fhook
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

CHECK_PREFIX=prepare_files
. tests/check.sh
meta() { stat -c '%F %U:%G %a %h' "$1"; }	# type owner:group mode links
sum() { md5sum < "$1"; }
prepared() { objdump -d "$1" | grep -A1 '<alpha>:' | grep -q nopl; }

gcc -O2 $($F cflags) -o $T/prog tests/cli/prog.c || exit 2
cd $T || exit 2

# mode kept (not the umask's)
cp prog m && chmod 0750 m
out=$($F prepare m 2>&1); st=$?
check mode_kept eq "$st:$out:$(stat -c %a m)" "0:m: 4 sites, 4 rewritten:750"
check mode_kept_runs eq "$(./m)" 1

if [ "$(id -u)" = 0 ]; then
	# owner and group kept (a uid and gid no user has)
	cp prog o && chown 4242:4243 o && chmod 0755 o
	out=$($F prepare o 2>&1); st=$?
	check owner_kept eq "$st:$(stat -c '%u:%g %a' o)" "0:4242:4243 755"
	# set-id of another owner: refused, unchanged; --force keeps owner and bits
	cp prog s && chown 4242:4243 s && chmod 4755 s
	before=$(sum s)
	out=$($F prepare s 2>&1); st=$?
	check setid_other_refused eq "$st:$out" "1:fhook: prepare: s: is set-user-ID and owned by uid 4242, not by you; rewrite it as its owner or with --force; file left unchanged"
	check setid_other_unchanged eq "$(sum s):$(stat -c '%u:%g %a' s)" "$before:4242:4243 4755"
	out=$($F prepare --force s 2>&1); st=$?
	check setid_force_keeps eq "$st:$(stat -c '%u:%g %a' s)" "0:4242:4243 4755"
	check setid_force_rewritten prepared s
	cp prog g && chown 4242:4243 g && chmod 2755 g
	out=$($F prepare g 2>&1); st=$?
	check setgid_other_refused eq "$st:$(stat -c '%u:%g %a' g)" "1:4242:4243 2755"
	# set-id of one's own: rewritten, the bit kept
	cp prog own && chmod 4755 own
	out=$($F prepare own 2>&1); st=$?
	check setid_own eq "$st:$(stat -c '%u:%g %a' own)" "0:0:0 4755"
else
	echo "SKIP prepare_files/owner_kept: needs root to give files away"
fi

# symlinks (a chain, relative): the target is rewritten, the links stay links
mkdir d && cp prog d/t && ln -s d/t l1 && ln -s l1 l2
out=$($F prepare l2 2>&1); st=$?
check symlink_ok eq "$st:$out" "0:l2: 4 sites, 4 rewritten"
check symlink_stays_link eq "$(stat -c %F l2):$(stat -c %F l1):$(readlink l2)" "symbolic link:symbolic link:l1"
check symlink_target_rewritten prepared d/t
check symlink_target_one_link eq "$(meta d/t)" "$(meta prog | sed 's/ [0-9]*$//') 1"
check symlink_no_temp eq "$(ls d)" "t"
# dangling link: an error, nothing made
ln -s nowhere dl
out=$($F prepare dl 2>&1); st=$?
check symlink_dangling eq "$st:$out:$(stat -c %F dl)" "1:fhook: prepare: dl: No such file or directory:symbolic link"

# hard links: refused; --force rewrites in place, every name sees it
cp prog h1 && ln h1 h2
before=$(sum h1)
out=$($F prepare h1 2>&1); st=$?
check hardlink_refused eq "$st:$out" "1:fhook: prepare: h1: has 2 hard links; rewriting it would leave the other names with the old contents (--force rewrites it in place, for every name); file left unchanged"
check hardlink_unchanged eq "$(sum h1):$(sum h2)" "$before:$before"
out=$($F prepare --force h1 2>&1); st=$?
check hardlink_force eq "$st:$(stat -c %h h1):$(stat -c %i h1)" "0:2:$(stat -c %i h2)"
check hardlink_force_both prepared h2

# read-only: refused; --force rewrites it and keeps it read-only
cp prog r && chmod 0555 r
before=$(sum r)
out=$($F prepare r 2>&1); st=$?
check readonly_refused eq "$st:$out" "1:fhook: prepare: r: is read-only (mode 0555); --force rewrites it anyway; file left unchanged"
check readonly_unchanged eq "$(sum r)" "$before"
out=$($F prepare --force r 2>&1); st=$?
check readonly_force eq "$st:$(stat -c %a r)" "0:555"
check readonly_force_rewritten prepared r

# not a regular file
out=$($F prepare d 2>&1); st=$?
check directory_refused eq "$st:$out" "1:fhook: prepare: d: not a regular file"
exit 0
