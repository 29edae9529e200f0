/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * damonctl decode: dumps hardware sample data the way `perf report -D` does,
 * packet by packet (ARM SPE profiling-buffer bytes, the AUX area of an
 * arm_spe event) or register by register (AMD IBS op PERF_SAMPLE_RAW
 * payloads, one after another), each record followed by the struct dp_sample
 * the daemon's own decoders make of it.  Input is binary, or hex text
 * ("b0 5c 8b ...", '#' and '|' start comments, so testdata/spe-vectors.txt
 * reads as it is).  Damaged input is dumped as far as it decodes, skipping to
 * the next thing that decodes as the daemon does, and ends in
 * CTL_EXIT_DAMAGED.  --json: one object per line (records, garbage, summary).
 * The IBS dump is in damonctl-decode-ibs.c.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode-ibs.h"
#include "decode-spe.h"
#include "macro.h"
#include "mem-level.h"
#include "damonctl.h"
#include "damonctl-decode.h"

#define INPUT_MAX (256u << 20)
#define BYTES_PER_LINE 16

static int read_all(FILE *f, uint8_t **ret, size_t *ret_size) {
        _cleanup_free_ uint8_t *buf = NULL;
        size_t size = 0, allocated = 0;

        for (;;) {
                size_t n;

                if (size == allocated) {
                        uint8_t *p;

                        if (allocated >= INPUT_MAX)
                                return -EFBIG;
                        allocated = allocated ? allocated * 2 : 65536;
                        p = realloc(buf, allocated);
                        if (!p)
                                return -ENOMEM;
                        buf = p;
                }
                n = fread(buf + size, 1, allocated - size, f);
                size += n;
                if (n == 0)
                        break;
        }
        if (ferror(f))
                return errno > 0 ? -errno : -EIO;
        *ret = DP_TAKE_PTR(buf);
        *ret_size = size;
        return 0;
}

enum input_kind {
        INPUT_BINARY,
        INPUT_HEX,                      /* hex digits and blanks outside comments, at least one digit */
        INPUT_TEXT_NOT_HEX,             /* printable text that is not hex: decoded as binary, with a note */
};

/* Comments run from '#' or '|' to the end of the line.  *ret_line and
 * *ret_char: where text stops being hex (*ret_char 0: it has no digits). */
static enum input_kind classify_input(const uint8_t *buf, size_t size, unsigned *ret_line, uint8_t *ret_char) {
        bool comment = false, digits = false, text = size > 0, hex = true;
        unsigned line = 1;

        *ret_line = 0;
        *ret_char = 0;
        for (size_t i = 0; i < size; i++) {
                uint8_t c = buf[i];

                if (!isprint(c) && !isspace(c))
                        text = false;
                if (c == '\n') {
                        comment = false;
                        line++;
                } else if (comment)
                        continue;
                else if (c == '#' || c == '|')
                        comment = true;
                else if (isxdigit(c))
                        digits = true;
                else if (!isspace(c) && hex) {
                        hex = false;
                        *ret_line = line;
                        *ret_char = c;
                }
        }
        if (hex && digits)
                return INPUT_HEX;
        if (hex)
                *ret_line = 1;
        return text ? INPUT_TEXT_NOT_HEX : INPUT_BINARY;
}

/* Every byte is two digits: a blank-separated run of digits ("b05c" is
 * "b0 5c") must have an even length.  Prints where one does not. */
static int hex_check(const struct dump *d, const uint8_t *buf, size_t size) {
        unsigned line = 1;
        size_t i = 0;

        while (i < size) {
                size_t start = i;

                if (buf[i] == '#' || buf[i] == '|') {
                        while (i < size && buf[i] != '\n')
                                i++;
                        continue;
                }
                if (!isxdigit(buf[i])) {
                        line += buf[i++] == '\n';
                        continue;
                }
                while (i < size && isxdigit(buf[i]))
                        i++;
                if ((i - start) % 2 != 0) {
                        fprintf(stderr, "%s:%u: odd number of hex digits in '%.*s': a byte is two digits\n",
                                d->name, line, (int) DP_MIN(i - start, (size_t) 40), (const char *) buf + start);
                        return -EBADMSG;
                }
        }
        return 0;
}

