/* SPDX-License-Identifier: MIT */
/*
 * The part of libtracecmd's interface that sonde calls.
 *
 * Debian's libtracecmd-dev (trace-cmd 3.1.x, libtracecmd 1.3) installs only
 * trace-cmd.h, the reading half, and that header includes libtracefs's
 * header, which libtracecmd-dev does not pull in.  The writing half
 * (tracecmd_output_*, tracecmd_append_cpu_data) is exported by
 * libtracecmd.so.1 but declared only in trace-cmd's private header.  So
 * the prototypes sonde uses are declared here, copied by signature from
 * trace-cmd's lib/trace-cmd/include/private/trace-cmd-private.h (stable
 * since libtracecmd 1.0); the handles stay opaque.  If a future
 * libtracecmd installs them publicly, this file becomes an #include.
 */
#ifndef SONDE_TRACECMD_PRIVATE_H
#define SONDE_TRACECMD_PRIVATE_H

#include <event-parse.h>
#include <sched.h>
#include <stdbool.h>

struct tracecmd_input;
struct tracecmd_output;
struct tracecmd_option;

/* Reading (public in trace-cmd.h). */
struct tracecmd_input *tracecmd_open(const char *file, int flags);
void tracecmd_close(struct tracecmd_input *handle);
struct tep_handle *tracecmd_get_tep(struct tracecmd_input *handle);
int tracecmd_iterate_events(struct tracecmd_input *handle, cpu_set_t *cpus, int cpu_size,
			    int (*callback)(struct tracecmd_input *handle, struct tep_record *, int,
					    void *),
			    void *callback_data);
int tracecmd_cpus(struct tracecmd_input *handle);
int tracecmd_iterate_events_multi(struct tracecmd_input **handles, int nr_handles,
				  int (*callback)(struct tracecmd_input *handle,
						  struct tep_record *, int, void *),
				  void *callback_data);
/* Instance buffers (trace-cmd record -B, extract -B): each one read through a handle of its own. */
int tracecmd_buffer_instances(struct tracecmd_input *handle);
const char *tracecmd_buffer_instance_name(struct tracecmd_input *handle, int indx);
struct tracecmd_input *tracecmd_buffer_instance_handle(struct tracecmd_input *handle, int indx);
void tracecmd_set_loglevel(enum tep_loglevel level);

/* Writing (trace-cmd-private.h). */
struct tracecmd_event_list {
	struct tracecmd_event_list *next;
	const char *glob;
};

enum {
	SONDE_TRACECMD_OPTION_CPUSTAT = 2,
	SONDE_TRACECMD_OPTION_UNAME = 5,
};

struct tracecmd_output *tracecmd_output_create(const char *output_file);
struct tracecmd_output *tracecmd_output_create_fd(int fd);
void tracecmd_set_quiet(struct tracecmd_output *handle, bool set_quiet);
int tracecmd_output_set_trace_dir(struct tracecmd_output *handle, const char *tracing_dir);
int tracecmd_output_set_kallsyms(struct tracecmd_output *handle, const char *kallsyms);
int tracecmd_output_write_headers(struct tracecmd_output *handle, struct tracecmd_event_list *list);
struct tracecmd_option *tracecmd_add_option(struct tracecmd_output *handle, unsigned short id,
					    int size, const void *data);
int tracecmd_write_cmdlines(struct tracecmd_output *handle);
int tracecmd_write_cpus(struct tracecmd_output *handle, int cpus);
int tracecmd_write_options(struct tracecmd_output *handle);
int tracecmd_append_cpu_data(struct tracecmd_output *handle, int cpus, char *const *cpu_data_files);
void tracecmd_output_close(struct tracecmd_output *handle);

#endif
