#!/usr/bin/env python3
"""Turn a call trace into one normalized sequence, for test_vs_uftrace.sh.

    normalize.py uftrace [ALLOWED_NAMES_FILE] < trace
    normalize.py graph|text [--drop-unwound] < trace

Output: one line per event, 'TID-ORDINAL ENTER name' or 'TID-ORDINAL EXIT name',
grouped by thread (threads numbered 1, 2, ... in the order they first appear),
each thread's events in their recorded order. Names are function names only:
demangled, without parameter lists, without a library suffix.

uftrace: 'uftrace replay -f tid' output ('[ TID] | name() {', 'name();',
'} /* name */'). uftrace's own 'linux:' pseudo-events are dropped, and so is
every name not in ALLOWED_NAMES_FILE (the functions the program's instrumented
objects define): uftrace also records calls through the executable's PLT into
libc (atoi, __cxa_allocate_exception, __monstartup...), which are calls *of*
libc, not of the program's functions; fhook traces functions, not call sites.

uftrace does not show the exits of frames a longjmp removed (it shows the
jump as a second return from _setjmp, '} /* _setjmp */'), and nothing is
added for them here: test_vs_uftrace.sh compares longjmp with a known
sequence instead.

graph: 'fhook replay --format graph' ('SECS.USECS DURATION [TID] | ...', and
'} /* unwound: name */' for a frame removed by an exception or longjmp, an
exit like any other here).

text: the kernel's text format of 'fhook trace': 'comm-TID [cpu] secs: event:
(func+0x0/0xsize)' is an entry, '(caller+off/size <- func)' an exit. Nothing
is filtered on the fhook side: everything fhook shows must be a call of the
program. --drop-unwound leaves out the exits of frames removed by an exception
or longjmp (marked 'unwound' by fhook): what uftrace shows of a longjmp.
"""
import re
import sys

GRAPH = re.compile(r'\[\s*(\d+)\]\s*\|\s?(.*)$')
TEXT = re.compile(r'^\s*(.*?)-(\d+)\s+\[\d+\]\s+[\d.]+:\s+[^:]+:\s+\((.*)$')


def balanced(s):
    """The text up to the ')' that closes an already open '('."""
    depth = 1
    for i, c in enumerate(s):
        if c == '(':
            depth += 1
        elif c == ')':
            depth -= 1
            if depth == 0:
                return s[:i]
    return s


def strip_name(n):
    n = n.strip()
    n = re.sub(r'\s+\[[^\]]*\]$', '', n)          # ' [libfoo.so]'
    n = re.sub(r'^unwound:\s*', '', n)
    while True:                                   # parameter lists, ' const'
        m = re.sub(r'\s+const$', '', n)
        if m.endswith(')'):
            depth = 0
            for i in range(len(m) - 1, -1, -1):
                if m[i] == ')':
                    depth += 1
                elif m[i] == '(':
                    depth -= 1
                    if depth == 0:
                        break
            if i > 0 and depth == 0:
                n = m[:i].rstrip()
                continue
        break
    return n


def main():
    mode = sys.argv[1]
    allowed = None
    drop_unwound = '--drop-unwound' in sys.argv[2:]
    if len(sys.argv) > 2 and not drop_unwound:
        with open(sys.argv[2]) as f:
            allowed = {strip_name(l) for l in f if l.strip()}
    order, evs = [], {}

    def add(tid, kind, name):
        name = strip_name(name)
        if not name:
            return
        if allowed is not None and name not in allowed:
            return
        if tid not in evs:
            order.append(tid)
            evs[tid] = []
        evs[tid].append((kind, name))

    for line in sys.stdin:
        line = line.rstrip('\n')
        if mode in ('uftrace', 'graph'):
            m = GRAPH.search(line)
            if not m:
                continue
            tid, body = m.group(1), m.group(2).strip()
            if 'linux:' in body:
                continue
            if body.startswith('}'):
                mm = re.match(r'}\s*/\*\s*(.*?)\s*\*/', body)
                if mm and drop_unwound and mm.group(1).startswith('unwound:'):
                    continue
                # a call its thread never returned from (exec, exit): no exit
                if mm and mm.group(1).endswith('(unfinished)'):
                    continue
                if mm:
                    add(tid, 'EXIT', mm.group(1))
            elif body.endswith('{'):
                add(tid, 'ENTER', body[:-1])
            elif body.endswith(';'):
                add(tid, 'ENTER', body[:-1])
                add(tid, 'EXIT', body[:-1])
        else:
            m = TEXT.match(line)
            if not m:
                continue
            rest = m.group(3)
            tid, what = m.group(2), balanced(rest)  # an exit may be followed by ' unwound', arguments
            if drop_unwound and re.match(r'\s*unwound\b', rest[len(what) + 1:]):
                continue
            if ' <- ' in what:
                add(tid, 'EXIT', what.rsplit(' <- ', 1)[1])
            else:
                mm = re.match(r'(.*)\+0x0/0x[0-9a-f]+(\s+\[[^\]]*\])?$', what)
                add(tid, 'ENTER', mm.group(1) if mm else what)
    for n, tid in enumerate(order, 1):
        for kind, name in evs[tid]:
            print('%d %s %s' % (n, kind, name))


if __name__ == '__main__':
    main()
