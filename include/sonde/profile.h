/* SPDX-License-Identifier: MIT */
/*
 * Profile: samples aggregated into entries keyed by the report's sort
 * keys (comm, pid, dso, sym, srcline), with per-event sample counts and
 * periods side by side, optionally inclusive ("children") totals, and a
 * call-path trie under every entry.  Views (text, JSON, HTML) read the
 * finished profile; none of them looks at records.
 *
 * Frames are resolved by the caller (machine + symbols) and handed in
 * leaf first; the profile keeps only ids and pointers into the symbol
 * world, which must outlive it.
 */
#ifndef SONDE_PROFILE_H
#define SONDE_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sonde/symbols.h>

enum sonde_sort_key {
	SONDE_SORT_COMM,
	SONDE_SORT_PID,
	SONDE_SORT_DSO,
	SONDE_SORT_SYM,
	SONDE_SORT_SRCLINE,
};
#define SONDE_SORT_MAX 5

/* Parses "comm,dso,sym" into @keys. Return: the number of keys, or -EINVAL. */
int sonde_sort_keys_parse(const char *s, enum sonde_sort_key *keys, size_t max);
/**
 * sonde_sort_key_name() - the --sort name of a key ("comm", "dso", "sym" ...)
 * @k: the key
 * Return: static text, "?" for a value out of range.
 */
const char *sonde_sort_key_name(enum sonde_sort_key k);

/* One resolved frame of a sample. */
struct sonde_frame {
	struct sonde_dso *dso;		/* NULL: no map held the address */
	const struct sonde_symbol *sym; /* NULL: unresolved */
	uint64_t addr;			/* object address (or the ip without a dso) */
	struct sonde_srcline src;	/* filled only when srcline is a key */
	/* An inlined function running at addr (interned), else NULL: such
	 * frames show in call graphs, never as rows. */
	const char *inlined;
	/* The function's own frame under its DWARF name (interned), which
	 * perf 6.1 shows, as "(inlined)", for unwound frames whose DWARF name
	 * differs from the symbol's; else NULL.  Rows keep the symbol. */
	const char *dwarf_name;
	bool kernel;
};

/* The name call graphs and scripts show for @f (a function, an inlined
 * body or a DWARF-named frame), or NULL for the symbol's own. */
static inline const char *sonde_frame_inline_name(const struct sonde_frame *f)
{
	return f->inlined ? f->inlined : f->dwarf_name;
}

struct sonde_profile_opts {
	enum sonde_sort_key keys[SONDE_SORT_MAX];
	size_t nkeys;
	size_t nevents;
	bool children;	   /* also accumulate inclusive totals per frame */
	bool callchains;   /* build call-path tries under the entries */
	bool caller_order; /* tries run from the outermost caller down (-G caller) */
	/* The comms' strings, for perf's order of rows tied on period (the
	 * profile tool sets it); NULL: comms tie. */
	const struct sonde_machine *machine;
};

/* An entry's key; fields not among the sort keys are zero. */
struct sonde_entry_key {
	uint32_t comm; /* interned string id of the machine */
	uint32_t pid;  /* --sort pid: the thread id (perf's key for "pid") */
	struct sonde_dso *dso;
	const struct sonde_symbol *sym;
	uint64_t addr; /* when sym is NULL: the unresolved address */
	struct sonde_srcline src;
	bool kernel;
};

/* Per-event totals of an entry or a trie node. */
struct sonde_counts {
	uint64_t samples;
	uint64_t period;
};

struct sonde_profile;

/* Borrowed: the options the profile was made with. */
const struct sonde_profile_opts *sonde_profile_opts(const struct sonde_profile *p);

/**
 * sonde_profile_new() - an empty profile
 * @out: receives the profile
 * @opts: copied; needs nevents and 1..SONDE_SORT_MAX keys
 * Return: 0 with *out new (free with sonde_profile_free()), -EINVAL or -ENOMEM.
 */
int sonde_profile_new(struct sonde_profile **out, const struct sonde_profile_opts *opts);
/**
 * sonde_profile_free() - free the profile, its entries and tries
 * @p: the profile, or NULL
 */
