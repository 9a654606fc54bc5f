/* A small traceable program for the command's tests. */
#include <stdio.h>
__attribute__((noinline)) int alpha(int x) { return x + 1; }
__attribute__((noinline)) int beta(int x) { return alpha(x) * 2; }
__attribute__((noinline)) int gamma_(int x) { return beta(x) - 3; }
int main(int argc, char **argv) { printf("%d\n", gamma_(argc)); return 0; }