/* Hex text to bytes, in place (the output never overtakes the input). */
static size_t hex_to_bytes(uint8_t *buf, size_t size) {
        bool comment = false, high = true;
        size_t out = 0;
        uint8_t byte = 0;

        for (size_t i = 0; i < size; i++) {
                uint8_t c = buf[i];
                unsigned v;

                if (c == '\n')
                        comment = false;
                if (comment || !isxdigit(c)) {
                        comment = comment || c == '#' || c == '|';
                        continue;
                }
                v = isdigit(c) ? (unsigned) (c - '0') : (unsigned) (tolower(c) - 'a' + 10);
                if (high)
                        byte = (uint8_t) (v << 4);
                else
                        buf[out++] = (uint8_t) (byte | v);
                high = !high;
        }
        return out;
}

/* Reads ctl->input_path (or stdin) into d->buf; prints why not. */
static int load_input(const struct ctl *ctl, struct dump *d, uint8_t **ret_buf) {
        _cleanup_fclose_ FILE *in = NULL;
        _cleanup_free_ uint8_t *buf = NULL;
        bool from_stdin = !ctl->input_path || strcmp(ctl->input_path, "-") == 0;
        unsigned line;
        uint8_t c;
        size_t size;
        int r;

        d->name = from_stdin ? "standard input" : ctl->input_path;
        if (!from_stdin) {
                in = fopen(ctl->input_path, "re");
                if (!in) {
                        fprintf(stderr, "%s: %s\n", d->name, strerror(errno));
                        return CTL_EXIT_FAILURE;
                }
        }
        r = read_all(in ?: stdin, &buf, &size);
        if (r == -EFBIG) {
                fprintf(stderr, "%s: larger than %u MiB: cut it into pieces (at record boundaries)\n", d->name,
                        INPUT_MAX >> 20);
                return CTL_EXIT_FAILURE;
        }
        if (r < 0) {
                fprintf(stderr, "reading %s: %s\n", d->name, strerror(-r));
                return CTL_EXIT_FAILURE;
        }

        switch (classify_input(buf, size, &line, &c)) {
        case INPUT_HEX:
                if (hex_check(d, buf, size) < 0)
                        return CTL_EXIT_FAILURE;
                size = hex_to_bytes(buf, size);
                d->hex = true;
                break;
        case INPUT_TEXT_NOT_HEX:
                /* Could be a binary stream that happens to be printable, but more
                 * likely a typo in a hex file: say which way it was read. */
                if (c)
                        fprintf(stderr, "note: %s is text but not hex (line %u: '%c' is not a hex digit): "
                                "decoding it as binary\n", d->name, line, c);
                else
                        fprintf(stderr, "note: %s is text without hex digits: decoding it as binary\n", d->name);
                break;
        case INPUT_BINARY:
                break;
        }
        d->buf = buf;
        d->size = size;
        *ret_buf = DP_TAKE_PTR(buf);
        return CTL_EXIT_OK;
}

json_t *decode_json_hex(uint64_t v) {
        return json_sprintf("0x%" PRIx64, v);
}

static json_t *json_bytes(const uint8_t *p, size_t n) {
        _cleanup_free_ char *s = malloc(2 * n + 1);

        if (!s)
                return NULL;
        for (size_t i = 0; i < n; i++)
                snprintf(s + 2 * i, 3, "%02x", p[i]);
        s[2 * n] = '\0';
        return json_string(s);
}

/* One line of JSON; takes @o. */
void decode_emit(struct dump *d, json_t *o) {
        if (!o) {
                d->out_of_memory = true;
                return;
        }
        (void) json_dumpf(o, d->out, JSON_COMPACT);
        fputc('\n', d->out);
        json_decref(o);
}

