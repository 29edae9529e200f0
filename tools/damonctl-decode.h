/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * damonctl decode's private pieces, shared by its common part
 * (damonctl-decode.c: input, output helpers, the SPE dump) and its IBS dump
 * (damonctl-decode-ibs.c).
 */

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "decode-ibs.h"
#include "decode-spe.h"

/* The input, what is known about it, and the totals of the dump. */
struct dump {
        FILE *out;
        bool json;
        const char *name;               /* for messages: the path, or "standard input" */
        bool hex;                       /* the input was hex text */
        const uint8_t *buf;
        size_t size;
        const struct dp_ibs_cpu *cpu;   /* --cpu; NULL: unknown */
        uint32_t midr;                  /* --cpu=MIDR for SPE; 0: unknown */
        size_t packets, records, samples, no_data, damaged, bad_bytes, incomplete;
        bool out_of_memory;
};

json_t *decode_json_hex(uint64_t v);
/* One line of JSON; takes @o. */
void decode_emit(struct dump *d, json_t *o);
/* @rec: the SPE record the sample came from, for its raw timestamp; NULL: none. */
void decode_print_sample(const struct dump *d, const struct dp_sample *s, const struct dp_spe_record *rec);
json_t *decode_sample_json(const struct dp_sample *s, const struct dp_spe_record *rec);

/* IBS op RAW payloads one after another (damonctl-decode-ibs.c). */
void decode_dump_ibs(struct dump *d);
/* Every field of the op registers, by its name in struct dp_ibs_op_fields. */
json_t *decode_ibs_fields_json(const struct dp_ibs_op_fields *x);

/* A perf.data capture sample by sample (damonctl-decode-perf.c). */
int decode_perf_data(const char *path, bool json);
