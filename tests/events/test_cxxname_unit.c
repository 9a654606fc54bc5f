// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * C++ names (lib/events/cxxname.c) on mangled names written here, without
 * a program or a recording: the short, template, full and c++filt forms of
 * operators, lambdas, conversions, ABI tags, clones, thunks and templates;
 * the names a set of symbols gives its overloads, template instances and
 * const pairs; and the time a set of 100,000 C++ symbols takes.
 * tests/cli/test_cxxnames.sh checks the same names on a real program.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../check.h"
#include "cxxname.h"

struct forms {
	const char *raw;
	const char *shrt, *templ, *full, *sig;	/* NULL sig: the same as full */
};

static const struct forms forms[] = {
	{ "_ZN3geo5Shape4areaEv", "geo::Shape::area", "geo::Shape::area", "geo::Shape::area()" },
	{ "_ZNK3geo4Rect4areaEv", "geo::Rect::area", "geo::Rect::area",
	  "geo::Rect::area() const" },
	/* operators whose names hold '<', '>', '(' */
	{ "_ZNK3geo1PltERKS0_", "geo::P::operator<", "geo::P::operator<",
	  "geo::P::operator<(geo::P const&) const" },
	{ "_ZN3geo1SltIiEEbT_", "geo::S::operator<", "geo::S::operator< <int>",
	  "geo::S::operator< <int>(int)", "bool geo::S::operator< <int>(int)" },
	{ "_ZN1AlsIiEEvT_", "A::operator<<", "A::operator<< <int>", "A::operator<< <int>(int)",
	  "void A::operator<< <int>(int)" },
	{ "_ZN1ArsIiEEvT_", "A::operator>>", "A::operator>><int>", "A::operator>><int>(int)",
	  "void A::operator>><int>(int)" },
	{ "_ZN1AgtIiEEbT_", "A::operator>", "A::operator><int>", "A::operator><int>(int)",
	  "bool A::operator><int>(int)" },
	{ "_ZNK3geo1SssERKS0_", "geo::S::operator<=>", "geo::S::operator<=>",
	  "geo::S::operator<=>(geo::S const&) const" },
	{ "_ZN3geolsERSoRKNS_1PE", "geo::operator<<", "geo::operator<<",
	  "geo::operator<<(std::ostream&, geo::P const&)" },
	{ "_ZN1AptEv", "A::operator->", "A::operator->", "A::operator->()" },
	{ "_ZN3geo1SclEi", "geo::S::operator()", "geo::S::operator()", "geo::S::operator()(int)" },
	{ "_ZNKSt8__detail10_Synth3wayclIiiEEDaRKT_RKT0_", "std::__detail::_Synth3way::operator()",
	  "std::__detail::_Synth3way::operator()<int, int>",
	  "std::__detail::_Synth3way::operator()<int, int>(int const&, int const&) const",
	  "auto std::__detail::_Synth3way::operator()<int, int>(int const&, int const&) const" },
	{ "_ZN1AixEi", "A::operator[]", "A::operator[]", "A::operator[](int)" },
	{ "_ZnwmPv", "operator new", "operator new", "operator new(unsigned long, void*)" },
	/* conversions: the type is the operator's name */
	{ "_ZNK1QcvbEv", "Q::operator bool", "Q::operator bool", "Q::operator bool() const" },
	{ "_ZNK5Outer1AcvPFivEEv", "Outer::A::operator int (*)()", "Outer::A::operator int (*)()",
	  "Outer::A::operator int (*)()() const" },
	{ "_ZN1AcvSt6vectorIiSaIiEEEv", "A::operator std::vector<int, std::allocator<int> >",
	  "A::operator std::vector<int, std::allocator<int> >",
	  "A::operator std::vector<int, std::allocator<int> >()" },
	/* lambdas: their parameters are part of the name, kept whole */
	{ "_ZZ4mainENKUliE_clEi", "main::{lambda(int)#1}::operator()",
	  "main::{lambda(int)#1}::operator()", "main::{lambda(int)#1}::operator()(int) const" },
	{ "_ZZ4mainENKUlSt6vectorIiSaIiEEE_clES1_",
	  "main::{lambda(std::vector<int, std::allocator<int> >)#1}::operator()",
	  "main::{lambda(std::vector<int, std::allocator<int> >)#1}::operator()",
	  "main::{lambda(std::vector<int, std::allocator<int> >)#1}::operator()(std::vector<int, std::allocator<int> >) const" },
	{ "_ZZ2tfIiEiT_ENKUliSt6vectorIiSaIiEEE_clEiS3_",
	  "tf::{lambda(int, std::vector<int, std::allocator<int> >)#1}::operator()",
	  "tf<int>(int)::{lambda(int, std::vector<int, std::allocator<int> >)#1}::operator()",
	  "tf<int>(int)::{lambda(int, std::vector<int, std::allocator<int> >)#1}::operator()(int, std::vector<int, std::allocator<int> >) const" },
	{ "_ZZZ4mainENKUlvE_clEvENKUliE_clEi",
	  "main::{lambda()#1}::operator()::{lambda(int)#1}::operator()",
	  "main::{lambda()#1}::operator()() const::{lambda(int)#1}::operator()",
	  "main::{lambda()#1}::operator()() const::{lambda(int)#1}::operator()(int) const" },
	{ "_ZZ4mainENKUlT_E0_clIiEEDaS_", "main::{lambda(auto:1)#2}::operator()",
	  "main::{lambda(auto:1)#2}::operator()<int>", "main::{lambda(auto:1)#2}::operator()<int>(int) const",
	  "auto main::{lambda(auto:1)#2}::operator()<int>(int) const" },
	{ "_ZNSt14_Function_base13_Base_managerIZ4mainEUliE_E10_M_destroyERSt9_Any_dataSt17integral_constantIbLb1EE",
	  "std::_Function_base::_Base_manager::_M_destroy",
	  "std::_Function_base::_Base_manager<main::{lambda(int)#1}>::_M_destroy",
	  "std::_Function_base::_Base_manager<main::{lambda(int)#1}>::_M_destroy(std::_Any_data&, std::integral_constant<bool, true>)" },
	{ "_ZN12_GLOBAL__N_13barEi", "(anonymous namespace)::bar", "(anonymous namespace)::bar",
	  "(anonymous namespace)::bar(int)" },
	{ "_Z1fIN12_GLOBAL__N_11XEEvv", "f", "f<(anonymous namespace)::X>",
	  "f<(anonymous namespace)::X>()", "void f<(anonymous namespace)::X>()" },
	/* templates, ABI tags, std:: */
	{ "_ZNSt8_Rb_treeIiSt4pairIKiiESt10_Select1stIS2_ESt4lessIiESaIS2_EE8_M_eraseEPSt13_Rb_tree_nodeIS2_E",
	  "std::_Rb_tree::_M_erase",
	  "std::_Rb_tree<int, std::pair<int const, int>, std::_Select1st<std::pair<int const, int> >, std::less<int>, std::allocator<std::pair<int const, int> > >::_M_erase",
	  "std::_Rb_tree<int, std::pair<int const, int>, std::_Select1st<std::pair<int const, int> >, std::less<int>, std::allocator<std::pair<int const, int> > >::_M_erase(std::_Rb_tree_node<std::pair<int const, int> >*)" },
	{ "_ZN3geo4makeINS_1PEEESt6vectorIT_SaIS3_EEi", "geo::make", "geo::make<geo::P>",
	  "geo::make<geo::P>(int)", "std::vector<geo::P, std::allocator<geo::P> > geo::make<geo::P>(int)" },
	{ "_ZN5Outer5InnerIiE3getB5cxx11Ev", "Outer::Inner::get", "Outer::Inner<int>::get[abi:cxx11]",
	  "Outer::Inner<int>::get[abi:cxx11]()" },
	{ "_ZN1XIFvvEE1fEv", "X::f", "X<void ()>::f", "X<void ()>::f()" },
	{ "_ZN1XILb1EE1fEv", "X::f", "X<true>::f", "X<true>::f()" },
	{ "_ZNSsC1EPKcRKSaIcE", "std::basic_string::basic_string",
	  "std::basic_string<char, std::char_traits<char>, std::allocator<char> >::basic_string",
	  "std::basic_string<char, std::char_traits<char>, std::allocator<char> >::basic_string(char const*, std::allocator<char> const&)" },
	{ "_ZNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEC2IS3_EEPKcRKS3_",
	  "std::__cxx11::basic_string::basic_string",
	  "std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >::basic_string<std::allocator<char> >",
	  "std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >::basic_string<std::allocator<char> >(char const*, std::allocator<char> const&)" },
	{ "_ZN3geo3BoxIiED2Ev", "geo::Box::~Box", "geo::Box<int>::~Box", "geo::Box<int>::~Box()" },
	/* copies GCC made of a function, thunks */
	{ "_ZN1A1fEv.isra.0", "A::f", "A::f", "A::f() [clone .isra.0]" },
	{ "_Z5clonev.cold", "clone", "clone", "clone() [clone .cold]" },
	{ "_ZThn8_N1B1fEv", "non-virtual thunk to B::f", "non-virtual thunk to B::f",
	  "non-virtual thunk to B::f()" },
};

