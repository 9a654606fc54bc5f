// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The assembler front end's proof (lib/arch/x86_64/vecnote.h): once the
 * real `as` has written an object, each of its functions without a pad
 * (a handler is built notrace) is decoded as the library would decode it
 * at registration (lib/arch/x86_64/vecfree.c), and those that leave the
 * vector registers alone are listed in a note section added to the
 * object.  A handler the process registers later is then checked against
 * that list by hashing its bytes, with no decoder loaded.
 *
 * A relocated field counts as zero in the hash, and only where it is a
 * displacement or an immediate of a decoded instruction, which decodes
 * the same whatever the linker writes there; an instruction the linker
 * may rewrite whole (a GOT load it relaxes) then no longer hashes as
 * proven, and its function keeps the save.
 *
 * Most objects built with fhook's flags have a pad in every function (and
 * GCC's .cold parts are never handlers) and never load libcapstone here.
 * Nothing of this may fail a build: in any doubt a function is left out,
 * and on any error the object stays as `as` wrote it (the new one is
 * written beside it and renamed over it).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "arch_insn.h"
#include "vecfree.h"
#include "vecnote.h"
#include "as_vecproof.h"

/* What the linker may still write into one function: its relocations. */
struct fn_relocs {
	uint32_t masks[2 * VECNOTE_MAX_MASKS];	/* (off, len), function-relative, sorted */
	uint32_t nmask;
	bool unknown;				/* one we cannot account for */
};

struct fn_ctx {
	const unsigned char *sec;	/* the section's bytes; addresses are its offsets */
	unsigned long lo, hi;		/* the function */
	const struct fn_relocs *r;
};

static size_t fn_read(void *ctx, unsigned long addr, void *buf, size_t len)
{
	const struct fn_ctx *c = ctx;

	if (addr < c->lo || addr >= c->hi)
		return 0;
	if (len > c->hi - addr)
		len = c->hi - addr;
	memcpy(buf, c->sec + addr, len);
	return len;
}

/* Is [@off, @off + @len) inside the field at @at of @size bytes (at 0: none)? */
static bool in_field(uint32_t off, uint32_t len, uint8_t at, uint8_t size)
{
	return at && off >= at && off + len <= (uint32_t)at + size;
}

/*
 * The bytes the linker writes must be a displacement or an immediate of
 * @insn, whose value does not change how it decodes; and not a branch's,
 * whose target would be no place we know.
 */
static bool fn_insn_ok(void *ctx, const cs_insn *insn)
{
	const struct fn_ctx *c = ctx;
	const cs_x86_encoding *enc = &insn->detail->x86.encoding;
	unsigned long off = insn->address - c->lo;
	bool branch = fhook_insn_is_branch(insn);
	uint32_t i;

	for (i = 0; i < c->r->nmask; i++) {
		uint32_t m = c->r->masks[2 * i], len = c->r->masks[2 * i + 1];

		if (m >= off + insn->size || m + len <= off)
			continue;
		if (branch || m < off ||
		    (!in_field((uint32_t)(m - off), len, enc->disp_offset, enc->disp_size) &&
		     !in_field((uint32_t)(m - off), len, enc->imm_offset, enc->imm_size)))
			return false;
	}
	return true;
}

/*
 * The bytes a relocation of @type lets the linker write: its field.  0: a
 * type we do not know, or one of the TLS sequences the linker rewrites
 * whole.  (The GOT loads it may relax change their opcode too: then the
 * function no longer hashes as proven.)
 */
static uint32_t reloc_span(uint32_t type)
{
	switch (type) {
	case R_X86_64_64: case R_X86_64_PC64: case R_X86_64_GOTOFF64: case R_X86_64_GOTPC64:
	case R_X86_64_GOT64: case R_X86_64_GOTPCREL64: case R_X86_64_GOTPLT64:
	case R_X86_64_PLTOFF64: case R_X86_64_DTPOFF64: case R_X86_64_TPOFF64:
	case R_X86_64_SIZE64:
		return 8;
	case R_X86_64_PC32: case R_X86_64_GOT32: case R_X86_64_PLT32: case R_X86_64_GOTPCREL:
	case R_X86_64_32: case R_X86_64_32S: case R_X86_64_DTPOFF32: case R_X86_64_TPOFF32:
	case R_X86_64_GOTPC32: case R_X86_64_SIZE32: case R_X86_64_GOTPCRELX:
	case R_X86_64_REX_GOTPCRELX: case R_X86_64_GOTTPOFF:
		return 4;
	default:
		return 0;
	}
}

