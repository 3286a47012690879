// SPDX-License-Identifier: MIT
/*
 * profd_sym.c - a sampled address as function and file:line, through
 * elfutils' libdwfl (libelf and libdw: no DWARF parsed here).
 *
 * A process's modules (the program and its shared libraries, where ASLR put
 * them) come from /proc/PID/maps (dwfl_linux_proc_report), read again once
 * when an address falls in none of them (a library loaded since).  The
 * function is the innermost one the DWARF scopes name at the address, so
 * an inlined helper is named as itself, with its own line; without DWARF,
 * the ELF symbol.  An address no module holds, or a module without
 * symbols, is shown as module+offset (or the bare address), never a name
 * guessed from a neighbour.  Frames are cached for every process at once
 * by module and offset, a module known by its build-id (else its file's
 * device, inode and mtime): processes of one binary, and the libraries
 * they share, name each address once.  Code unmapped (dlclose) is never
 * named as what is mapped there after: each sample carries its process's
 * maps generation (profsample.bpf.c counts the mappings the kernel placed
 * for it, as ld.so's for a library), the maps are read again when it
 * moves, and a frame of a generation the maps read no longer describe is
 * its bare address.  A
 * hostile process can at worst give addresses that name nothing: libdwfl
 * reads its files, never its memory.
 */
#define _GNU_SOURCE
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "profd_stacks.h"

#define SYM_CACHE 16384 /* frames cached, every process's, a power of two */

struct sym_ent {
	__u64 mod; /* module_key's; 0: empty */
	__u64 off; /* the address less the module's start */
	char *frame;
};

/* shared by every process: keyed by what the module is, not where */
static struct sym_ent cache[SYM_CACHE];
static __u64 n_lookups, n_hits;
/* the cached frames' strings (the table itself is fixed) and their bound:
 * a frame past it is named again at each sample, never cached */
static __u64 cache_bytes, cache_max = 4ull << 20;

struct sym_proc {
	pid_t pid;
	Dwfl *dwfl;
	bool reread; /* the maps were read again for an unknown address */
	__u32 gen;   /* the maps generation dwfl was read in (SYM_GEN_NONE:
		      * it moved while they were read) */
	__u32 (*gen_now)(pid_t pid);
};

#define SYM_GEN_NONE 0xffffffffu

static char *debuginfo_path;
static const Dwfl_Callbacks proc_cb = {
	.find_elf = dwfl_linux_proc_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.debuginfo_path = &debuginfo_path,
};

static Dwfl *report(pid_t pid)
{
	Dwfl *d = dwfl_begin(&proc_cb);

	if (!d)
		return NULL;
	if (dwfl_linux_proc_report(d, pid) != 0 || dwfl_report_end(d, NULL, NULL) != 0) {
		dwfl_end(d);
		return NULL;
	}
	return d;
}

/* the maps (read again), and the generation they were read in: one that
 * moved while they were read is none (no sample's) */
static void maps_read(struct sym_proc *p)
{
	int tries;

	for (tries = 0; tries < 3; tries++) {
		__u32 g = p->gen_now(p->pid);

		if (p->dwfl)
			dwfl_end(p->dwfl);
		p->dwfl = report(p->pid);
		p->gen = g;
		if (p->gen_now(p->pid) == g)
			return;
	}
	p->gen = SYM_GEN_NONE;
}

struct sym_proc *sym_proc__new(pid_t pid, __u32 (*gen_now)(pid_t pid))
{
	struct sym_proc *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->pid = pid;
	p->gen_now = gen_now;
	maps_read(p);
	return p;
}

void sym_proc__destroy(struct sym_proc *p)
{
	if (!p)
		return;
	if (p->dwfl)
		dwfl_end(p->dwfl);
	free(p);
}

void sym_cache_free(void)
{
	size_t i;

	for (i = 0; i < SYM_CACHE; i++) {
		free(cache[i].frame);
		cache[i] = (struct sym_ent){ 0 };
	}
	cache_bytes = 0;
}

