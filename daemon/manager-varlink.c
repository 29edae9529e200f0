/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * io.damon.perfd: the varlink methods, on top of the reply builders in
 * api.c and the protocol in varlink-server.c.  Monitor() subscribers are
 * fed from the event hub, each with its own budget for sampled records.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "varlink-idl.h"
#include "dp-config.h"
#include "api.h"
#include "log.h"
#include "manager-varlink.h"
#include "varlink-server.h"

#define MONITOR_SAMPLES_DEFAULT_PER_SECOND 100
#define MONITOR_SAMPLES_MAX_PER_SECOND 10000

struct monitor {
        struct manager *m;
        struct dp_varlink_call *call;
        bool samples;
        uint32_t per_second;
        double tokens;
        uint64_t tokens_usec;
        struct monitor *next;
};

static int reply_json(struct dp_varlink_call *call, json_t *reply) {
        int r;

        if (!reply)
                return dp_varlink_call_reply_errno(call, ENOMEM);
        r = dp_varlink_call_reply(call, reply);
        json_decref(reply);
        return r;
}

/* A query: the view is looked at, so it is kept fresh for a while. */
static struct manager *queried(void *userdata) {
        struct manager *m = userdata;

        tracker_thread_want_fresh(m->tracker);
        return m;
}

static int method_get_stats(struct dp_varlink_call *call, json_t *parameters, void *userdata) {
        (void) parameters;
        return reply_json(call, api_get_stats(queried(userdata)));
}

static int method_get_cpus(struct dp_varlink_call *call, json_t *parameters, void *userdata) {
        (void) parameters;
        return reply_json(call, api_get_cpus(queried(userdata)));
}

static int method_get_targets(struct dp_varlink_call *call, json_t *parameters, void *userdata) {
        (void) parameters;
        return reply_json(call, api_get_targets(queried(userdata)));
}

static int method_get_damon_view(struct dp_varlink_call *call, json_t *parameters, void *userdata) {
        (void) parameters;
        return reply_json(call, api_get_damon_view(queried(userdata)));
}

static int method_get_regions(struct dp_varlink_call *call, json_t *parameters, void *userdata) {
        json_t *target = json_object_get(parameters, "target"), *limit = json_object_get(parameters, "limit");
        int64_t t = json_is_integer(target) ? json_integer_value(target) : -1;
        size_t l = API_REGIONS_DEFAULT_LIMIT;
        json_t *reply = NULL;
        int r;

        if (json_is_integer(target) && t < 0)
                return dp_varlink_call_reply_invalid_parameter(call, "target");
        if (json_is_integer(limit)) {
                if (json_integer_value(limit) < 0)
                        return dp_varlink_call_reply_invalid_parameter(call, "limit");
                l = (size_t) json_integer_value(limit);
        }
        r = api_get_regions(queried(userdata), t, l, &reply);
        if (r == -ENOENT) {
                json_t *p = json_pack("{s:I}", "target", (json_int_t) t);

                r = dp_varlink_call_reply_error(call, "io.damon.perfd.NoSuchTarget", p);
                json_decref(p);
                return r;
        }
        if (r < 0)
                return dp_varlink_call_reply_errno(call, -r);
        return reply_json(call, reply);
}

/* The hub produces sampled records at the highest rate any subscriber asked for. */
static void update_sample_rate(struct manager *m) {
        uint32_t rate = 0;

        for (struct monitor *mon = m->monitors; mon; mon = mon->next)
                if (mon->samples)
                        rate = DP_MAX(rate, mon->per_second);
        event_hub_set_sample_rate(m->hub, rate);
}

static void monitor_gone(struct dp_varlink_call *call, void *userdata) {
        struct monitor *mon = userdata, **p;
        struct manager *m = mon->m;

        (void) call;
        for (p = &m->monitors; *p; p = &(*p)->next)
                if (*p == mon) {
                        *p = mon->next;
                        break;
                }
        free(mon);
        update_sample_rate(m);
}

static int method_monitor(struct dp_varlink_call *call, json_t *parameters, void *userdata) {
        json_t *samples = json_object_get(parameters, "samples"), *rate = json_object_get(parameters, "max_per_second");
        struct manager *m = userdata;
        struct monitor *mon;

        if (json_is_integer(rate) &&
            (json_integer_value(rate) < 1 || json_integer_value(rate) > MONITOR_SAMPLES_MAX_PER_SECOND))
                return dp_varlink_call_reply_invalid_parameter(call, "max_per_second");
        mon = calloc(1, sizeof(*mon));
        if (!mon)
                return dp_varlink_call_reply_errno(call, ENOMEM);
        *mon = (struct monitor) {
                .m = m,
                .call = call,
                .samples = json_is_true(samples),
                .per_second = json_is_integer(rate) ? (uint32_t) json_integer_value(rate)
                                                    : MONITOR_SAMPLES_DEFAULT_PER_SECOND,
                .next = m->monitors,
        };
        mon->tokens = mon->per_second;
        m->monitors = mon;
        dp_varlink_call_set_disconnect_handler(call, monitor_gone, mon);
        update_sample_rate(m);
        manager_look_soon(m);
        return 0; /* replies follow as events arrive */
}

