// Built without -pg and without fhook's cflags: a catch in an untraced frame.
extern "C" int untraced_catch(void (*fn)(int), int arg)
{
	try {
		fn(arg);
	} catch (...) {
		return 7;
	}
	return 0;
}
