// SPDX-License-Identifier: MIT
/*
 * profctl_zones.c - `profctl zones BINARY`: the zones compiled into an ELF
 * file, from its SystemTap SDT notes (.note.stapsdt, type 3, owner
 * "stapsdt"), read with libelf without running anything.  A zone is an
 * enter probe of provider "prof"; its exit probe is NAME__exit.  Addresses
 * are printed raw, as `readelf -n` prints them.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "funcname.h"
#include "profctl.h"

#define SDT_NOTE_TYPE 3
#define SDT_NOTE_NAME "stapsdt"
#define EXIT_SUFFIX "__exit"

struct sdt_probe {
	__u64 pc, base, sema;
	char provider[64], name[128], args[256];
};

/* one note's description; 0 or -EINVAL if malformed */
static int parse_note(const char *desc, size_t len, int is64, struct sdt_probe *p)
{
	size_t asz = is64 ? 8 : 4, off = 3 * asz;
	const char *strs[3];
	int k;

	if (len < off)
		return -EINVAL;
	if (is64) {
		memcpy(&p->pc, desc, 8);
		memcpy(&p->base, desc + 8, 8);
		memcpy(&p->sema, desc + 16, 8);
	} else {
		__u32 v[3];

		memcpy(v, desc, 12);
		p->pc = v[0];
		p->base = v[1];
		p->sema = v[2];
	}
	for (k = 0; k < 3; k++) {
		const char *end = memchr(desc + off, 0, len - off);

		if (!end)
			return -EINVAL;
		strs[k] = desc + off;
		off = (size_t)(end - desc) + 1;
		if (k < 2 && off >= len)
			return -EINVAL;
	}
	snprintf(p->provider, sizeof(p->provider), "%s", strs[0]);
	snprintf(p->name, sizeof(p->name), "%s", strs[1]);
	snprintf(p->args, sizeof(p->args), "%s", strs[2]);
	return 0;
}

static bool is_exit(const char *name)
{
	size_t n = strlen(name), k = strlen(EXIT_SUFFIX);

	return n > k && !strcmp(name + n - k, EXIT_SUFFIX);
}

/*
 * The function whose code holds pc, from the symbol table (.symtab, else
 * .dynsym), into buf; false if none does.  Where a PROF_FUNC site was
 * inlined, that is its caller: only the last resort for its name.
 */
static bool func_at(Elf *elf, __u64 pc, char *buf, size_t len)
{
	Elf_Scn *scn = NULL;
	int pass;

	for (pass = 0; pass < 2; pass++) {
		GElf_Word want = pass ? SHT_DYNSYM : SHT_SYMTAB;

		scn = NULL;
		while ((scn = elf_nextscn(elf, scn))) {
			GElf_Shdr sh;
			Elf_Data *data;
			size_t k, n;

			if (!gelf_getshdr(scn, &sh) || sh.sh_type != want || !sh.sh_entsize)
				continue;
			data = elf_getdata(scn, NULL);
			if (!data)
				continue;
			n = sh.sh_size / sh.sh_entsize;
			for (k = 0; k < n; k++) {
				GElf_Sym sym;
				const char *name;

				if (!gelf_getsym(data, (int)k, &sym) ||
				    GELF_ST_TYPE(sym.st_info) != STT_FUNC || !sym.st_size ||
				    pc < sym.st_value || pc - sym.st_value >= sym.st_size)
					continue;
				name = elf_strptr(elf, sh.sh_link, sym.st_name);
				if (!name || !*name)
					continue;
				snprintf(buf, len, "%s", name);
				return true;
			}
		}
	}
	return false;
}

/* the bytes of the allocated section holding [addr, addr + *len): cut to it */
static const unsigned char *bytes_at(Elf *elf, __u64 addr, size_t *len, bool exec)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_ALLOC) || !!(sh.sh_flags & SHF_EXECINSTR) != exec ||
		    addr < sh.sh_addr || addr - sh.sh_addr >= sh.sh_size)
			continue;
		data = elf_getdata(scn, NULL);
		if (!data || !data->d_buf || data->d_size != sh.sh_size)
			return NULL;
		if (*len > sh.sh_size - (addr - sh.sh_addr))
			*len = sh.sh_size - (addr - sh.sh_addr);
		return (const unsigned char *)data->d_buf + (addr - sh.sh_addr);
	}
	return NULL;
}

