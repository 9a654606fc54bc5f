# Sourced by the events tests: the known program's events, and the
# normalization of what varies between runs (times, pids, tids, cpus,
# stack addresses).
EVENTS=(-e 'f vfs_read $arg* file->name:string file->f_path.dentry:string file->mode file->kind'
	-e 'f vfs_read%return $retval'
	-e 'f add a b' -e 'f add%return $retval'
	-e 'f note msg:string'
	-e 'f fact n' -e 'f fact%return $retval'
	-e 'f run%return $retval c=$comm'
	-e 'f:globals/vars vfs_read @counter:s32 g=+0(@greeting):string fl=+0($arg1):s32 arr=+24($arg1):char[6]')

normalize() {
	sed -E -e 's/ +[0-9]+\.[0-9]{6}/ TS/g' -e 's/[0-9]+\.[0-9]{6}/TS/g' -e 's/[0-9]+\.[0-9]{3}([,}])/TS\1/g' \
	    -e 's/prog-[0-9]+ +/prog-TID /' -e 's/\[[0-9]{3}\]/[CPU]/' \
	    -e 's/"ts":[0-9]+/"ts":TS/g' -e 's/"(pid|tid|cpu)":[0-9]+/"\1":N/g' -e 's/0x7ff[0-9a-f]+/STACK/g'
}