static void case_forms(void)
{
	char name[64];
	size_t i;

	for (i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		const struct forms *f = &forms[i];
		const char *want[CXX_NR_FORMS] = { f->shrt, f->templ, f->full, f->sig ? f->sig : f->full };
		char *got[CXX_NR_FORMS];
		int ret, k;

		ret = cxx_names(f->raw, (1U << CXX_NR_FORMS) - 1, got);
		snprintf(name, sizeof(name), "cxxname_forms_%zu", i);
		if (ret) {
			CHECK(0, name, "%s: cxx_names() = %d", f->raw, ret);
			continue;
		}
		for (k = 0; k < CXX_NR_FORMS && !strcmp(got[k], want[k]); k++)
			;
		CHECK(k == CXX_NR_FORMS, name, "%s: form %d is \"%s\", expected \"%s\"", f->raw, k,
		      k < CXX_NR_FORMS ? got[k] : "", k < CXX_NR_FORMS ? want[k] : "");
		for (k = 0; k < CXX_NR_FORMS; k++)
			free(got[k]);
	}
}

/* one form alone is the same as asked with the others (the tree is printed once per form) */
static void case_one_form(void)
{
	const struct forms *f = forms;
	char *s, *t;

	/* std::_Rb_tree: a tree whose nodes are shared */
	while (strncmp(f->raw, "_ZNSt8_Rb_tree", 14))
		f++;
	s = cxx_name(f->raw, CXX_TEMPL);
	t = cxx_name(f->raw, CXX_SHORT);

	CHECK(s && t && !strcmp(s, f->templ) && !strcmp(t, f->shrt), "cxxname_one_form",
	      "%s: \"%s\", \"%s\"", f->raw, s, t);
	free(s);
	free(t);
}

