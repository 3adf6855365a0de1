// SPDX-License-Identifier: MIT
/*
 * The kernel image in a capture: the PERF_RECORD_MMAP that perf
 * synthesizes for it, and the snapshot of kallsyms' text symbols that
 * sonde keeps so that the host can symbolize without the target.
 *
 * perf 6.1 (machine__create_kernel_maps, __perf_event__synthesize_kernel_mmap)
 * takes the first of "_text", "_stext" that kallsyms lists as a function
 * (types t, T, w, W) as the reference symbol: the map starts there, pgoff
 * is that address (perf report uses it to undo KASLR against vmlinux), the
 * name is "[kernel.kallsyms]" followed by the symbol's name, and the map
 * ends at _etext; only without _etext does it reach to the next map (the
 * lowest module above the kernel) or to ~0ULL.  pid -1 (the host kernel),
 * tid 0, misc PERF_RECORD_MISC_KERNEL.  When kptr_restrict hides the
 * addresses (all zero), perf synthesizes no kernel map; neither does this.
 *
 * The snapshot reads kallsyms (about 5 MB on a distribution kernel, made
 * slowly by the kernel a page at a time) in big reads straight into the
 * blob, and compacts the kept lines towards the front as it goes, so the
 * whole file never sits in memory twice.
 */
#include "synth_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sonde/fileio.h>

static bool is_text_type(char c)
{
	return c == 't' || c == 'T' || c == 'w' || c == 'W';
}

/* Splits "addr type name[\t[module]]".  Return: false if not such a line. */
static bool split_ksym(char *line, uint64_t *addr, char *type, char **name, bool *in_module)
{
	char *e, *n;

	errno = 0;
	*addr = strtoull(line, &e, 16);
	if (errno || e == line || e[0] != ' ' || !e[1] || e[2] != ' ')
		return false;
	*type = e[1];
	n = e + 3;
	*in_module = false;
	e = strchr(n, '\t');
	if (e) {
		*e = '\0';
		*in_module = true;
	}
	*name = n;
	return true;
}

struct kernel_syms {
	bool have_text, have_stext, have_etext;
	uint64_t text, stext, etext;
};

static int scan_kallsyms(const char *procfs, struct kernel_syms *k)
{
	size_t cap = 64 * 1024, len;
	char path[512], *buf, *line;
	struct sonde_lines l;
	int ret;

	memset(k, 0, sizeof(*k));
	ret = sonde_path(path, sizeof(path), "%s/kallsyms", procfs);
	if (ret < 0)
		return ret;
	buf = malloc(cap);
	if (!buf)
		return -ENOMEM;
	ret = sonde_lines_open(&l, path, buf, cap);
	if (ret < 0) {
		free(buf);
		return ret;
	}
	while ((ret = sonde_lines_next(&l, &line, &len, NULL)) > 0) {
		uint64_t addr;
		char type, *name;
		bool mod;

		if (!split_ksym(line, &addr, &type, &name, &mod) || mod || !is_text_type(type))
			continue;
		/*
		 * kallsyms is in address order and _text/_stext open it, while
		 * _etext sits near the end of 5 MB the kernel formats slowly
		 * (~30 ms here).  Stop past the start: without _etext the map
		 * ends at the next module or ~0ULL, perf's own fallback, which
		 * keeps `record -- true` fast.
		 */
		if ((k->have_text || k->have_stext) && addr > (k->have_text ? k->text : k->stext))
			break;
		if (!k->have_text && !strcmp(name, "_text")) {
			k->have_text = true;
			k->text = addr;
		} else if (!k->have_stext && !strcmp(name, "_stext")) {
			k->have_stext = true;
			k->stext = addr;
		} else if (!k->have_etext && !strcmp(name, "_etext")) {
			k->have_etext = true;
			k->etext = addr;
		}
		if (k->have_text && k->have_etext)
			break;
	}
	sonde_lines_close(&l);
	free(buf);
	return ret < 0 ? ret : 0;
}