static int reply_configuration_invalid(struct dp_varlink_call *call, char **errors) {
        json_t *list = json_array(), *p;
        int r;

        for (char **e = errors; list && e && *e; e++)
                if (json_array_append_new(list, json_string(*e)) < 0)
                        list = (json_decref(list), NULL);
        p = list ? json_pack("{s:o}", "errors", list) : NULL;
        if (!p)
                return dp_varlink_call_reply_errno(call, ENOMEM);
        r = dp_varlink_call_reply_error(call, "io.damon.perfd.ConfigurationInvalid", p);
        json_decref(p);
        return r;
}

static int method_reload(struct dp_varlink_call *call, json_t *parameters, void *userdata) {
        uid_t uid = (uid_t) -1;
        char **errors = NULL;
        int r;

        (void) parameters;
        if (dp_varlink_call_get_peer(call, &uid, NULL, NULL) < 0 || uid != 0)
                return dp_varlink_call_reply_permission_denied(call);
        r = manager_reload(userdata, &errors);
        if (r == -EINVAL) {
                r = reply_configuration_invalid(call, errors);
                manager_errors_free(errors);
                return r;
        }
        manager_errors_free(errors);
        if (r < 0)
                return dp_varlink_call_reply_errno(call, -r);
        return dp_varlink_call_reply(call, NULL);
}

static bool sample_kind(enum hub_event_kind kind) {
        return kind == HUB_SAMPLE || kind == HUB_REPORT_MISSED || kind == HUB_DRAIN;
}

static bool monitor_wants(struct monitor *mon, const struct hub_event *e) {
        double refill;

        if (!sample_kind(e->kind))
                return true;
        if (!mon->samples)
                return false;
        if (e->kind == HUB_DRAIN)
                return true;
        refill = (double) mon->per_second * (double) (e->timestamp_usec - mon->tokens_usec) / 1e6;
        mon->tokens = DP_MIN((double) mon->per_second, mon->tokens + DP_MAX(refill, 0.0));
        mon->tokens_usec = e->timestamp_usec;
        if (mon->tokens < 1)
                return false;
        mon->tokens -= 1;
        return true;
}

static int on_hub_events(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        struct manager *m = userdata;
        struct hub_event events[256];
        uint64_t dropped;
        size_t n;

        (void) s;
        (void) fd;
        (void) revents;
        n = event_hub_take(m->hub, events, DP_ARRAY_SIZE(events), &dropped);
        if (dropped)
                log_warning("monitor: %llu events dropped (subscribers too slow)", (unsigned long long) dropped);
        for (size_t i = 0; i < n; i++) {
                json_t *event = NULL;

                if (events[i].kind == HUB_STATE_CHANGE && events[i].to == DP_CPU_ERROR)
                        manager_look_soon(m);

                for (struct monitor *mon = m->monitors, *next; mon; mon = next) {
                        next = mon->next; /* a failed reply may disconnect and free it */
                        if (!monitor_wants(mon, &events[i]))
                                continue;
                        if (!event)
                                event = json_pack("{s:o}", "event", api_event_to_json(&events[i]));
                        if (event)
                                (void) dp_varlink_call_reply_continues(mon->call, event);
                }
                json_decref(event);
        }
        return 0;
}

int manager_varlink_start(struct manager *m) {
        static const struct dp_varlink_method_binding methods[] = {
                { "io.damon.perfd.GetStats", method_get_stats, 0 },
                { "io.damon.perfd.GetCPUs", method_get_cpus, 0 },
                { "io.damon.perfd.GetTargets", method_get_targets, 0 },
                { "io.damon.perfd.GetRegions", method_get_regions, 0 },
                { "io.damon.perfd.GetDamonView", method_get_damon_view, 0 },
                { "io.damon.perfd.Monitor", method_monitor, DP_VARLINK_METHOD_REQUIRES_MORE },
                { "io.damon.perfd.Reload", method_reload, 0 },
        };
        const char *path = m->o.varlink_path ?: DP_VARLINK_SERVER_SOCKET_PATH;
        int r;

        r = dp_varlink_server_new(m->event, NULL, &m->varlink);
        if (r >= 0)
                r = dp_varlink_server_add_interface(m->varlink, dp_varlink_io_damon_perfd_idl);
        if (r >= 0)
                r = dp_varlink_server_bind(m->varlink, methods, DP_ARRAY_SIZE(methods));
        if (r >= 0)
                r = dp_varlink_server_set_info(m->varlink, "damon-perfd", "damon-perfd", DP_VERSION,
                                               "https://github.com/damon-perfd/damon-perfd");
        if (r < 0)
                return log_error_errno(r, "varlink: cannot set up the server: %m");
        dp_varlink_server_set_userdata(m->varlink, m);
        r = dp_varlink_server_listen_auto(m->varlink, path, m->o.varlink_group);
        if (r < 0)
                return log_error_errno(r, "varlink: cannot listen on %s: %m", path);
        r = sd_event_add_io(m->event, &m->hub_source, event_hub_fd(m->hub), EPOLLIN, on_hub_events, m);
        if (r < 0)
                return r;
        log_info("serving io.damon.perfd on %s", path);
        return 0;
}

void manager_varlink_stop(struct manager *m) {
        m->hub_source = sd_event_source_disable_unref(m->hub_source);
        /* Closing the server runs monitor_gone() for every subscriber. */
        m->varlink = dp_varlink_server_free(m->varlink);
}