static void case_not_cxx(void)
{
	char *got[CXX_NR_FORMS];

	CHECK(cxx_names("main", 1U << CXX_SHORT, got) == -EINVAL && !got[CXX_SHORT],
	      "cxxname_c_name", "a C name was demangled");
	CHECK(cxx_names("_Zbad", 1U << CXX_SHORT, got) == -EINVAL && !got[CXX_SHORT],
	      "cxxname_bad_name", "a bad mangled name was demangled");
	CHECK(!cxx_name("", CXX_FULL) && !cxx_name("_", CXX_FULL), "cxxname_empty", "demangled");
	CHECK(!strcmp(cxx_params("f<int>(int) const", "f<int>"), "(int) const") &&
	      !strcmp(cxx_params("g()", "f"), ""), "cxxname_params", "cxx_params()");
}

/* A set, and what it names each of its symbols. */
struct named {
	const char *raw, *want;	/* NULL want: cxx_set_short() gives NULL */
};

static void check_set(const char *name, const struct named *n, size_t nr)
{
	struct cxx_set *s = cxx_set_new();
	size_t i;

	for (i = 0; s && i < nr; i++)
		if (cxx_set_add(s, n[i].raw))
			break;
	for (i = 0; s && i < nr; i++) {
		const char *got = cxx_set_short(s, n[i].raw);

		if (n[i].want ? !got || strcmp(got, n[i].want) : got != NULL)
			break;
	}
	CHECK(s && i == nr, name, "%s is \"%s\", expected \"%s\"", i < nr ? n[i].raw : "",
	      s && i < nr && cxx_set_short(s, n[i].raw) ? cxx_set_short(s, n[i].raw) : "(null)",
	      i < nr && n[i].want ? n[i].want : "(null)");
	cxx_set_free(s);
}

