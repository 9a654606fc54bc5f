/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * C++ names as people read them, from mangled symbols, with libiberty's
 * demangler (the command's only: libfhook never links it).
 *
 * A `_Z` symbol has four forms here:
 *
 *   CXX_SHORT   the qualified name without template arguments or ABI tags:
 *               std::_Rb_tree::_M_erase, geo::operator<<,
 *               main::{lambda(int)#1}::operator()
 *   CXX_TEMPL   the qualified name as written, template arguments kept:
 *               std::_Rb_tree<std::pair<int, int>, ...>::_M_erase
 *   CXX_FULL    the template form and its parameters, never the return type:
 *               geo::make<geo::P>(int), geo::Rect::area() const
 *   CXX_SIG     the whole signature as c++filt (and __cxa_demangle) print it:
 *               std::vector<geo::P> geo::make<geo::P>(int)
 *
 * None of them holds a return type but CXX_SIG; CXX_FULL is the template form
 * followed by what cxx_params() calls the parameters ("(int) const", or
 * "() [clone .isra.0]" for a copy GCC made of a function).
 *
 * Everything here is for one thread at a time per object; the functions
 * that take no object are thread-safe.
 */
#ifndef FHOOK_EV_CXXNAME_H
#define FHOOK_EV_CXXNAME_H

#include <stdbool.h>
#include <stddef.h>

enum cxx_form {
	CXX_SHORT,
	CXX_TEMPL,
	CXX_FULL,
	CXX_SIG,
	CXX_NR_FORMS
};

/* Is @raw a mangled C++ name (`_Z...`)?  Others (C) are their own name in every form. */
static inline bool cxx_mangled(const char *raw)
{
	return raw[0] == '_' && raw[1] == 'Z';
}

/*
 * The forms of @raw in @want (a mask of 1 << CXX_*), demangled once:
 * @out[form] is malloc'd for each form asked, NULL for the others.
 * Returns 0, -EINVAL (@raw is no C++ name libiberty can read: nothing
 * allocated) or -ENOMEM (nothing allocated).
 */
int cxx_names(const char *raw, unsigned int want, char *out[CXX_NR_FORMS]);

/* One form of @raw, malloc'd; NULL when @raw is no C++ name or on no memory. */
char *cxx_name(const char *raw, enum cxx_form form);

/*
 * The parameter part of @full (CXX_FULL) after its template form @templ:
 * "(int) const"; "" when @full does not start with @templ.  Points into @full.
 */
const char *cxx_params(const char *full, const char *templ);

/*
 * A set of symbols, and for each C++ one the short name that tells it
 * apart from the set's other functions: its short form, unless another
 * symbol of the set with a different full form (CXX_FULL) has the same
 * short name (an overload, another instance of a template, a const
 * overload, a C function of that name).  Then the first of short form +
 * parameters, template form, template form + parameters under which it is
 * unique among them.  Symbols whose full forms are the same (a
 * constructor's C1 and C2) keep the same name: they are one function.
 */
struct cxx_set;

struct cxx_set *cxx_set_new(void);
void cxx_set_free(struct cxx_set *s);

/*
 * Add a symbol by its name (@raw kept by pointer: it must live as long as
 * @s).  Names added twice are one symbol.  A symbol added after names
 * were asked for makes the next cxx_set_short() work them all out again,
 * and the names handed out before are then gone.  Returns 0 or -ENOMEM.
 */
int cxx_set_add(struct cxx_set *s, const char *raw);

/*
 * @raw's name that tells it apart (valid while @s lives and has no symbol
 * added), working the set's names out the first time: one pass over all
 * its symbols, about 3 us per C++ symbol (100,000 in 0.3 s).  NULL when
 * @raw is no C++ name or is not in @s, or on no memory: then its short
 * form (cxx_name()) is the best there is.
 */
const char *cxx_set_short(struct cxx_set *s, const char *raw);

#endif
