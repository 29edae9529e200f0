/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "manager.h"

/* Serves io.damon.perfd on m->o.varlink_path (or the socket systemd passed). */
int manager_varlink_start(struct manager *m);
void manager_varlink_stop(struct manager *m);