/* @rec: the SPE record the sample came from, for its raw timestamp. */
void decode_print_sample(const struct dump *d, const struct dp_sample *s, const struct dp_spe_record *rec) {
        const char *level = dp_mem_level_name(dp_sample_level(s));

        fprintf(d->out, "  => SAMPLE vaddr=0x%" PRIx64, s->vaddr);
        if (s->flags & DP_SAMPLE_PHYS_VALID)
                fprintf(d->out, " paddr=0x%" PRIx64, s->paddr);
        if (s->flags & (DP_SAMPLE_LOAD | DP_SAMPLE_STORE))
                fprintf(d->out, " %s", (s->flags & DP_SAMPLE_STORE) ? "store" : "load");
        if (s->flags & DP_SAMPLE_LATENCY_VALID)
                fprintf(d->out, " latency=%" PRIu32, s->latency);
        fprintf(d->out, " level=%s", level ?: "?");
        if (s->flags & DP_SAMPLE_DATA_SRC_VALID)
                fprintf(d->out, " data_src=0x%" PRIx64, s->data_src);
        if (s->pid)
                fprintf(d->out, " pid=%" PRIu32 " tid=%" PRIu32, s->pid, s->tid);
        else
                fputs(" pid=-", d->out);
        if (rec && (rec->have & DP_SPE_HAVE_TIMESTAMP))
                fprintf(d->out, " ts=%" PRIu64, rec->timestamp);
        fputc('\n', d->out);
}

json_t *decode_sample_json(const struct dp_sample *s, const struct dp_spe_record *rec) {
        const char *op = (s->flags & DP_SAMPLE_STORE) ? "store" : (s->flags & DP_SAMPLE_LOAD) ? "load" : NULL;

        return json_pack("{s:o, s:o?, s:s?, s:o?, s:s?, s:o?, s:o?, s:o?, s:o?}",
                         "vaddr", decode_json_hex(s->vaddr),
                         "paddr", (s->flags & DP_SAMPLE_PHYS_VALID) ? decode_json_hex(s->paddr) : NULL,
                         "op", op,
                         "latency", (s->flags & DP_SAMPLE_LATENCY_VALID) ? json_integer(s->latency) : NULL,
                         "level", dp_mem_level_name(dp_sample_level(s)),
                         "data_src", (s->flags & DP_SAMPLE_DATA_SRC_VALID) ? decode_json_hex(s->data_src) : NULL,
                         "pid", s->pid ? json_integer(s->pid) : NULL,
                         "tid", s->pid ? json_integer(s->tid) : NULL,
                         "timestamp",
                         rec && (rec->have & DP_SPE_HAVE_TIMESTAMP) ? decode_json_hex(rec->timestamp) : NULL);
}

static void print_bytes_line(const struct dump *d, size_t offset, size_t n, const char *desc) {
        size_t shown = DP_MIN(n, (size_t) BYTES_PER_LINE);

        fprintf(d->out, ". 0x%08zx: ", offset);
        for (size_t i = 0; i < BYTES_PER_LINE; i++) {
                if (i < shown)
                        fprintf(d->out, " %02x", d->buf[offset + i]);
                else
                        fputs("   ", d->out);
        }
        fprintf(d->out, "%s  %s\n", n > shown ? "+" : " ", desc);
}

static json_t *spe_packet_json(const struct dump *d, const struct dp_spe_packet *p, size_t offset,
                               const char *desc) {
        return json_pack("{s:I, s:I, s:o, s:s, s:i, s:o, s:s}",
                         "offset", (json_int_t) offset,
                         "size", (json_int_t) p->size,
                         "bytes", json_bytes(d->buf + offset, p->size),
                         "type", dp_spe_packet_type_name(p->type),
                         "index", (int) p->index,
                         "payload", decode_json_hex(p->payload),
                         "desc", desc);
}