/* Add [off, off + len) of a function of @size bytes to @r, kept sorted and merged. */
static void mask_add(struct fn_relocs *r, int64_t off, int64_t len, uint64_t size)
{
	uint32_t i, j;

	if (off < 0) {
		len += off;
		off = 0;
	}
	if (len <= 0 || (uint64_t)off >= size)
		return;
	if ((uint64_t)(off + len) > size)
		len = (int64_t)size - off;
	for (i = 0; i < r->nmask && r->masks[2 * i] < off; i++)
		;
	if (r->nmask == VECNOTE_MAX_MASKS) {
		r->unknown = true;
		return;
	}
	memmove(&r->masks[2 * i + 2], &r->masks[2 * i], (r->nmask - i) * 2 * sizeof(uint32_t));
	r->masks[2 * i] = (uint32_t)off;
	r->masks[2 * i + 1] = (uint32_t)len;
	r->nmask++;
	/* merge overlapping neighbours */
	for (i = 0, j = 0; i < r->nmask; i++) {
		if (j && r->masks[2 * (j - 1)] + r->masks[2 * (j - 1) + 1] >= r->masks[2 * i]) {
			uint32_t end = r->masks[2 * i] + r->masks[2 * i + 1];
			uint32_t *prev = &r->masks[2 * (j - 1)];

			if (end > prev[0] + prev[1])
				prev[1] = end - prev[0];
			continue;
		}
		r->masks[2 * j] = r->masks[2 * i];
		r->masks[2 * j + 1] = r->masks[2 * i + 1];
		j++;
	}
	r->nmask = j;
}

/* An object's relocations, by the section they apply to, sorted by offset. */
struct obj_relocs {
	struct sec_relocs {
		GElf_Rela *r;
		size_t nr;
		bool unknown;		/* SHT_REL, or unreadable: prove nothing there */
	} *sec;
	size_t nr_sec;
};

static int rela_cmp(const void *a, const void *b)
{
	const GElf_Rela *x = a, *y = b;

	return x->r_offset < y->r_offset ? -1 : x->r_offset > y->r_offset;
}

static int obj_relocs_read(Elf *e, struct obj_relocs *o)
{
	Elf_Scn *scn = NULL;
	size_t i;

	if (elf_getshdrnum(e, &o->nr_sec))
		return -EINVAL;
	o->sec = calloc(o->nr_sec ? o->nr_sec : 1, sizeof(*o->sec));
	if (!o->sec)
		return -ENOMEM;
	while ((scn = elf_nextscn(e, scn))) {
		struct sec_relocs *sr;
		GElf_Shdr sh;
		Elf_Data *d;
		GElf_Rela *grown;
		size_t n;

		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_RELA && sh.sh_type != SHT_REL) ||
		    sh.sh_info >= o->nr_sec)
			continue;
		sr = &o->sec[sh.sh_info];
		d = elf_getdata(scn, NULL);
		if (sh.sh_type == SHT_REL || !sh.sh_entsize || !d) {
			sr->unknown = true;	/* addends in the code: not x86-64's way */
			continue;
		}
		n = sh.sh_size / sh.sh_entsize;
		grown = realloc(sr->r, (sr->nr + n) * sizeof(*sr->r) + 1);
		if (!grown)
			return -ENOMEM;
		sr->r = grown;
		for (i = 0; i < n; i++)
			if (!gelf_getrela(d, (int)i, &sr->r[sr->nr++]))
				sr->unknown = true;
	}
	for (i = 0; i < o->nr_sec; i++)
		if (o->sec[i].nr)
			qsort(o->sec[i].r, o->sec[i].nr, sizeof(GElf_Rela), rela_cmp);
	return 0;
}

static void obj_relocs_free(struct obj_relocs *o)
{
	size_t i;

	for (i = 0; o->sec && i < o->nr_sec; i++)
		free(o->sec[i].r);
	free(o->sec);
}

/* The relocations of section @shndx inside [lo, lo + size), as masks. */
static void fn_relocs_of(const struct obj_relocs *o, size_t shndx, uint64_t lo, uint64_t size,
			 struct fn_relocs *r)
{
	const struct sec_relocs *sr = &o->sec[shndx];
	size_t a = 0, b = sr->nr;

	memset(r, 0, sizeof(*r));
	if (sr->unknown) {
		r->unknown = true;
		return;
	}
	/* the first that may reach into the function (a field is at most 8 bytes) */
	while (a < b) {
		size_t m = a + (b - a) / 2;

		if (sr->r[m].r_offset + 8 <= lo)
			a = m + 1;
		else
			b = m;
	}
	for (; a < sr->nr && sr->r[a].r_offset < lo + size; a++) {
		uint32_t type = (uint32_t)GELF_R_TYPE(sr->r[a].r_info), span;

		if (type == R_X86_64_NONE)
			continue;
		span = reloc_span(type);
		if (!span) {
			r->unknown = true;
			return;
		}
		mask_add(r, (int64_t)(sr->r[a].r_offset - lo), span, size);
		if (r->unknown)
			return;
	}
}

