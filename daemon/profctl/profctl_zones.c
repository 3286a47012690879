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
 * .dynsym), into buf; false if none does.  A PROF_FUNC site is probe
 * "func": its function is what names the zone.
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
			if (!strcmp(probes[i].name, "func") && func_at(elf, probes[i].pc, fn, sizeof(fn)))
				snprintf(shown, sizeof(shown), "%s (func)", fn);
			else
				snprintf(shown, sizeof(shown), "%s", probes[i].name);
			fprintf(f, "%-32s 0x%016llx 0x%016llx %-4s %s\n", shown,
				(unsigned long long)probes[i].pc, (unsigned long long)probes[i].sema,
				has_exit ? "yes" : "no", probes[i].args);
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