void sonde_profile_free(struct sonde_profile *p);

/**
 * sonde_profile_add() - account one sample
 * @event: index of the sample's event (< nevents)
 * @frames: @nframes resolved frames, leaf first (at least 1 not inlined)
 * Return: 0 or -ENOMEM.
 */
int sonde_profile_add(struct sonde_profile *p, size_t event, uint64_t period, uint32_t comm,
		      uint32_t pid, const struct sonde_frame *frames, size_t nframes);

struct sonde_tool;

/*
 * The profile as a tool of a session pass: at the pass's start it makes
 * @profile with @opts (nevents: the session's events), then adds every
 * sample the filters keep.  The caller frees @profile.
 */
struct sonde_profile_tool {
	struct sonde_profile_opts opts;
	struct sonde_profile *profile;
};
extern const struct sonde_tool sonde_profile_tool; /* ctx: struct sonde_profile_tool */

/* Totals of event @ev over every sample added. */
struct sonde_counts sonde_profile_total(const struct sonde_profile *p, size_t ev);

/* Entries, valid until the profile is freed or added to. */
size_t sonde_profile_nr_entries(const struct sonde_profile *p);
/**
 * sonde_profile_entry_key() - the key of entry @i (its comm, pid, object, symbol, line)
 * @p: the profile
 * @i: below sonde_profile_nr_entries()
 * Return: borrowed, valid until the profile is freed or added to.
 */
const struct sonde_entry_key *sonde_profile_entry_key(const struct sonde_profile *p, size_t i);
/* Self counts of entry @i for event @ev. */
struct sonde_counts sonde_profile_entry_self(const struct sonde_profile *p, size_t i, size_t ev);
/* Inclusive counts (self when children is off). */
struct sonde_counts sonde_profile_entry_total(const struct sonde_profile *p, size_t i, size_t ev);

/**
 * sonde_profile_sort() - order entries by event @ev's period, descending
 * (inclusive when @by_children), ties by key; returns the order in @idx
 * (nr_entries items, caller's array).
 */
void sonde_profile_sort(const struct sonde_profile *p, size_t ev, bool by_children, size_t *idx);
/*
 * The same, by the first of @evs, ties by the next and so on: perf's order
 * for events side by side (a group's leader, then its members).
 */
void sonde_profile_sort_events(const struct sonde_profile *p, const size_t *evs, size_t nev,
			       bool by_children, size_t *idx);

/*
 * Call-path trie under entry @i: nodes are frames (symbol, or object +
 * address when unresolved), children in the configured order.  Node 0 of
 * an entry is its root (the entry's own frame); walk with first_child /
 * next_sibling; SIZE_MAX ends a list.
 */
size_t sonde_profile_trie_root(const struct sonde_profile *p, size_t entry);
/**
 * sonde_profile_node_first_child() - the first child of a call-path trie node
 * @p: the profile
 * @node: a node from sonde_profile_trie_root() or this walk
 * Return: the child's index, or SIZE_MAX when @node has none.
 */
size_t sonde_profile_node_first_child(const struct sonde_profile *p, size_t node);
/**
 * sonde_profile_node_next_sibling() - the next child of the same parent
 * @p: the profile
 * @node: a node
 * Return: the sibling's index, or SIZE_MAX at the end of the list.
 */
size_t sonde_profile_node_next_sibling(const struct sonde_profile *p, size_t node);
/**
 * sonde_profile_node_frame() - the frame a trie node stands for
 * @p: the profile
 * @node: a node
 * Return: borrowed, valid until the profile is freed or added to.
 */
const struct sonde_frame *sonde_profile_node_frame(const struct sonde_profile *p, size_t node);
/**
 * sonde_profile_node_counts() - the counts of the samples whose call path goes through a node
 * @p: the profile
 * @node: a node
 * @ev: the event (< nevents)
 * Return: samples and period of event @ev.
 */
struct sonde_counts sonde_profile_node_counts(const struct sonde_profile *p, size_t node,
					      size_t ev);

#endif
