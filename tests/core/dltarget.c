// A library loaded and unloaded by test_dlopen.
int dl_target_fn(int x) { __asm__ volatile(""); return x * 11; }
int dl_other_fn(int x) { __asm__ volatile(""); return dl_target_fn(x) + 1; }
