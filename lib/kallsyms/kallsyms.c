// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * kallsyms for a process: lookups over the symbols of every loaded object.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/rcu.h"

#include <fhook/kallsyms.h>

#include "objects.h"
#include "util/recursion.h"

/* Learn about objects loaded since the last look. */
static void refresh(void)
{
	fhook_objects_refresh();
}

unsigned long kallsyms_lookup_name(const char *name)
{
	fhook_internal_guard();
	struct fhook_object *obj;
	unsigned long addr = 0;
	int rcu;

	if (!name || !*name)
		return 0;
	refresh();
	rcu = fhook_rcu_read_lock();
	for (obj = fhook_objects; obj && !addr; obj = obj->next) {
		struct fhook_sym_range *r;

		/* the lowest address of the name, as in the table sorted by address */
		if (fhook_object_find_name(obj, name, &r) > 0)
			addr = r[0].start;
		free(r);
	}
	fhook_rcu_read_unlock(rcu);
	return addr;
}

static const struct fhook_sym *find(unsigned long addr, struct fhook_object **objp)
{
	struct fhook_object *obj = fhook_object_of(addr);

	if (!obj) {
		refresh();
		obj = fhook_object_of(addr);
		if (!obj)
			return NULL;
	}
	*objp = obj;
	return fhook_object_sym_at(obj, addr);
}

const char *kallsyms_lookup(unsigned long addr, unsigned long *symbolsize,
			    unsigned long *offset, const char **modname, char *namebuf)
{
	fhook_internal_guard();
	const struct fhook_sym *sym;
	struct fhook_object *obj;
	const char *ret = NULL;
	int rcu;

	rcu = fhook_rcu_read_lock();
	sym = find(addr, &obj);
	if (sym) {
		if (symbolsize)
			*symbolsize = sym->size;
		if (offset)
			*offset = addr - sym->addr;
		if (modname)
			*modname = obj->modname;
		if (namebuf) {
			snprintf(namebuf, KSYM_NAME_LEN, "%s", fhook_sym_name(obj, sym));
			ret = namebuf;
		} else {
			ret = "";
		}
	}
	fhook_rcu_read_unlock(rcu);
	return ret;
}

int kallsyms_lookup_size_offset(unsigned long addr, unsigned long *symbolsize,
				unsigned long *offset)
{
	fhook_internal_guard();
	return kallsyms_lookup(addr, symbolsize, offset, NULL, NULL) != NULL;
}

static int print_symbol(char *buffer, size_t size, unsigned long address, bool with_offset)
{
	struct fhook_object *obj;
	int n, rcu;

	rcu = fhook_rcu_read_lock();
	obj = fhook_object_of(address);
	if (!obj) {
		refresh();
		obj = fhook_object_of(address);
	}
	n = fhook_object_format(obj, address, buffer, size, with_offset);
	fhook_rcu_read_unlock(rcu);
	return n;
}

int snprint_symbol(char *buffer, size_t size, unsigned long address)
{
	return print_symbol(buffer, size, address, true);
}

int sprint_symbol(char *buffer, unsigned long address)
{
	return print_symbol(buffer, KSYM_SYMBOL_LEN, address, true);
}

int sprint_symbol_no_offset(char *buffer, unsigned long address)
{
	return print_symbol(buffer, KSYM_SYMBOL_LEN, address, false);
}

int kallsyms_on_each_symbol(int (*fn)(void *data, const char *name, unsigned long addr),
			    void *data)
{
	fhook_internal_guard();
	struct fhook_object *obj;
	int ret = 0, rcu;

	refresh();
	rcu = fhook_rcu_read_lock();
	for (obj = fhook_objects; obj && !ret; obj = obj->next) {
		size_t i;

		fhook_object_load_syms(obj);
		for (i = 0; i < obj->nr_syms && !ret; i++)
			ret = fn(data, fhook_sym_name(obj, &obj->syms[i]), obj->syms[i].addr);
	}
	fhook_rcu_read_unlock(rcu);
	return ret;
}
