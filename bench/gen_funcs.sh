#!/bin/bash
# gen_funcs.sh N: a C file with N small distinct functions f0..f<N-1> and a
# table that keeps them all (the start-up benchmark's program body).
n=${1:?usage: gen_funcs.sh N}
awk -v n="$n" 'BEGIN {
	for (i = 0; i < n; i++)
		printf "__attribute__((noinline)) int f%d(int x) { return x * %d + %d; }\n", i, i % 97 + 1, i
	print "int gen_n = " n ";"
	print "int (*const gen_tab[])(int) = {"
	for (i = 0; i < n; i++)
		printf "\tf%d,\n", i
	print "};"
}'
