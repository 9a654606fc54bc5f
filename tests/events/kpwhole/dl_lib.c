/* The library dl.c opens: two functions, one calling the other. */
__attribute__((noinline)) int kpw_lib_inner(int x)
{
	return x * 2;
}

__attribute__((noinline)) int kpw_lib_fn(int x)
{
	return kpw_lib_inner(x) + 1;
}
