/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * libpfm4, for events named by string (PEBS loads, Source=event:...).
 * libpfm keeps process-global tables that pfm_initialize() builds once; that
 * state is the one exception to "no global state" in lib/, and it lives only
 * in pfm.c.  Encoding happens when a sampler is set up, never per sample.
 */

#include <linux/perf_event.h>
#include <stddef.h>

/* pfm_initialize() once per process, thread-safe; 0 or a negative errno. */
int dp_pfm_initialize(void);

/* Encodes a libpfm event string for perf_event_open (PFM_OS_PERF_EVENT_EXT,
 * user and kernel levels unless the string says otherwise) into @attr's
 * type, config, config1, config2, precise_ip and exclude bits; @attr's other
 * fields are left alone.  @why (may be NULL) gets libpfm's message.
 * -ENOENT unknown event or PMU, -EINVAL bad attribute, -EOPNOTSUPP, ... */
int dp_pfm_encode(const char *event, struct perf_event_attr *attr, char *why, size_t why_size);
