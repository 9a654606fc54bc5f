// Opened while libdlprobe.so is closed: it takes the place the other had,
// which is then opened again elsewhere.
int dl_filler_fn(int x)
{
	return x + 7;
}
