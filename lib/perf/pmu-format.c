/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "macro.h"
#include "parse-util.h"
#include "pmu.h"

/*
 * The kernel's format files name a config word and the bit ranges a field
 * occupies ("config1:0-11", "config:0-7,32-35").  As in the perf tool, the
 * ranges form one mask and a value's bits fill the mask's bits from the
 * lowest up, whatever order the ranges are written in.
 */

static const char *const word_names[_DP_PMU_CONFIG_WORD_MAX] = {
        [DP_PMU_CONFIG] = "config",
        [DP_PMU_CONFIG1] = "config1",
        [DP_PMU_CONFIG2] = "config2",
        [DP_PMU_CONFIG3] = "config3",
};

static int parse_bit(const char **p, unsigned *ret) {
        unsigned v = 0;

        if (!isdigit((unsigned char) **p))
                return -EBADMSG;
        while (isdigit((unsigned char) **p)) {
                v = v * 10 + (unsigned) (**p - '0');
                if (v > 63)
                        return -EBADMSG;
                (*p)++;
        }
        *ret = v;
        return 0;
}

static uint64_t bit_range(unsigned lo, unsigned hi) {
        uint64_t upto_hi = hi == 63 ? UINT64_MAX : (UINT64_C(1) << (hi + 1)) - 1;

        return upto_hi & ~((UINT64_C(1) << lo) - 1);
}

int dp_pmu_field_parse(const char *name, const char *text, struct dp_pmu_field *ret) {
        struct dp_pmu_field f = {};
        const char *p, *colon;
        size_t word_len, end;
        int word = -1;

        if (!name || !text || !ret)
                return -EINVAL;
        if (!name[0])
                return -EBADMSG;
        if (strlen(name) >= sizeof(f.name))
                return -ENAMETOOLONG;
        strcpy(f.name, name);

        /* Trailing whitespace is how sysfs files end (some with two newlines). */
        end = strlen(text);
        while (end > 0 && isspace((unsigned char) text[end - 1]))
                end--;

        colon = memchr(text, ':', end);
        if (!colon)
                return -EBADMSG;
        word_len = (size_t) (colon - text);
        for (int i = 0; i < _DP_PMU_CONFIG_WORD_MAX; i++)
                if (strlen(word_names[i]) == word_len && strncmp(text, word_names[i], word_len) == 0)
                        word = i;
        if (word < 0)
                return -EBADMSG;
        f.word = (enum dp_pmu_config_word) word;

        p = colon + 1;
        for (;;) {
                unsigned lo, hi;
                uint64_t range;
                int r;

                r = parse_bit(&p, &lo);
                if (r < 0)
                        return r;
                hi = lo;
                if (*p == '-') {
                        p++;
                        r = parse_bit(&p, &hi);
                        if (r < 0)
                                return r;
                        if (hi < lo)
                                return -EBADMSG;
                }
                range = bit_range(lo, hi);
                if (f.mask & range)
                        return -EBADMSG;
                f.mask |= range;

                if ((size_t) (p - text) == end)
                        break;
                if (*p != ',')
                        return -EBADMSG;
                p++;
        }

        *ret = f;
        return 0;
}

unsigned dp_pmu_field_width(const struct dp_pmu_field *field) {
        return (unsigned) __builtin_popcountll(field->mask);
}

static uint64_t *word_of(enum dp_pmu_config_word word, struct perf_event_attr *attr) {
        switch (word) {
        case DP_PMU_CONFIG:
                return (uint64_t *) &attr->config;
        case DP_PMU_CONFIG1:
                return (uint64_t *) &attr->config1;
        case DP_PMU_CONFIG2:
                return (uint64_t *) &attr->config2;
        default:
                return NULL;
        }
}