void sym_cache_bound(__u64 bytes)
{
	cache_max = bytes;
}

__u64 sym_cache_bytes(void)
{
	return cache_bytes;
}

void sym_counts(__u64 *lookups, __u64 *hits)
{
	*lookups = n_lookups;
	*hits = n_hits;
}

static __u64 fnv(__u64 h, const void *p, size_t n)
{
	const unsigned char *b = p;

	while (n--)
		h = (h ^ *b++) * 1099511628211ull;
	return h;
}

/*
 * What module m is, whoever maps it where: its build-id, else its file's
 * device, inode and mtime (seen from the process's root); 0 if neither is
 * known (its frames are then not cached).  Kept in the module's userdata.
 */
static __u64 module_key(const struct sym_proc *p, Dwfl_Module *m)
{
	const unsigned char *bits;
	GElf_Addr vaddr, bias;
	__u64 h = 1469598103934665603ull;
	void **ud;
	const char *name = dwfl_module_info(m, &ud, NULL, NULL, NULL, NULL, NULL, NULL);
	int n;

	if (*ud)
		return (__u64)(uintptr_t)*ud;
	dwfl_module_getelf(m, &bias);
	n = dwfl_module_build_id(m, &bits, &vaddr);
	if (n > 0) {
		h = fnv(h, bits, (size_t)n);
	} else {
		char path[4352];
		struct stat st;

		snprintf(path, sizeof(path), "/proc/%d/root%s", (int)p->pid, name ? name : "");
		if (!name || name[0] != '/' || stat(path, &st))
			return 0;
		h = fnv(h, &st.st_dev, sizeof(st.st_dev));
		h = fnv(h, &st.st_ino, sizeof(st.st_ino));
		h = fnv(h, &st.st_mtim, sizeof(st.st_mtim));
	}
	h |= 1;
	*ud = (void *)(uintptr_t)h;
	return h;
}

/* no separators, no control bytes in a field */
static void clean(char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20)
			*s = '?';
}

/*
 * The compile unit that holds pc.  libdw finds it through .debug_aranges,
 * which clang does not emit: in a clang program linked with gcc-built
 * objects the table covers only those, and libdw answers "out of range"
 * for the rest.  Then each unit's own ranges are asked.
 */
static Dwarf_Die *cu_of(Dwfl_Module *m, Dwarf_Addr pc, Dwarf_Die *buf, Dwarf_Addr *bias)
{
	Dwarf_Die *cu = dwfl_module_addrdie(m, pc, bias);

	if (cu && dwarf_haspc(cu, pc - *bias) == 1)
		return cu;
	cu = NULL;
	while ((cu = dwfl_module_nextcu(m, cu, bias)))
		if (dwarf_haspc(cu, pc - *bias) == 1) {
			*buf = *cu;
			return buf;
		}
	return NULL;
}

/* the innermost function the DWARF scopes at pc name (an inlined one too) */
static const char *dwarf_func(Dwarf_Die *cu, Dwarf_Addr pc)
{
	Dwarf_Die *scopes = NULL;
	const char *name = NULL;
	int n, i;

	n = dwarf_getscopes(cu, pc, &scopes);
	for (i = 0; i < n && !name; i++) {
		int tag = dwarf_tag(&scopes[i]);

		if (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine) {
			Dwarf_Attribute a;
			/* the linkage name demangles nowhere here: the plain
			 * name reads better than a mangled one */
			name = dwarf_formstring(dwarf_attr_integrate(&scopes[i], DW_AT_name, &a));
		}
	}
	free(scopes);
	return name;
}

