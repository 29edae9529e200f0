/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "macro.h"
#include "parse-util.h"
#include "perf-data-header.h"

/* A header string at *@pos of @section: { u32 len; char s[len] }.  @text
 * points at s, @text_len is its length up to the first NUL, which must lie
 * inside len (perf always writes one); *@pos moves past the padding. */
static int take_string(const uint8_t *section, size_t size, size_t *pos, const char **text, size_t *text_len) {
        const char *s, *nul;
        uint32_t len;

        if (size - *pos < 4)
                return -EBADMSG;
        len = dp_load_u32(section + *pos);
        *pos += 4;
        if (len == 0 || len > size - *pos)
                return -EBADMSG;
        s = (const char *) section + *pos;
        nul = memchr(s, '\0', len);
        if (!nul)
                return -EBADMSG;
        *text = s;
        *text_len = (size_t) (nul - s);
        *pos += len;
        return 0;
}

static int copy_string(const char *text, size_t len, char *buf, size_t buf_size) {
        if (!buf || len >= buf_size)
                return -ENAMETOOLONG;
        memcpy(buf, text, len);
        buf[len] = '\0';
        return 0;
}

int dp_perf_pmu_mappings_find(const uint8_t *section, size_t size, uint32_t type, char *name, size_t name_size) {
        const char *found = NULL, *text;
        size_t pos = 4, found_len = 0, len;
        uint32_t nr;
        int r;

        if (!section || size < 4)
                return -EBADMSG;
        nr = dp_load_u32(section);
        /* Each entry takes at least 4 + 4 + 1 bytes: a huge count is damage. */
        if (nr > size / 9)
                return -EBADMSG;
        for (uint32_t i = 0; i < nr; i++) {
                uint32_t t;

                if (size - pos < 4)
                        return -EBADMSG;
                t = dp_load_u32(section + pos);
                pos += 4;
                r = take_string(section, size, &pos, &text, &len);
                if (r < 0)
                        return r;
                if (t == type && !found) {
                        found = text;
                        found_len = len;
                }
        }
        if (!found)
                return -ENOENT;
        return copy_string(found, found_len, name, name_size);
}

int dp_perf_cpuid_string(const uint8_t *section, size_t size, char *buf, size_t buf_size) {
        const char *text;
        size_t pos = 0, len;
        int r;

        if (!section)
                return -EBADMSG;
        r = take_string(section, size, &pos, &text, &len);
        if (r < 0)
                return r;
        return copy_string(text, len, buf, buf_size);
}

/* A decimal u32 at *@p, which moves past it. */
static int parse_u32(const char **p, uint32_t *ret) {
        const char *end;
        uint64_t v;

        if (dp_parse_uint(*p, 10, &v, &end) < 0 || v > UINT32_MAX)
                return -EINVAL;
        *ret = (uint32_t) v;
        *p = end;
        return 0;
}

/* "vendor,family,model,stepping" (arch/x86/util/header.c: get_cpuid()). */
static int parse_x86(const char *text, struct dp_perf_cpuid *out) {
        const char *comma = strchr(text, ','), *p;
        size_t vendor_len;

        if (!comma)
                return -EINVAL;
        vendor_len = (size_t) (comma - text);
        if (vendor_len == 0 || vendor_len >= sizeof(out->vendor))
                return -EINVAL;
        for (size_t i = 0; i < vendor_len; i++)
                if (!isalnum((unsigned char) text[i]))
                        return -EINVAL;
        p = comma + 1;
        if (parse_u32(&p, &out->family) < 0 || *p++ != ',' || parse_u32(&p, &out->model) < 0 || *p++ != ',' ||
            parse_u32(&p, &out->stepping) < 0 || *p)
                return -EINVAL;
        memcpy(out->vendor, text, vendor_len);
        out->vendor[vendor_len] = '\0';
        out->kind = DP_CPUID_X86;
        return 0;
}

/* "0x" and 16 hex digits of MIDR_EL1 (arch/arm64/util/header.c). */
static int parse_arm64(const char *text, struct dp_perf_cpuid *out) {
        uint64_t midr = 0;

        if (strncmp(text, "0x", 2) != 0 || strlen(text) != 18)
                return -EINVAL;
        for (const char *p = text + 2; *p; p++) {
                if (!isxdigit((unsigned char) *p))
                        return -EINVAL;
                midr = midr << 4 | (uint64_t) (isdigit((unsigned char) *p) ? *p - '0'
                                                                          : tolower((unsigned char) *p) - 'a' + 10);
        }
        out->kind = DP_CPUID_ARM64;
        out->midr = midr;
        out->implementer = (uint32_t) (midr >> 24 & 0xff);
        out->variant = (uint32_t) (midr >> 20 & 0xf);
        out->architecture = (uint32_t) (midr >> 16 & 0xf);
        out->part = (uint32_t) (midr >> 4 & 0xfff);
        out->revision = (uint32_t) (midr & 0xf);
        return 0;
}

int dp_perf_cpuid_parse(const char *text, struct dp_perf_cpuid *out) {
        int r;

        if (!text || !out)
                return -EINVAL;
        memset(out, 0, sizeof(*out));
        r = parse_arm64(text, out);
        if (r < 0)
                r = parse_x86(text, out);
        if (r < 0)
                memset(out, 0, sizeof(*out));
        return r;
}

int dp_perf_data_cpuid(const struct dp_perf_data *data, struct dp_perf_cpuid *out) {
        const uint8_t *section;
        char text[128];
        size_t size;
        int r;

        if (!out)
                return -EINVAL;
        memset(out, 0, sizeof(*out));
        r = dp_perf_data_feature(data, DP_PERF_HEADER_CPUID, &section, &size);
        if (r < 0)
                return r;
        r = dp_perf_cpuid_string(section, size, text, sizeof(text));
        if (r == -ENAMETOOLONG)
                return -EINVAL; /* no format we know is that long */
        if (r < 0)
                return r;
        return dp_perf_cpuid_parse(text, out);
}

int dp_perf_data_pmu_name(const struct dp_perf_data *data, uint32_t type, char *name, size_t name_size) {
        const uint8_t *section;
        size_t size;
        int r;

        r = dp_perf_data_feature(data, DP_PERF_HEADER_PMU_MAPPINGS, &section, &size);
        if (r < 0)
                return r;
        return dp_perf_pmu_mappings_find(section, size, type, name, name_size);
}
