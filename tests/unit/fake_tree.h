/* SPDX-License-Identifier: MIT */
/*
 * Fake kernel trees for tests: a temporary folder that stands in for
 * /sys, tracefs or /proc, filled file by file.  Every test that reads a
 * kernel tree through a root it is given (struct sonde_roots and the like)
 * builds one of these, so it runs the same on any machine.
 *
 *	char *root = fake_tree_new();
 *	fake_tree_write(root, "bus/event_source/devices/cpu/type", "4\n");
 *	...
 *	fake_tree_remove(root);
 */
#ifndef SONDE_TESTS_FAKE_TREE_H
#define SONDE_TESTS_FAKE_TREE_H

/* Makes an empty folder under $TMPDIR (or /tmp).
 * Return: new: its path, remove and free with fake_tree_remove(); NULL on failure. */
char *fake_tree_new(void);

/* Makes ROOT/RELPATH and every folder on the way (mkdir -p).  Return: 0 or -errno. */
int fake_tree_mkdir(const char *root, const char *relpath);

/* Writes @text to ROOT/RELPATH, making its folders first.  Return: 0 or -errno. */
int fake_tree_write(const char *root, const char *relpath, const char *text);

/* Like fake_tree_write() with a printf-formatted text. */
int fake_tree_printf(const char *root, const char *relpath, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Removes the whole tree and frees @root (NULL is fine). */
void fake_tree_remove(char *root);

#endif