/* A one-byte PAD or bad byte that can share a line with its like. */
static bool spe_runs(const struct dp_spe_packet *p) {
        return p->size == 1 && ((p->type == DP_SPE_PAD && !p->extended) || p->type == DP_SPE_BAD);
}

/*
 * The packets of [offset, offset + size), a stretch that ends on a packet
 * boundary.  Text: one line each, runs of PADs or of bad bytes sharing one.
 * JSON: appended to @packets when given.  Returns the bad bytes in it.
 */
static size_t spe_stretch(struct dump *d, size_t offset, size_t size, json_t *packets) {
        struct dp_spe_packet p, next;
        struct dp_spe_iter it;
        size_t bad = 0;

        dp_spe_iter_init(&it, d->buf + offset, size, offset);
        for (;;) {
                size_t at = it.pos, n;
                char desc[DP_SPE_DESC_MAX];

                if (!dp_spe_iter_next(&it, &p))
                        return bad;
                n = it.pos - at;
                (void) dp_spe_packet_describe(&p, desc, sizeof(desc));
                if (d->json) {
                        bad += p.type == DP_SPE_BAD;
                        d->packets += p.type != DP_SPE_BAD;
                        if (packets && json_array_append_new(packets, spe_packet_json(d, &p, offset + at, desc)) < 0)
                                d->out_of_memory = true;
                        continue;
                }
                while (spe_runs(&p) && n < BYTES_PER_LINE && it.pos < it.len) {
                        (void) dp_spe_packet_decode(it.buf + it.pos, it.len - it.pos, offset + it.pos, &next);
                        if (next.type != p.type || !spe_runs(&next))
                                break;
                        it.pos++;
                        n++;
                }
                if (p.type == DP_SPE_BAD) {
                        bad += n;
                        if (n > 1)
                                snprintf(desc, sizeof(desc), "BAD: %zu bytes that start no packet", n);
                } else if (spe_runs(&p)) {
                        d->packets += n;
                        if (n > 1)
                                snprintf(desc, sizeof(desc), "PAD x%zu", n);
                } else
                        d->packets++;
                print_bytes_line(d, offset + at, n, desc);
        }
}

/* Bytes between records: nothing to say in JSON unless some start no packet. */
static void spe_gap(struct dump *d, size_t offset, size_t size) {
        size_t bad = spe_stretch(d, offset, size, NULL);

        if (d->json && bad > 0)
                decode_emit(d, json_pack("{s:s, s:s, s:I, s:I, s:I}", "type", "garbage", "format", "spe",
                                         "offset", (json_int_t) offset, "size", (json_int_t) size,
                                         "bad_bytes", (json_int_t) bad));
}

static void spe_record(struct dump *d, const struct dp_spe_record *rec) {
        /* A file tells no current task and no clock; the CPU only by --cpu. */
        const struct dp_spe_context ctx = { .midr = d->midr };
        const char *result, *reason = NULL;
        json_t *packets = d->json ? json_array() : NULL;
        struct dp_sample s;
        int r;

        (void) spe_stretch(d, rec->offset, rec->size, packets);
        d->records++;
        r = dp_spe_record_to_sample(rec, &ctx, &s);
        if (r == 0) {
                d->samples++;
                result = "sample";
        } else if (r == -ENODATA) {
                d->no_data++;
                result = "no-data";
                reason = "a branch or other operation, no data address";
        } else {
                d->damaged++;
                result = "damaged";
                reason = rec->bad_bytes ? "damaged record (bytes that start no packet)"
                                        : "malformed record (a load/store without a data address, or no OP-TYPE)";
        }

        if (!d->json) {
                if (r == 0)
                        decode_print_sample(d, &s, rec);
                else
                        fprintf(d->out, "  => no sample: %s\n", reason);
                return;
        }
        decode_emit(d, json_pack("{s:s, s:s, s:I, s:I, s:I, s:o, s:s, s:o?, s:s?}",
                                 "type", "record", "format", "spe",
                                 "record", (json_int_t) d->records - 1,
                                 "offset", (json_int_t) rec->offset,
                                 "size", (json_int_t) rec->size,
                                 "packets", packets,
                                 "result", result,
                                 "sample", r == 0 ? decode_sample_json(&s, rec) : NULL,
                                 "reason", reason));
}

