/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * lib/track/tracker.c once more, with its static probes compiled out, so that
 * bench-tracker can time the batch path with probes in and out side by side.
 * Its batch function gets a name of its own, and bench/meson.build makes
 * every other symbol of this copy local (objcopy --keep-global-symbol), so
 * it links beside libdp's tracker.  Same source, same flags, same struct
 * layout: the copy works on trackers made by libdp's dp_tracker_new().
 */

#undef DP_USDT
#define DP_USDT 0
#define dp_tracker_account_batch dp_tracker_account_batch_probes_off

#include "../lib/track/tracker.c"
