/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "pfm.h"

/* After <linux/perf_event.h>, so libpfm uses the kernel's attr. */
#include <perfmon/pfmlib_perf_event.h>

/* libpfm is opened when an event is first named by string, not linked: its
 * tables take some 41,000 relocations, which every process that links it
 * pays at start (3.4 ms of CPU and 290 page faults on the project's VM, a
 * megabyte of memory kept dirty), while only PEBS and Source=event: use it. */
#define LIBPFM_SONAME "libpfm.so.4"

static pthread_once_t pfm_once = PTHREAD_ONCE_INIT;
static int pfm_init_error;
static char pfm_load_error[256];
static __typeof__(pfm_initialize) *sym_pfm_initialize;
static __typeof__(pfm_get_os_event_encoding) *sym_pfm_get_os_event_encoding;
static __typeof__(pfm_strerror) *sym_pfm_strerror;

static int pfm_to_errno(int r) {
        switch (r) {
        case PFM_SUCCESS:
                return 0;
        case PFM_ERR_NOTSUPP:
                return -EOPNOTSUPP;
        case PFM_ERR_NOTFOUND:
                return -ENOENT;
        case PFM_ERR_NOMEM:
                return -ENOMEM;
        case PFM_ERR_TOOMANY:
                return -E2BIG;
        case PFM_ERR_TOOSMALL:
                return -ENOBUFS;
        case PFM_ERR_NOINIT:
                return -EIO;
        default:        /* INVAL, FEATCOMB, UMASK, ATTR, ATTR_VAL, ATTR_SET */
                return -EINVAL;
        }
}

/* The library is never closed: libpfm's tables live as long as the process. */
static int load_libpfm(void) {
        void *dl = dlopen(LIBPFM_SONAME, RTLD_NOW | RTLD_LOCAL);

        if (!dl) {
                snprintf(pfm_load_error, sizeof(pfm_load_error), "%s", dlerror());
                return -EOPNOTSUPP;
        }
        sym_pfm_initialize = (__typeof__(sym_pfm_initialize)) dlsym(dl, "pfm_initialize");
        sym_pfm_get_os_event_encoding = (__typeof__(sym_pfm_get_os_event_encoding)) dlsym(
                dl, "pfm_get_os_event_encoding");
        sym_pfm_strerror = (__typeof__(sym_pfm_strerror)) dlsym(dl, "pfm_strerror");
        if (!sym_pfm_initialize || !sym_pfm_get_os_event_encoding || !sym_pfm_strerror) {
                snprintf(pfm_load_error, sizeof(pfm_load_error), "%s lacks a symbol it should have",
                         LIBPFM_SONAME);
                return -EOPNOTSUPP;
        }
        return 0;
}

static void pfm_init_once(void) {
        pfm_init_error = load_libpfm();
        if (pfm_init_error == 0)
                pfm_init_error = pfm_to_errno(sym_pfm_initialize());
}

int dp_pfm_initialize(void) {
        int r = pthread_once(&pfm_once, pfm_init_once);

        return r ? -r : pfm_init_error;
}

int dp_pfm_encode(const char *event, struct perf_event_attr *attr, char *why, size_t why_size) {
        struct perf_event_attr encoded = { .size = sizeof(encoded) };
        pfm_perf_encode_arg_t arg = { .attr = &encoded, .size = sizeof(arg) };
        int r;

        if (!event || !attr)
                return -EINVAL;
        r = dp_pfm_initialize();
        if (r < 0) {
                if (why && why_size && pfm_load_error[0])
                        snprintf(why, why_size, "libpfm could not be loaded: %s", pfm_load_error);
                else if (why && why_size)
                        snprintf(why, why_size, "libpfm initialization failed (%s)", strerror(-r));
                return r;
        }
        r = sym_pfm_get_os_event_encoding(event, PFM_PLM0 | PFM_PLM3, PFM_OS_PERF_EVENT_EXT, &arg);
        if (r != PFM_SUCCESS) {
                if (why && why_size)
                        snprintf(why, why_size, "libpfm: %s", sym_pfm_strerror(r));
                return pfm_to_errno(r);
        }

        attr->type = encoded.type;
        attr->config = encoded.config;
        attr->config1 = encoded.config1;
        attr->config2 = encoded.config2;
        attr->precise_ip = encoded.precise_ip;
        attr->exclude_user = encoded.exclude_user;
        attr->exclude_kernel = encoded.exclude_kernel;
        attr->exclude_hv = encoded.exclude_hv;
        /* ":period=" / ":freq=" in the string */
        if (encoded.sample_period) {
                attr->freq = encoded.freq;
                attr->sample_period = encoded.sample_period;
        }
        if (why && why_size)
                why[0] = '\0';
        return 0;
}