static void case_set_overloads(void)
{
	static const struct named n[] = {
		{ "_ZN3geo5scaleEdi", "geo::scale(double, int)" },
		{ "_ZN3geo5scaleEli", "geo::scale(long, int)" },
		{ "_ZN3geo5Shape4areaEv", "geo::Shape::area" },
		{ "main", NULL },
	};

	check_set("cxxname_set_overloads", n, sizeof(n) / sizeof(n[0]));
}

static void case_set_const(void)
{
	static const struct named n[] = {
		{ "_ZNK3geo5Shape3lenEv", "geo::Shape::len() const" },
		{ "_ZN3geo5Shape3lenEv", "geo::Shape::len()" },
	};

	check_set("cxxname_set_const", n, sizeof(n) / sizeof(n[0]));
}

static void case_set_instances(void)
{
	static const struct named n[] = {
		/* the same parameters: the template arguments tell them apart */
		{ "_ZNK3geo3BoxIiE3getEv", "geo::Box<int>::get" },
		{ "_ZNK3geo3BoxIlE3getEv", "geo::Box<long>::get" },
		/* parameters of the template's type: they are enough */
		{ "_ZN3geo3BoxIiE3putEi", "geo::Box::put(int)" },
		{ "_ZN3geo3BoxIlE3putEl", "geo::Box::put(long)" },
		/* a template function returning a namespaced type */
		{ "_Z8make_boxIiEN3geo3BoxIT_EES2_", "make_box(int)" },
		{ "_Z8make_boxIlEN3geo3BoxIT_EES2_", "make_box(long)" },
	};

	check_set("cxxname_set_instances", n, sizeof(n) / sizeof(n[0]));
}

/* neither the parameters nor the template arguments alone: both */
static void case_set_both(void)
{
	static const struct named n[] = {
		{ "_ZN3geo3BoxIiE3setEi", "geo::Box<int>::set(int)" },
		{ "_ZN3geo3BoxIiE3setEl", "geo::Box::set(long)" },
		{ "_ZN3geo3BoxIlE3setEi", "geo::Box<long>::set" },
	};

	check_set("cxxname_set_both", n, sizeof(n) / sizeof(n[0]));
}

static void case_set_same_function(void)
{
	static const struct named n[] = {
		/* a constructor's C1 and C2, twice the same name: one function */
		{ "_ZN2ns1KC1Ev", "ns::K::K" },
		{ "_ZN2ns1KC2Ev", "ns::K::K" },
		{ "_ZN2ns1KC1Ev", "ns::K::K" },
		/* a copy GCC made of a function: the clone says so */
		{ "_ZN1A1fEv", "A::f()" },
		{ "_ZN1A1fEv.isra.0", "A::f() [clone .isra.0]" },
	};

	check_set("cxxname_set_same_function", n, sizeof(n) / sizeof(n[0]));
}

