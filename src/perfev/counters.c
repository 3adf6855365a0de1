// SPDX-License-Identifier: MIT
/*
 * Counter setup for stat.  Slots are the tasks or CPUs to count on; every
 * event gets one fd per slot, members of a { } group attached to their
 * leader's fd in the same slot so the kernel schedules them together.
 * A workload's counters carry enable_on_exec and inherit, so they start at
 * exec and follow the children it forks; attached tasks are enabled by
 * ioctl once every fd is open, so no event starts before another.
 */
#include <sonde/counters.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <sonde/evprobe.h>

struct slot {
	pid_t pid;
	int cpu;
};

struct slots {
	struct slot *v;
	size_t n, cap;
};

static int slots_add(struct slots *s, pid_t pid, int cpu)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 16;
		struct slot *v = realloc(s->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n++] = (struct slot){pid, cpu};
	return 0;
}

static int build_slots(struct slots *s, const struct sonde_target *t, struct sonde_errmsg *err)
{
	pid_t *tasks = NULL;
	size_t n = 0;
	int r = 0;

	if (t->cpus) {
		for (size_t i = 0; !r && i < t->cpus->n; i++)
			r = slots_add(s, -1, t->cpus->cpus[i]);
		return r;
	}
	r = sonde_target_tasks(t, &tasks, &n, err);
	for (size_t i = 0; !r && i < n; i++)
		r = slots_add(s, tasks[i], -1);
	free(tasks);
	return r;
}

/* Errors that mean "this event does not exist here", not "you can't count". */
static bool is_unsupported(int e)
{
	return e == ENOENT || e == EOPNOTSUPP || e == ENODEV || e == EINVAL || e == ENOSYS;
}

int sonde_counters_open(struct sonde_counters *cs, const struct sonde_evlist *l,
			const struct sonde_target *t)
{
	struct slots s = {0};
	int r;

	memset(cs, 0, sizeof(*cs));
	r = build_slots(&s, t, &cs->err);
	if (r < 0) {
		free(s.v);
		if (!cs->err.text[0])
			sonde_errmsg_set(&cs->err, r, "can't find what to count: %s",
					 sonde_strerror(r));
		return r;
	}
	cs->c = calloc(l->n ? l->n : 1, sizeof(*cs->c));
	if (!cs->c) {
		free(s.v);
		return -ENOMEM;
	}
	cs->n = l->n;
	cs->nslots = s.n;
	for (size_t i = 0; i < l->n; i++) {
		cs->c[i].ev = &l->events[i];
		cs->c[i].fds = malloc((s.n ? s.n : 1) * sizeof(int));
		if (!cs->c[i].fds) {
			r = -ENOMEM;
			goto fail;
		}
		cs->c[i].nfds = s.n;
		for (size_t j = 0; j < s.n; j++)
			cs->c[i].fds[j] = -1;
	}
	for (size_t j = 0; j < s.n; j++) {
		for (size_t i = 0; i < l->n; i++) {
			struct sonde_counter *c = &cs->c[i];
			const struct sonde_event *ev = c->ev;
			struct perf_event_attr a = ev->attr;
			bool leader = ev->leader == (int)i;
			int group_fd = -1, fd;

			if (c->err)
				continue;
			/* Every counter's fds was allocated above, its leader's too. */
			if (!leader) /* NOLINTNEXTLINE(clang-analyzer-core.NullDereference) */
				group_fd = cs->c[ev->leader].fds[j];
			a.size = sizeof(a);
			a.read_format =
			    PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
			a.sample_period = 0;
			a.freq = 0;
			a.disabled = leader || group_fd < 0;
			a.inherit = s.v[j].pid > 0;
			/* enable_on_exec is per task; per-CPU counters are enabled by ioctl. */
			a.enable_on_exec = t->workload > 0 && !t->cpus && a.disabled;
			if (c->user_only)
				a.exclude_kernel = a.exclude_hv = 1;
			fd = sonde_perf_event_open(&a, s.v[j].pid, s.v[j].cpu, group_fd,
						   PERF_FLAG_FD_CLOEXEC);
			/* perf's fallback: user space only when the kernel is off limits. */
			if (fd < 0 && sonde_event_fallback_user(&a, -errno)) {
				c->user_only = true;
				fd = sonde_perf_event_open(&a, s.v[j].pid, s.v[j].cpu, group_fd,
							   PERF_FLAG_FD_CLOEXEC);
			}
			if (fd >= 0) {
				c->fds[j] = fd;
				continue;
			}
			r = -errno;
			/* A thread of an attached process may exit while we open. */
			if (r == -ESRCH && t->workload <= 0 && (t->npids || t->ntids))
				continue;
			if (is_unsupported(-r)) {
				c->err = r;
				continue;
			}
			cs->failed = ev;
			cs->failed_err = r;
			sonde_errmsg_set(&cs->err, r, "can't open event '%s' on %s %d: %s",
					 ev->name, s.v[j].cpu >= 0 ? "CPU" : "task",
					 s.v[j].cpu >= 0 ? s.v[j].cpu : (int)s.v[j].pid,
					 sonde_strerror(r));
			goto fail;
		}
	}
	free(s.v);
	return 0;
fail:
	free(s.v);
	sonde_counters_close(cs);
	return r;
}

static int ioctl_all(struct sonde_counters *cs, unsigned long req)
{
	for (size_t i = 0; i < cs->n; i++) {
		const struct sonde_counter *c = &cs->c[i];

		if (c->ev->leader != (int)i)
			continue;
		for (size_t j = 0; j < c->nfds; j++)
			if (c->fds[j] >= 0 && ioctl(c->fds[j], req, 0) < 0)
				return sonde_errmsg_set(&cs->err, -errno, "ioctl on '%s': %s",
							c->ev->name, strerror(errno));
	}
	return 0;
}

int sonde_counters_enable(struct sonde_counters *cs)
{
	return ioctl_all(cs, PERF_EVENT_IOC_ENABLE);
}

int sonde_counters_disable(struct sonde_counters *cs)
{
	return ioctl_all(cs, PERF_EVENT_IOC_DISABLE);
}

int sonde_counters_read(struct sonde_counters *cs)
{
	for (size_t i = 0; i < cs->n; i++) {
		struct sonde_counter *c = &cs->c[i];

		c->value = c->enabled = c->running = 0;
		for (size_t j = 0; j < c->nfds; j++) {
			uint64_t v[3];

			if (c->fds[j] < 0)
				continue;
			if (read(c->fds[j], v, sizeof(v)) != (ssize_t)sizeof(v))
				return sonde_errmsg_set(&cs->err, -errno, "can't read '%s': %s",
							c->ev->name, strerror(errno));
			c->value += v[0];
			c->enabled += v[1];
			c->running += v[2];
		}
	}
	return 0;
}

void sonde_counters_close(struct sonde_counters *cs)
{
	for (size_t i = 0; i < cs->n; i++) {
		for (size_t j = 0; j < cs->c[i].nfds; j++)
			if (cs->c[i].fds[j] >= 0)
				close(cs->c[i].fds[j]);
		free(cs->c[i].fds);
	}
	free(cs->c);
	cs->c = NULL;
	cs->n = 0;
}

bool sonde_counter_scaled(const struct sonde_counter *c, double *value)
{
	if (!c->running) {
		*value = 0;
		return false;
	}
	*value = (double)c->value;
	if (c->running < c->enabled)
		*value *= (double)c->enabled / (double)c->running;
	return true;
}
