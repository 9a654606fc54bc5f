# The memcg redirect's replacement as a plain shared object: `make demo` patches it
# into a memcg server started without fhook (fhook patch -p PID).
$(B)/examples/memcg/memcg_patch.so: examples/memcg/memcg_patch.c examples/memcg/memcg.h
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 -g -Wall -fPIC -shared $(SAN) -o $@ $<

EXTRA_TARGETS += $(B)/examples/memcg/memcg_patch.so