/* a NUL-terminated printable string at addr in a data section, or NULL */
static const char *string_at(Elf *elf, __u64 addr)
{
	size_t len = 512, i;
	const unsigned char *s = bytes_at(elf, addr, &len, false);

	for (i = 0; s && i < len; i++) {
		if (!s[i])
			return i ? (const char *)s : NULL;
		if (s[i] < 0x20 || s[i] > 0x7e)
			return NULL;
	}
	return NULL;
}

/* x86-64's number of a register an SDT argument names ("8@%rax"); -1 */
static int x86_reg(const char *arg)
{
	static const char *const regs[] = {
		"rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi",
		"r8",  "r9",  "r10", "r11", "r12", "r13", "r14", "r15"
	};
	const char *r = strstr(arg, "@%");
	size_t n, k;

	if (!r)
		return -1;
	r += 2;
	n = strcspn(r, " ");
	for (k = 0; k < sizeof(regs) / sizeof(regs[0]); k++)
		if (strlen(regs[k]) == n && !strncmp(r, regs[k], n))
			return (int)k;
	return -1;
}

/*
 * What an x86-64 enter probe's arg0 holds: the zone's name, a constant the
 * code loads into the argument's register just before the probe's nop
 * (a lea of it, rip-relative; a mov of it, not PIE).  The nearest load of
 * that register within a few instructions, whose target is a string; NULL
 * if none is found (another architecture, code that moved it).
 */
static const char *arg0_string(Elf *elf, const GElf_Ehdr *eh, const struct sdt_probe *p)
{
	size_t len = 64, back;
	const unsigned char *code;
	int reg = x86_reg(p->args);

	if (eh->e_machine != EM_X86_64 || reg < 0 || p->pc < len)
		return NULL;
	code = bytes_at(elf, p->pc - len, &len, true);
	if (!code || len < 64)
		return NULL;
	for (back = 5; back <= 64; back++) {
		const unsigned char *b = code + 64 - back;
		__u64 target = 0;
		bool found = false;
		__s32 disp;

		/* lea disp32(%rip), reg: REX.W (+R), 8d, modrm 00 reg 101 */
		if (back >= 7 && b[0] == (reg >= 8 ? 0x4c : 0x48) && b[1] == 0x8d &&
		    (b[2] & 0xc7) == 0x05 && ((b[2] >> 3) & 7) == (reg & 7)) {
			memcpy(&disp, b + 3, 4);
			target = p->pc - back + 7 + (__u64)(__s64)disp;
			found = true;
		} else if (reg < 8 && b[0] == 0xb8 + reg) {
			/* mov $imm32, %e<reg> */
			__u32 imm;

			memcpy(&imm, b + 1, 4);
			target = imm;
			found = true;
		} else if (reg >= 8 && back >= 6 && b[0] == 0x41 && b[1] == 0xb8 + (reg & 7)) {
			__u32 imm;

			memcpy(&imm, b + 2, 4);
			target = imm;
			found = true;
		}
		if (found) {
			const char *s = string_at(elf, target);

			if (s)
				return s;
		}
	}
	return NULL;
}

/*
 * A PROF_FUNC site's name, as reports give it: its own function's (the
 * string its arg0 loads, a C++ signature shortened as the runtime does),
 * also where it was inlined into another; else the function holding it.
 */
static bool func_site_name(Elf *elf, const GElf_Ehdr *eh, const struct sdt_probe *p, char *buf,
			   size_t len)
{
	const char *s = arg0_string(elf, eh, p);

	if (s) {
		prof_func_name(s, buf, len);
		if (*buf)
			return true;
	}
	return func_at(elf, p->pc, buf, len);
}

