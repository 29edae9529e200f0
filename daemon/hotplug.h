/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * CPU hotplug, from the event loop: at each look (once a second while a CPU
 * is not RUNNING, at once when a reader leaves RUNNING) it reads the online CPUs
 * from /sys/devices/system/cpu/online, closes the sampler of each configured
 * CPU that went offline and opens it again when the CPU is back
 * (cpu-hotplug.h tells what the kernel does to the events and
 * how the readers catch a CPU that was back before the next look).  CPUs that
 * were never configured are ignored.
 *
 * Why a look at the list rather than the kernel's uevents ("offline@/devices/
 * system/cpu/cpuN" on NETLINK_KOBJECT_UEVENT, which arrive without udevd, as
 * the qemu guest shows): the unit runs with PrivateNetwork= and
 * RestrictAddressFamilies=AF_UNIX, where no netlink socket can be opened and
 * no uevent reaches the daemon's network namespace.  The read is a few bytes
 * of sysfs a look, and works wherever the daemon does.
 *
 * Tests read the list from a file of their own instead
 * (DAMON_PERFD_TEST_CPU_ONLINE, test-seam.h), so that on a real machine they
 * can take a CPU "offline" without touching the machine's CPUs.
 */

#include <stddef.h>
#include <stdint.h>

#include "sampler.h"

struct hotplug;

/* @online_path: where to read the online CPUs; NULL for the kernel's list. */
int hotplug_new(const char *online_path, struct hotplug **ret);
void hotplug_free(struct hotplug *h);

/* How often the online list needs a look of its own while every CPU runs:
 * the kernel's never (a reader finds its CPU gone at its next wake-up and
 * brings the look at once), a test's every 5 s (no reader notices it). */
uint64_t hotplug_look_every_ns(const struct hotplug *h);

/* One look at the online CPUs, acting on @samplers (the configured CPUs). */
void hotplug_check(struct hotplug *h, struct sampler *samplers, size_t n, const struct sampler_options *options);