/* a C function of the short name: the C++ one says its parameters */
static void case_set_c_name(void)
{
	static const struct named n[] = {
		{ "foo", NULL },
		{ "_ZL3fooi", "foo(int)" },
	};

	check_set("cxxname_set_c_name", n, sizeof(n) / sizeof(n[0]));
}

/* symbols added after names were given: worked out again */
static void case_set_grows(void)
{
	struct cxx_set *s = cxx_set_new();
	const char *before, *after;
	char copy[64];

	cxx_set_add(s, "_ZN3geo5scaleEdi");
	before = cxx_set_short(s, "_ZN3geo5scaleEdi");
	snprintf(copy, sizeof(copy), "%s", before ? before : "");
	cxx_set_add(s, "_ZN3geo5scaleEli");
	after = cxx_set_short(s, "_ZN3geo5scaleEdi");
	CHECK(before && after && !strcmp(copy, "geo::scale") &&
	      !strcmp(after, "geo::scale(double, int)") &&
	      !cxx_set_short(s, "_ZN3geo5scaleEci"), "cxxname_set_grows",
	      "\"%s\" then \"%s\"", copy, after ? after : "(null)");
	cxx_set_free(s);
}

static double cpu_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/*
 * 100,000 C++ symbols, most of them sharing their short name with others
 * (instances of class templates, overloads): the set's names in at most
 * 0.5 s of CPU (the best of three; not under a sanitizer).
 */
static void case_set_speed(void)
{
	enum { N = 100000 };
	static const char *const types[] = { "i", "l", "d", "NS_1PE", "St6vectorIiSaIiEE", "PKc" };
	char **raw = calloc(N, sizeof(*raw));
	double best = 1e9;
	int i, run, unique = 0;

	for (i = 0; raw && i < N; i++) {
		const char *t = types[i % 6], *p = types[i / 6 % 6];
		char ns[16], cls[16], fn[16];

		/* n<a>::Box<b><T>::method<c>(P) const */
		snprintf(ns, sizeof(ns), "n%d", i % 97);
		snprintf(cls, sizeof(cls), "Box%d", i / 97 % 61);
		snprintf(fn, sizeof(fn), "method%d", i / (97 * 61) % 7);
		if (asprintf(&raw[i], "_ZNK%zu%s%zu%sI%sE%zu%sE%s", strlen(ns), ns, strlen(cls), cls,
			     t, strlen(fn), fn, p) < 0)
			raw[i] = NULL;
	}
	for (run = 0; raw && run < 3; run++) {
		struct cxx_set *s = cxx_set_new();
		double t0 = cpu_now(), t;

		for (i = 0; i < N; i++)
			cxx_set_add(s, raw[i]);
		cxx_set_short(s, raw[0]);
		t = cpu_now() - t0;
		if (t < best)
			best = t;
		if (!run) {
			for (i = 0; i < N; i++) {
				const char *n = cxx_set_short(s, raw[i]);

				unique += n && strchr(n, '(');
			}
		}
		cxx_set_free(s);
	}
	CHECK(unique > N / 2, "cxxname_set_speed_names", "%d names with parameters", unique);
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
	printf("SKIP cxxname_set_speed: under a sanitizer (%.3f s)\n", best);
#else
	CHECK(best <= 0.5, "cxxname_set_speed", "%.3f s of CPU for %d symbols", best, N);
	printf("# %d symbols: %.3f s\n", N, best);
#endif
	for (i = 0; raw && i < N; i++)
		free(raw[i]);
	free(raw);
}

static const struct check_case cases[] = {
	CHECK_CASE(forms),
	CHECK_CASE(one_form),
	CHECK_CASE(not_cxx),
	CHECK_CASE(set_overloads),
	CHECK_CASE(set_const),
	CHECK_CASE(set_instances),
	CHECK_CASE(set_both),
	CHECK_CASE(set_same_function),
	CHECK_CASE(set_c_name),
	CHECK_CASE(set_grows),
	CHECK_CASE(set_speed),
};

int main(void)
{
	return check_run_cases(cases);
}