/* Where the record that the data cut off starts in [offset, end): its first
 * packet that is not a PAD, a bad byte or an END closing nothing. */
static size_t spe_incomplete_start(const struct dump *d, size_t offset, size_t end) {
        struct dp_spe_packet p;
        struct dp_spe_iter it;

        dp_spe_iter_init(&it, d->buf + offset, end - offset, offset);
        for (size_t at = 0; dp_spe_iter_next(&it, &p); at = it.pos)
                if (p.type != DP_SPE_PAD && p.type != DP_SPE_BAD && p.type != DP_SPE_END)
                        return offset + at;
        return end;
}

static void spe_tail(struct dump *d, size_t offset) {
        const char *reason = "the data ends inside a record";
        size_t start = spe_incomplete_start(d, offset, d->size);
        json_t *packets;

        d->records++;
        d->damaged++;
        if (!d->json) {
                (void) spe_stretch(d, offset, d->size - offset, NULL);
                fprintf(d->out, "  => no sample: %s\n", reason);
                return;
        }
        spe_gap(d, offset, start - offset);
        packets = json_array();
        (void) spe_stretch(d, start, d->size - start, packets);
        decode_emit(d, json_pack("{s:s, s:s, s:I, s:I, s:I, s:o, s:s, s:s}",
                                 "type", "incomplete", "format", "spe",
                                 "record", (json_int_t) d->records - 1,
                                 "offset", (json_int_t) start,
                                 "size", (json_int_t) (d->size - start),
                                 "packets", packets,
                                 "result", "damaged",
                                 "reason", reason));
}

static void dump_spe(struct dump *d) {
        struct dp_spe_record rec;
        struct dp_spe_iter it;
        size_t done = 0;

        dp_spe_iter_init(&it, d->buf, d->size, 0);
        while (dp_spe_next_record(&it, &rec)) {
                spe_gap(d, done, rec.offset - done);
                spe_record(d, &rec);
                done = it.pos;
        }
        if (it.incomplete_records)
                spe_tail(d, done);
        else
                spe_gap(d, done, d->size - done);
        d->bad_bytes = it.bad_bytes;
        d->incomplete = it.incomplete_records;
}

static void print_header(const struct ctl *ctl, const struct dump *d) {
        const char *format = ctl->decode_format == CTL_DECODE_SPE ? "spe" : "ibs";

        fprintf(d->out, "# decode --format=%s: %s, %zu bytes (%s)\n", format, d->name, d->size,
                d->hex ? "from hex text" : "binary");
        if (ctl->decode_format == CTL_DECODE_SPE) {
                if (!d->midr)
                        fputs("# cpu: none given (--cpu=MIDR): levels from the EVENTS packet\n", d->out);
                else
                        fprintf(d->out, "# cpu: MIDR 0x%08" PRIx32 ": %s\n", d->midr,
                                dp_spe_midr_common_ds(d->midr)
                                        ? "DATA-SOURCE read with the common (Neoverse) encoding"
                                        : "not a CPU perf reads DATA-SOURCE on: levels from the EVENTS packet");
                return;
        }
        if (!d->cpu)
                fputs("# cpu: none given (--cpu=FAMILY:MODEL): no errata applied\n", d->out);
        else
                fprintf(d->out, "# cpu: family 0x%02" PRIx32 " model 0x%02" PRIx32 ": erratum 1293 %s\n",
                        d->cpu->family, d->cpu->model,
                        dp_ibs_cpu_has_erratum_1293(d->cpu)
                                ? "applies (OP_DATA2 and L2Miss ignored with SwPf or DcMissNoMabAlloc)"
                                : "does not apply");
}

