/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * One line of text for an io.damon.perfd Event, as `damonctl monitor` prints
 * it:
 *   2026-12-02 14:42:57.123456 CPU01 state_change enabled -> running
 *   2026-12-02 14:42:57.400000 CPU01 state_change running -> error failed_step=run errno=9 (Bad file descriptor)
 *   2026-12-02 14:42:58.000001 CPU00 sample pid=4242 addr=0x7f12a000
 *   2026-12-02 14:42:58.000002 CPU00 report_missed pid=1 addr=0x5000 reason=miss_tgid
 *   2026-12-02 14:42:58.500000 CPU00 ring_overflow count=17 depth=65536
 *   2026-12-02 14:42:59.000000 drain count=5120
 * timestamp_usec is CLOCK_REALTIME; it is shown in local time or UTC.
 * Fields the interface may add later are printed as key=JSON after the known
 * ones, so a newer daemon's events still show in full.
 */

#include <jansson.h>
#include <stdbool.h>

/* Formats @event (without a trailing newline) into a new string in @ret.
 * -EBADMSG when @event is not an object with a string kind and an integer
 * timestamp_usec; -ENOMEM. */
int dp_monitor_event_format(json_t *event, bool utc, char **ret);