/* gcc's pad at a function's entry (after the arch's entry instructions): a site. */
static bool has_pad(const unsigned char *code, uint64_t size)
{
	unsigned int off = size >= FHOOK_SITE_ENTRY_MAX ? fhook_site_entry_off(code) : 0;

	return size >= off + FHOOK_SITE_LEN && fhook_site_is_pad(code + off);
}

struct note_buf {
	unsigned char *p;
	size_t len, cap;
};

static int note_put(struct note_buf *b, const void *data, size_t len)
{
	if (b->len + len > b->cap) {
		size_t cap = b->cap ? 2 * b->cap : 1024;
		unsigned char *p;

		while (cap < b->len + len)
			cap *= 2;
		p = realloc(b->p, cap);
		if (!p)
			return -ENOMEM;
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, data, len);
	b->len += len;
	return 0;
}

/* The records of @e's proven functions into @b (after the note's header). */
static int prove_functions(Elf *e, const struct obj_relocs *o, struct note_buf *b, int *nr)
{
	Elf_Scn *scn = NULL;
	bool decoder = false;

	*nr = 0;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *syms;
		size_t i, n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !sh.sh_entsize)
			continue;
		syms = elf_getdata(scn, NULL);
		n = syms ? sh.sh_size / sh.sh_entsize : 0;
		for (i = 0; i < n; i++) {
			struct fhook_vecfree_src src = { fn_read, fn_insn_ok, 0, 0, NULL };
			GElf_Shdr tsh;
			GElf_Sym sym;
			Elf_Scn *text;
			Elf_Data *td;
			struct fn_relocs r;
			struct fn_ctx c;
			struct vecnote_rec rec;
			const char *name;
			unsigned long end;
			unsigned int fregs;
			uint64_t h;

			if (!gelf_getsym(syms, (int)i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
			    !sym.st_size || sym.st_size > VECNOTE_MAX_SIZE ||
			    sym.st_shndx == SHN_UNDEF || sym.st_shndx >= SHN_LORESERVE ||
			    sym.st_shndx >= o->nr_sec)
				continue;
			/* GCC's cold part of a function: never an entry, never a handler */
			name = elf_strptr(e, sh.sh_link, sym.st_name);
			if (!name || strstr(name, ".cold"))
				continue;
			text = elf_getscn(e, sym.st_shndx);
			if (!text || !gelf_getshdr(text, &tsh) || tsh.sh_type != SHT_PROGBITS ||
			    !(tsh.sh_flags & SHF_EXECINSTR) || sym.st_value > tsh.sh_size ||
			    sym.st_size > tsh.sh_size - sym.st_value)
				continue;
			td = elf_getdata(text, NULL);
			if (!td || !td->d_buf || td->d_size < tsh.sh_size ||
			    has_pad((unsigned char *)td->d_buf + sym.st_value, sym.st_size))
				continue;
			fn_relocs_of(o, sym.st_shndx, sym.st_value, sym.st_size, &r);
			if (r.unknown)
				continue;
			if (!decoder) {
				fhook_cs_quiet = true;
				if (!fhook_cs_load())
					return 0;	/* no decoder: nothing proven */
				decoder = true;
			}
			c.sec = td->d_buf;
			c.lo = sym.st_value;
			c.hi = sym.st_value + sym.st_size;
			c.r = &r;
			src.lo = c.lo;
			src.hi = c.hi;
			src.ctx = &c;
			if (!fhook_vec_free(sym.st_value, &src, &end, &fregs))
				continue;
			h = vecnote_hash((unsigned char *)td->d_buf + sym.st_value, sym.st_size,
					 r.masks, r.nmask);
			rec.size = (uint32_t)sym.st_size;
			rec.nmask = r.nmask | fregs << VECNOTE_FREGS_SHIFT;
			rec.hash_lo = (uint32_t)h;
			rec.hash_hi = (uint32_t)(h >> 32);
			if (note_put(b, &rec, sizeof(rec)) ||
			    note_put(b, r.masks, r.nmask * 2 * sizeof(uint32_t)))
				return -ENOMEM;
			(*nr)++;
		}
	}
	return 0;
}