static void print_summary(const struct ctl *ctl, struct dump *d) {
        bool spe = ctl->decode_format == CTL_DECODE_SPE;

        if (d->json) {
                json_t *o = json_pack("{s:s, s:s, s:s, s:b, s:I, s:I, s:I, s:I, s:I, s:I, s:I}",
                                      "type", "summary", "format", spe ? "spe" : "ibs",
                                      "input", d->name, "hex", d->hex,
                                      "bytes", (json_int_t) d->size,
                                      "records", (json_int_t) d->records,
                                      "samples", (json_int_t) d->samples,
                                      "no_data", (json_int_t) d->no_data,
                                      "damaged", (json_int_t) d->damaged,
                                      "bad_bytes", (json_int_t) d->bad_bytes,
                                      "incomplete", (json_int_t) d->incomplete);

                if (o && spe && json_object_set_new(o, "packets", json_integer((json_int_t) d->packets)) < 0)
                        json_decref(DP_TAKE_PTR(o));
                /* The CPU the errata were judged for: null when not given. */
                if (o && !spe &&
                    (json_object_set_new(o, "cpu", d->cpu ? json_pack("{s:I, s:I}",
                                                                      "family", (json_int_t) d->cpu->family,
                                                                      "model", (json_int_t) d->cpu->model)
                                                          : json_null()) < 0 ||
                     json_object_set_new(o, "erratum_1293", json_boolean(dp_ibs_cpu_has_erratum_1293(d->cpu))) < 0))
                        json_decref(DP_TAKE_PTR(o));
                decode_emit(d, o);
                return;
        }
        if (spe)
                fprintf(d->out, "# spe: %zu bytes, %zu packets, %zu records, %zu samples, %zu no-data, "
                        "%zu damaged (%zu bad bytes, %zu cut off at the end)\n",
                        d->size, d->packets, d->records, d->samples, d->no_data, d->damaged, d->bad_bytes,
                        d->incomplete);
        else
                fprintf(d->out, "# ibs: %zu bytes, %zu records, %zu samples, %zu no-data, %zu damaged "
                        "(%zu bytes skipped)\n",
                        d->size, d->records, d->samples, d->no_data, d->damaged, d->bad_bytes);
}

int ctl_decode(struct ctl *ctl) {
        _cleanup_free_ uint8_t *buf = NULL;
        struct dp_ibs_cpu cpu = { .family = ctl->cpu_family, .model = ctl->cpu_model };
        struct dump d = {
                .out = stdout,
                .json = ctl->json,
                .cpu = ctl->cpu_set ? &cpu : NULL,
                .midr = ctl->midr_set ? ctl->midr : 0,
        };
        int k;

        if (ctl->decode_format == CTL_DECODE_PERF_DATA)
                return decode_perf_data(ctl->input_path, ctl->json);
        k = load_input(ctl, &d, &buf);
        if (k != CTL_EXIT_OK)
                return k;
        if (!d.json)
                print_header(ctl, &d);
        if (ctl->decode_format == CTL_DECODE_SPE)
                dump_spe(&d);
        else
                decode_dump_ibs(&d);
        print_summary(ctl, &d);

        if (d.out_of_memory) {
                fputs("out of memory\n", stderr);
                return CTL_EXIT_FAILURE;
        }
        if (fflush(stdout) != 0 || ferror(stdout)) {
                fprintf(stderr, "writing to stdout: %s\n", strerror(errno ?: EIO));
                return CTL_EXIT_FAILURE;
        }
        if (d.damaged > 0 || d.bad_bytes > 0) {
                fprintf(stderr, "%s: damaged: %zu of %zu records, %zu bytes that decode to nothing\n", d.name,
                        d.damaged, d.records, d.bad_bytes);
                return CTL_EXIT_DAMAGED;
        }
        return CTL_EXIT_OK;
}
