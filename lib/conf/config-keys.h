/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Every setting once: its [Section] and Key= in damon-perfd.conf, the field
 * of struct dp_config it is stored in, how its value is parsed and printed,
 * and the damon-perfd options that set it.
 * The file parser, --check-config, the daemon's options and its reload all
 * walk this one table, so a setting cannot be known to some and not others. */

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config-file.h"
#include "config.h"

/* Room for any key's printed value: the longest is every Scheme=, one a line. */
#define DP_CONFIG_VALUE_MAX 16384
/* Room for every option of the table (dp_config_getopt_options()). */
#define DP_CONFIG_MAX_OPTIONS 24

struct dp_config_key;
struct dp_config_option;
struct dp_config_options_pass;

/* A file's value: 0, -EINVAL (the key's .expected says why) or -ENOMEM. */
typedef int (*dp_config_parse_t)(const struct dp_config_key *k, struct dp_config *c, const char *value);
/* The value as the file writes it, NUL-terminated; 0 or -ENOBUFS. */
typedef int (*dp_config_print_t)(const struct dp_config_key *k, const struct dp_config *c, char *buf,
                                 size_t size);
/* The same with a reason that names the word at fault, for keys whose values
 * have many words (Scheme=); @why gets the message on -EINVAL. */
typedef int (*dp_config_parse_why_t)(const struct dp_config_key *k, struct dp_config *c, const char *value,
                                     char *why, size_t size);
/* A command-line option's argument (NULL for an option without one); @first:
 * no option of this command line set the key before.  0, or a negative errno
 * after reporting "--name: ..." through @pass. */
typedef int (*dp_config_option_parse_t)(const struct dp_config_key *k, const struct dp_config_option *o,
                                        struct dp_config_options_pass *pass, struct dp_config *c,
                                        const char *arg, bool first);

/* A damon-perfd option that sets a key.  Its rules are the option's own, not
 * the file's (--sample-interval-ms=5 is the file's SampleIntervalSec=5ms). */
struct dp_config_option {
        const char *name;               /* without "--"; NULL ends the list */
        bool has_arg;
        dp_config_option_parse_t parse;
        uint64_t min, max;              /* numeric options */
};

struct dp_config_key {
        const char *section, *key;
        size_t offset, size;            /* of the field in struct dp_config */
        dp_config_parse_t parse;
        dp_config_print_t print;
        const char *expected;           /* why a value was refused: "expected ..." */
        uint64_t min, max;              /* numbers and time spans (in µs) */
        const char *empty;              /* strings: what an empty value stands for */
        const char *const *names;       /* enumerations: the name of each value, NULL-terminated */
        /* Repeated keys (Scheme=): each line adds a value, an empty one
         * clears them; the printed value holds one per line, in order. */
        bool repeated;
        dp_config_parse_why_t parse_why;        /* when set, used for file lines */
        struct dp_config_option options[2];     /* the options that set it, if any */
};

extern const struct dp_config_key dp_config_keys[];
extern const size_t dp_config_n_keys;

/* Parses @value for @k into @c, an empty value standing for the key's .empty
 * when it has one. */
int dp_config_key_parse(const struct dp_config_key *k, struct dp_config *c, const char *value);
/* The same, with the reason for a refusal in @why (the key's .expected
 * unless its parser says more). */
int dp_config_key_parse_why(const struct dp_config_key *k, struct dp_config *c, const char *value, char *why,
                            size_t size);
/* Records where the value @k last added came from ("file:line"), for messages
 * about it found later (a scheme the kernel cannot run). */
void dp_config_key_note_origin(const struct dp_config_key *k, struct dp_config *c, const char *origin);
/* Prints @k's value in @c; 0 or -ENOBUFS. */
int dp_config_key_print(const struct dp_config_key *k, const struct dp_config *c, char *buf, size_t size);

/* The key, or NULL. */
const struct dp_config_key *dp_config_key_find(const char *section, const char *key);
/* Whether @section is one of the file's sections; its canonical spelling or NULL. */
const char *dp_config_section_find(const char *section);

/* The key as messages name it: "RingPages=", or "[API] Socket=" for the
 * sections whose keys have twins elsewhere or came later. */
void dp_config_key_name(const struct dp_config_key *k, char *buf, size_t size);
/* Whether @a and @b hold different values for @k: they print differently. */
bool dp_config_key_differs(const struct dp_config_key *k, const struct dp_config *a, const struct dp_config *b);

/* One command line's pass over the settings' options. */
struct dp_config_options_pass {
        dp_config_report_t report;      /* receives each refusal, "--name: ..." */
        void *userdata;
        uint64_t keys_set;              /* bit i: an option already set dp_config_keys[i] */
};

/* Appends every option of the table to @options (which has room for @room
 * entries) as getopt_long() entries with val = @first_val + n, n counting from
 * 0 in table order.  The number added, or -ENOBUFS. */
int dp_config_getopt_options(struct option *options, size_t room, int first_val);
/* Applies option number @n of dp_config_getopt_options() with @arg on top of @c. */
int dp_config_option_apply(struct dp_config_options_pass *pass, size_t n, const char *arg, struct dp_config *c);
