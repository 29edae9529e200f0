/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* damon-perfd.conf: systemd-style INI files ([Section], Key=Value, # and ;
 * comments) that set struct dp_config, with drop-ins merged as systemd does.
 * Parsing works on text buffers; only dp_config_files_list() and
 * dp_config_load() touch the file system. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "config.h"
#include "dp-config.h"

/* Where meson installs the main file: the configured sysconfdir, /etc when
 * built with --prefix=/usr (as packages are), /usr/local/etc by meson's
 * default prefix.  The drop-in directories stay systemd's, whatever the prefix. */
#define DP_CONFIG_MAIN_FILE DP_SYSCONFDIR "/damon-perfd.conf"
#define DP_CONFIG_DROPIN_DIR_NAME "damon-perfd.conf.d"
#define DP_CONFIG_DEFAULT_SOCKET "/run/damon-perfd/io.damon.perfd"
#define DP_CONFIG_MAX_FILE_SIZE (1024 * 1024)

enum dp_config_severity {
        DP_CONFIG_WARNING,
        DP_CONFIG_ERROR,
};

/* Receives every message, already prefixed with "file:line: " (or "file: "
 * for whole-file problems). */
typedef void (*dp_config_report_t)(enum dp_config_severity severity, const char *message, void *userdata);

/* dp_config_init() plus the defaults that only the file knows about (the
 * API socket), so that a printed configuration parses back identically. */
void dp_config_defaults(struct dp_config *c);

/* Applies the assignments in @text (@size bytes, NUL bytes allowed and
 * refused) on top of @c.  Reports every problem; returns -EINVAL when any
 * was an error (@c may then be partly updated and must be discarded). */
int dp_config_parse_text(struct dp_config *c, const char *text, size_t size, const char *file_name,
                         dp_config_report_t report, void *userdata);

/* The files to read, in application order, as a NULL-terminated array of
 * malloc'd paths (free with dp_config_files_free()).  With @main_path, just
 * that file; otherwise @root (NULL or "" = "/") + DP_CONFIG_MAIN_FILE if
 * it exists, then the drop-ins damon-perfd.conf.d/NAME.conf from /etc, /run,
 * /usr/local/lib and /usr/lib: one per NAME, the earlier directory masking
 * the later ones, applied in lexical order of NAME. */
int dp_config_files_list(const char *root, const char *main_path, char ***ret_paths,
                         dp_config_report_t report, void *userdata);
void dp_config_files_free(char **paths);

/* Defaults, then every file of dp_config_files_list(), then
 * dp_config_validate().  0, or -EINVAL (or an I/O errno) after reporting. */
int dp_config_load(struct dp_config *c, const char *root, const char *main_path,
                   dp_config_report_t report, void *userdata);

/* Writes @c in the file's own format, every key present. */
int dp_config_format(const struct dp_config *c, FILE *f);
