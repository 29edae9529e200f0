/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The one way every test binary runs its suite and reports: Check's summary
 * line on stdout, and an exit status meson understands. */

#include <check.h>
#include <stdlib.h>

static inline int dp_check_run(Suite *s) {
        SRunner *sr = srunner_create(s);
        int failed;

        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