/* Add the note section holding @desc to @e (opened for writing). */
static int add_note(Elf *e, const struct note_buf *desc)
{
	static const char name[] = VECNOTE_SECTION;
	size_t shstrndx, name_off;
	Elf_Scn *strs, *scn;
	GElf_Shdr ssh, sh;
	Elf_Data *d;
	struct note_buf note = { 0 };
	GElf_Nhdr nh;
	static const char owner[8] = VECNOTE_OWNER;

	if (elf_getshdrstrndx(e, &shstrndx) || !(strs = elf_getscn(e, shstrndx)) ||
	    !gelf_getshdr(strs, &ssh))
		return -EINVAL;
	nh.n_namesz = sizeof(VECNOTE_OWNER);
	nh.n_descsz = (GElf_Word)desc->len;
	nh.n_type = VECNOTE_TYPE;
	if (note_put(&note, &nh, sizeof(nh)) || note_put(&note, owner, 8) ||
	    note_put(&note, desc->p, desc->len))
		goto nomem;
	/* the section's name, after the names there are */
	name_off = ssh.sh_size;
	d = elf_newdata(strs);
	if (!d)
		goto nomem;
	d->d_buf = (void *)name;
	d->d_size = sizeof(name);
	d->d_type = ELF_T_BYTE;
	d->d_align = 1;
	scn = elf_newscn(e);
	d = scn ? elf_newdata(scn) : NULL;
	if (!d || !gelf_getshdr(scn, &sh))
		goto nomem;
	d->d_buf = note.p;
	d->d_size = note.len;
	d->d_type = ELF_T_BYTE;
	d->d_align = 4;
	sh.sh_name = (GElf_Word)name_off;
	sh.sh_type = SHT_NOTE;
	sh.sh_flags = SHF_ALLOC;
	sh.sh_addralign = 4;
	if (!gelf_update_shdr(scn, &sh) || elf_update(e, ELF_C_WRITE) < 0) {
		free(note.p);
		return -EIO;
	}
	free(note.p);
	return 0;
nomem:
	free(note.p);
	return -ENOMEM;
}

static int copy_file(int from, int to)
{
	char buf[65536];
	ssize_t n;

	while ((n = read(from, buf, sizeof(buf))) > 0)
		if (write(to, buf, (size_t)n) != n)
			return -EIO;
	return n < 0 ? -EIO : 0;
}

/* Has @e its note already (an object given to the front end twice)? */
static bool has_note(Elf *e)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(e, &shstrndx))
		return true;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (gelf_getshdr(scn, &sh) && (name = elf_strptr(e, shstrndx, sh.sh_name)) &&
		    !strcmp(name, VECNOTE_SECTION))
			return true;
	}
	return false;
}

int as_vecproof(const char *obj)
{
	struct note_buf desc = { 0 };
	struct obj_relocs relocs = { 0 };
	char *tmp = NULL, *path;
	int fd = -1, out = -1, nr = 0, ret = 0;
	struct stat st;
	Elf *e = NULL;
	GElf_Ehdr eh;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -EINVAL;
	/* a symbolic link's file gets the note, and the link stays */
	path = realpath(obj, NULL);
	if (!path)
		return 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode))
		goto out;
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF || !gelf_getehdr(e, &eh) || eh.e_type != ET_REL ||
	    eh.e_machine != FHOOK_ELF_MACHINE || gelf_getclass(e) != ELFCLASS64)
		goto out;
	if (has_note(e))
		goto out;
	ret = obj_relocs_read(e, &relocs);
	if (!ret)
		ret = prove_functions(e, &relocs, &desc, &nr);
	elf_end(e);
	e = NULL;
	if (ret || !nr)
		goto out;
	/* the new object beside the old one, renamed over it once complete */
	if (asprintf(&tmp, "%s.fhook-XXXXXX", path) < 0) {
		tmp = NULL;
		ret = -ENOMEM;
		goto out;
	}
	out = mkstemp(tmp);
	if (out < 0 || lseek(fd, 0, SEEK_SET) || copy_file(fd, out) ||
	    fchmod(out, st.st_mode & 07777)) {
		ret = -EIO;
		goto out;
	}
	e = elf_begin(out, ELF_C_RDWR, NULL);
	if (!e || add_note(e, &desc)) {
		ret = -EIO;
		goto out;
	}
	elf_end(e);
	e = NULL;
	if (close(out) || rename(tmp, path)) {
		out = -1;
		ret = -EIO;
		goto out;
	}
	out = -1;
	free(tmp);
	tmp = NULL;
out:
	if (e)
		elf_end(e);
	if (out >= 0)
		close(out);
	if (tmp) {
		unlink(tmp);
		free(tmp);
	}
	if (fd >= 0)
		close(fd);
	obj_relocs_free(&relocs);
	free(desc.p);
	free(path);
	return ret;
}