int sonde_synth_kernel_mmap(const struct sonde_synth *s)
{
	struct kernel_syms k;
	const char *ref;
	uint64_t start, end = ~0ULL;
	char name[64];
	int ret = sonde_synth_check(s);

	if (ret < 0)
		return ret;
	ret = scan_kallsyms(s->procfs, &k);
	if (ret < 0)
		return ret;
	if (k.have_text) {
		ref = "_text";
		start = k.text;
	} else if (k.have_stext) {
		ref = "_stext";
		start = k.stext;
	} else {
		return -ENOENT;
	}
	if (!start)
		return -EACCES; /* kptr_restrict: perf makes no kernel map either */
	if (k.have_etext && k.etext > start) {
		end = k.etext;
	} else {
		struct sonde_kmod *mods;
		size_t n, i;

		/* the next map after the kernel's: the lowest module above it */
		if (sonde_kmods_read(s->procfs, s->modules_dir, &mods, &n) == 0) {
			for (i = 0; i < n; i++)
				if (mods[i].base > start && mods[i].base < end)
					end = mods[i].base;
			sonde_kmods_free(mods, n);
		}
	}
	snprintf(name, sizeof(name), "[kernel.kallsyms]%s", ref);
	return sonde_synth_emit_kmmap(s, start, end - start, start, name);
}

/* Keeps the text-symbol lines of buf[*scan, *end) at buf[*w...]; a partial
 * last line moves down after them.  At EOF, a last line without newline counts. */
static void filter_lines(char *buf, size_t *w, size_t *scan, size_t *end, bool eof)
{
	size_t pos = *scan;

	while (pos < *end) {
		char *nl = memchr(buf + pos, '\n', *end - pos);
		size_t n;
		char *sp;

		if (!nl && !eof)
			break;
		n = nl ? (size_t)(nl - (buf + pos)) + 1 : *end - pos;
		/* "addr T name": the type is the character after the first space */
		sp = memchr(buf + pos, ' ', n);
		if (sp && sp + 2 < buf + pos + n && sp[2] == ' ' && is_text_type(sp[1])) {
			if (*w != pos)
				memmove(buf + *w, buf + pos, n);
			*w += n;
			if (!nl)
				buf[(*w)++] = '\n'; /* room: the buffer keeps one spare byte */
		}
		pos += n;
	}
	/* the unfinished line goes right after what was kept */
	if (pos < *end && *w != pos)
		memmove(buf + *w, buf + pos, *end - pos);
	*end = *w + (*end - pos);
	*scan = *w;
}

int sonde_kallsyms_snapshot(const char *procfs, char **blob, size_t *len)
{
	const size_t chunk = 256 * 1024;
	size_t cap = 1024 * 1024, w = 0, scan = 0, end = 0;
	char path[512], *buf;
	int fd, ret;

	ret = sonde_path(path, sizeof(path), "%s/kallsyms", procfs);
	if (ret < 0)
		return ret;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	buf = malloc(cap);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	for (;;) {
		ssize_t r;

		if (cap - end < chunk + 2) {
			char *n = realloc(buf, cap * 2);

			if (!n) {
				ret = -ENOMEM;
				break;
			}
			buf = n;
			cap *= 2;
		}
		r = read(fd, buf + end, cap - end - 2);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			ret = -errno;
			break;
		}
		end += (size_t)r;
		filter_lines(buf, &w, &scan, &end, r == 0);
		if (r == 0)
			break;
	}
	close(fd);
	if (ret < 0) {
		free(buf);
		return ret;
	}
	buf[w] = '\0';
	/* give back what the filter freed (kept: about 60%) */
	if (w + 1 < cap) {
		char *n = realloc(buf, w + 1);

		if (n)
			buf = n;
	}
	*blob = buf;
	if (len)
		*len = w;
	return 0;
}