int pc_zones(const char *path, FILE *f)
{
	struct sdt_probe *probes = NULL, *np;
	size_t nprobes = 0, i, j, zones = 0;
	Elf *elf = NULL;
	Elf_Scn *scn = NULL;
	GElf_Ehdr eh;
	int fd = -1, err = 0, is64;

	if (elf_version(EV_CURRENT) == EV_NONE) {
		pc_warnx("libelf: %s", elf_errmsg(-1));
		return -EINVAL;
	}
	/* a FIFO at the name is not waited on (libelf then finds no ELF) */
	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		pc_warnx("%s: failed to open: %s", path, strerror(-err));
		return err;
	}
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh)) {
		pc_warnx("%s: not an ELF file", path);
		err = -ENOEXEC;
		goto cleanup;
	}
	is64 = gelf_getclass(elf) == ELFCLASS64;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		GElf_Nhdr nh;
		Elf_Data *data;
		size_t off = 0, name_off, desc_off;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		data = elf_getdata(scn, NULL);
		if (!data)
			continue;
		while ((off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
			struct sdt_probe p;

			if (nh.n_type != SDT_NOTE_TYPE || nh.n_namesz != sizeof(SDT_NOTE_NAME) ||
			    memcmp((char *)data->d_buf + name_off, SDT_NOTE_NAME, nh.n_namesz))
				continue;
			if (parse_note((char *)data->d_buf + desc_off, nh.n_descsz, is64, &p)) {
				pc_warnx("%s: malformed stapsdt note at offset %zu, skipped", path,
					 desc_off);
				continue;
			}
			if (strcmp(p.provider, "prof"))
				continue;
			np = realloc(probes, (nprobes + 1) * sizeof(*np));
			if (!np) {
				err = -ENOMEM;
				goto cleanup;
			}
			probes = np;
			probes[nprobes++] = p;
		}
	}

	fprintf(f, "%-32s %-18s %-18s %-4s %s\n", "zone", "location", "semaphore", "exit",
		"arguments");
	for (i = 0; i < nprobes; i++) {
		bool has_exit = false;

		if (is_exit(probes[i].name))
			continue;
		for (j = 0; j < nprobes && !has_exit; j++)
			has_exit = is_exit(probes[j].name) &&
				   strlen(probes[j].name) ==
					   strlen(probes[i].name) + strlen(EXIT_SUFFIX) &&
				   !strncmp(probes[j].name, probes[i].name, strlen(probes[i].name));
		{
			char fn[160], shown[200];

			/* PROF_FUNC: named after its function, as reports name it */
			if (!strcmp(probes[i].name, "func") &&
			    func_site_name(elf, &eh, &probes[i], fn, sizeof(fn)))
				snprintf(shown, sizeof(shown), "%s (func)", fn);
			else
				snprintf(shown, sizeof(shown), "%s", probes[i].name);
			fprintf(f, "%-32s 0x%016llx 0x%016llx %-4s %s\n", shown,
				(unsigned long long)probes[i].pc,
				(unsigned long long)probes[i].sema, has_exit ? "yes" : "no",
				probes[i].args);
		}
		zones++;
	}
	fprintf(f, "%zu zone site%s, %zu probes of provider prof in %s\n", zones,
		zones == 1 ? "" : "s", nprobes, path);
cleanup:
	free(probes);
	elf_end(elf);
	close(fd);
	return err;
}

/* --- the verb ---------------------------------------------------------------- */

#define EXIT_USAGE 2

static const char usage_zones[] =
	"usage: profctl zones BINARY\n"
	"\n"
	"The zones (USDT probes of provider prof) compiled into an ELF executable or\n"
	"shared library, read from its notes without running it, as readelf -n shows them.\n";

static const struct option zones_options[] = {
	PC_OPT_HELP,
	PC_OPT_END_OPERANDS,
};

int pc_cmd_zones(int argc, char **argv)
{
	struct pc_opts o;
	int err;

	err = pc_parse_opts(argc, argv, usage_zones, zones_options, &o);
	if (err)
		return err < 0 ? 0 : err;
	if (argc - o.args != 1) {
		pc_warnx("zones: one BINARY to read; see --help");
		return EXIT_USAGE;
	}
	return pc_zones(argv[o.args], stdout) ? 1 : 0;
}