int dp_pmu_field_set(const struct dp_pmu_field *field, uint64_t value, struct perf_event_attr *attr) {
        unsigned width = dp_pmu_field_width(field);
        uint64_t *w, placed = 0;
        unsigned vbit = 0;

        if (width == 0)
                return -EBADMSG;
        if (width < 64 && value >> width)
                return -ERANGE;
        w = word_of(field->word, attr);
        if (!w)
                return -EOPNOTSUPP;

        for (unsigned bit = 0; bit < 64; bit++)
                if (field->mask & (UINT64_C(1) << bit)) {
                        if (value & (UINT64_C(1) << vbit))
                                placed |= UINT64_C(1) << bit;
                        vbit++;
                }
        *w = (*w & ~field->mask) | placed;
        return 0;
}

int dp_pmu_field_get(const struct dp_pmu_field *field, const struct perf_event_attr *attr, uint64_t *ret) {
        const uint64_t *w = word_of(field->word, (struct perf_event_attr *) attr);
        uint64_t value = 0;
        unsigned vbit = 0;

        if (!w)
                return -EOPNOTSUPP;
        for (unsigned bit = 0; bit < 64; bit++)
                if (field->mask & (UINT64_C(1) << bit)) {
                        if (*w & (UINT64_C(1) << bit))
                                value |= UINT64_C(1) << vbit;
                        vbit++;
                }
        *ret = value;
        return 0;
}

const struct dp_pmu_field *dp_pmu_field(const struct dp_pmu *pmu, const char *name) {
        for (size_t i = 0; i < pmu->n_fields; i++)
                if (strcmp(pmu->fields[i].name, name) == 0)
                        return &pmu->fields[i];
        return NULL;
}

int dp_pmu_set_field(const struct dp_pmu *pmu, const char *name, uint64_t value, struct perf_event_attr *attr) {
        const struct dp_pmu_field *f = dp_pmu_field(pmu, name);

        if (!f)
                return -ENOENT;
        return dp_pmu_field_set(f, value, attr);
}

/* One "term" or "term=value" of an events/ string; value in C notation (0x.., decimal). */
static int apply_term(const struct dp_pmu *pmu, const char *term, size_t len, struct perf_event_attr *attr) {
        char name[DP_PMU_FIELD_NAME_MAX], value_text[32];
        const char *eq = memchr(term, '=', len);
        size_t name_len = eq ? (size_t) (eq - term) : len;
        uint64_t value = 1;

        if (name_len == 0 || name_len >= sizeof(name))
                return -EBADMSG;
        memcpy(name, term, name_len);
        name[name_len] = '\0';

        if (eq) {
                size_t vlen = len - name_len - 1;
                int r;

                if (vlen == 0 || vlen >= sizeof(value_text))
                        return -EBADMSG;
                memcpy(value_text, eq + 1, vlen);
                value_text[vlen] = '\0';
                /* Base 0: events/ strings write hex values as 0x... */
                r = dp_parse_uint(value_text, 0, &value, NULL);
                if (r < 0)
                        return r == -ERANGE ? -ERANGE : -EBADMSG;
        }
        return dp_pmu_set_field(pmu, name, value, attr);
}

int dp_pmu_apply_event(const struct dp_pmu *pmu, const char *event, struct perf_event_attr *attr) {
        const char *p = event;
        size_t end;

        if (!pmu || !event || !attr)
                return -EINVAL;
        end = strlen(event);
        while (end > 0 && isspace((unsigned char) event[end - 1]))
                end--;
        if (end == 0)
                return -EBADMSG;

        attr->type = pmu->type;
        while ((size_t) (p - event) < end) {
                const char *comma = memchr(p, ',', end - (size_t) (p - event));
                size_t len = comma ? (size_t) (comma - p) : end - (size_t) (p - event);
                int r;

                r = apply_term(pmu, p, len, attr);
                if (r < 0)
                        return r;
                p += len;
                if (comma) {
                        p++;
                        if ((size_t) (p - event) == end)
                                return -EBADMSG;        /* trailing comma */
                }
        }
        return 0;
}
