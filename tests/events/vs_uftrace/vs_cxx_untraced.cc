// Built without -pg and without fhook's cflags: a catch in an untraced frame,
// and an untraced frame an exception passes through.
extern "C" int untraced_catch(void (*fn)(int), int arg)
{
	try {
		fn(arg);
	} catch (...) {
		return 7;
	}
	return 0;
}

extern "C" void untraced_call(void (*fn)(int), int arg)
{
	fn(arg);
	asm volatile("" ::: "memory");	// not a tail call: this frame stays
}