/* the module that holds pc, NULL if none */
static Dwfl_Module *module_at(struct sym_proc *p, Dwarf_Addr pc)
{
	Dwfl_Module *m = p->dwfl ? dwfl_addrmodule(p->dwfl, pc) : NULL;

	if (!m && !p->reread) {
		/* a library loaded after the maps were read */
		p->reread = true;
		maps_read(p);
		m = p->dwfl ? dwfl_addrmodule(p->dwfl, pc) : NULL;
	}
	return m;
}

static void lookup(Dwfl_Module *m, Dwarf_Addr pc, char *buf, size_t size)
{
	const char *mod = NULL, *func = NULL, *file = NULL;
	Dwarf_Addr start = 0;
	char fn[256] = "", fl[512] = "", md[256] = "";
	int line = 0;

	if (m) {
		Dwarf_Die cubuf, *cu;
		Dwarf_Addr bias = 0;

		mod = dwfl_module_info(m, NULL, &start, NULL, NULL, NULL, NULL, NULL);
		cu = cu_of(m, pc, &cubuf, &bias);
		if (cu) {
			Dwarf_Line *l = dwarf_getsrc_die(cu, pc - bias);

			func = dwarf_func(cu, pc - bias);
			if (l) {
				file = dwarf_linesrc(l, NULL, NULL);
				dwarf_lineno(l, &line);
			}
		}
		if (!func)
			func = dwfl_module_addrname(m, pc);
	}
	if (func)
		snprintf(fn, sizeof(fn), "%s", func);
	if (file)
		snprintf(fl, sizeof(fl), "%s", file);
	if (mod) {
		const char *base = strrchr(mod, '/');

		snprintf(md, sizeof(md), "%s+0x%" PRIx64, base ? base + 1 : mod,
			 (uint64_t)(pc - start));
	} else {
		snprintf(md, sizeof(md), "0x%" PRIx64, (uint64_t)pc);
	}
	clean(fn);
	clean(fl);
	clean(md);
	snprintf(buf, size, "%s\x1f%s\x1f%d\x1f%s", fn, file ? fl : "", file ? line : 0, md);
}

const char *sym_frame(struct sym_proc *p, __u64 addr, bool ret, __u32 gen, char *buf,
		      size_t size)
{
	/* a return address is the instruction after its call: the call is
	 * the byte before, and may be the last of a function or an inlined
	 * block whose line is not the next one's */
	__u64 pc = ret && addr ? addr - 1 : addr, mod, off, h;
	size_t old, len;
	Dwfl_Module *m;
	Dwarf_Addr start = 0;
	struct sym_ent *e;

	/* the process's maps moved since they were read: read them again */
	if (gen != p->gen && p->gen_now(p->pid) != p->gen) {
		maps_read(p);
		p->reread = false;
	}
	m = gen == p->gen ? module_at(p, pc) : NULL;
	/* a frame of maps no longer read (or read since): its address alone */
	if (gen != p->gen)
		m = NULL;
	mod = m ? module_key(p, m) : 0;
	if (!mod) {
		n_lookups++;
		lookup(m, pc, buf, size);
		return buf;
	}
	dwfl_module_info(m, NULL, &start, NULL, NULL, NULL, NULL, NULL);
	off = pc - start;
	h = ((mod ^ off) * 0x9e3779b97f4a7c15ull) >> 40;
	e = &cache[h & (SYM_CACHE - 1)];
	/* no copy: a frame fits the buf it was named in (the caller's size
	 * never changes) */
	if (e->mod == mod && e->off == off && e->frame) {
		n_hits++;
		return e->frame;
	}
	n_lookups++;
	lookup(m, pc, buf, size);
	old = e->frame ? strlen(e->frame) + 1 : 0;
	len = strlen(buf) + 1;
	if (cache_bytes - old + len > cache_max)
		return buf;
	free(e->frame);
	cache_bytes -= old;
	e->frame = strdup(buf);
	e->mod = e->frame ? mod : 0;
	e->off = off;
	if (e->frame)
		cache_bytes += len;
	return buf;
}
