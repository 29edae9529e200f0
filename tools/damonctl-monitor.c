/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* damonctl monitor, reload: following the daemon, and poking it. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "macro.h"
#include "monitor-event.h"
#include "damonctl.h"

static int print_event(struct ctl *ctl, json_t *reply) {
        _cleanup_free_ char *line = NULL;
        int k;

        if (ctl->json)
                return ctl_print_json(reply);
        k = dp_monitor_event_format(json_object_get(reply, "event"), false, &line);
        if (k == -EBADMSG)
                return ctl_bad_reply("Monitor: expected {\"event\": {\"kind\": string, \"timestamp_usec\": int, ...}}");
        if (k < 0) {
                fprintf(stderr, "formatting an event: %s\n", strerror(-k));
                return CTL_EXIT_FAILURE;
        }
        /* One line at a time, also into a pipe: whoever reads wants it now. */
        if (puts(line) == EOF || fflush(stdout) != 0) {
                fprintf(stderr, "writing to stdout: %s\n", strerror(errno ?: EIO));
                return CTL_EXIT_FAILURE;
        }
        return CTL_EXIT_OK;
}

int ctl_monitor(struct ctl *ctl) {
        json_t *parameters, *reply = NULL;
        bool continues = false;
        int k;

        k = ctl_handle_signals();
        if (k != CTL_EXIT_OK)
                return k;
        k = ctl_connect(ctl);
        if (k != CTL_EXIT_OK)
                return k;
        /* Events come when they come: no reply timeout on this connection. */
        dp_varlink_client_set_timeout(ctl->client, DP_VARLINK_TIMEOUT_INFINITY);

        parameters = json_object();
        if (!parameters ||
            (ctl->samples && json_object_set_new(parameters, "samples", json_true()) < 0) ||
            (ctl->max_per_second_set &&
             json_object_set_new(parameters, "max_per_second", json_integer((json_int_t) ctl->max_per_second)) < 0)) {
                json_decref(parameters);
                fprintf(stderr, "out of memory\n");
                return CTL_EXIT_FAILURE;
        }
        k = ctl_call_more(ctl, "Monitor", parameters, &reply, &continues);
        json_decref(parameters);

        while (k == CTL_EXIT_OK && reply) {
                k = print_event(ctl, reply);
                json_decref(reply);
                reply = NULL;
                if (k != CTL_EXIT_OK)
                        break;
                if (!continues) {
                        /* The daemon ends the stream only when it stops. */
                        fprintf(stderr, "damon-perfd ended the event stream (did it stop?)\n");
                        return CTL_EXIT_UNREACHABLE;
                }
                k = ctl_next(ctl, &reply, &continues);
        }
        return k;
}

int ctl_reload(struct ctl *ctl) {
        json_t *reply = NULL;
        int k;

        k = ctl_call(ctl, "Reload", NULL, &reply);
        if (k != CTL_EXIT_OK || !reply)
                return k;
        if (ctl->json)
                k = ctl_print_json(reply);
        json_decref(reply);
        return k;
}
