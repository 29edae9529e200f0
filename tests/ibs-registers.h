/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* AMD IBS op register bits as FIELD-NOTES §3 lays them out, written here
 * rather than taken from lib/, so that tests build payloads the decoder has
 * to read right. */

#include <stdint.h>

/* OP_CTL */
#define CTL_EN (1ull << 17)
#define CTL_VAL (1ull << 18)
#define CTL_OK (CTL_EN | CTL_VAL | 0x186a)
/* OP_DATA2: the data source code, low three bits and the Zen 4 extension */
#define D2_CODE(c) (((uint64_t) (c) & 7) | ((uint64_t) ((c) >> 3) & 3) << 6)
#define D2_DRAM D2_CODE(3)
#define D2_RMT_NODE (1ull << 4)
#define D2_CACHE_HIT_ST (1ull << 5)
/* OP_DATA3 */
#define D3_LD (1ull << 0)
#define D3_ST (1ull << 1)
#define D3_L1TLB_MISS (1ull << 2)
#define D3_L2TLB_MISS (1ull << 3)
#define D3_DC_MISS (1ull << 7)
#define D3_UC (1ull << 14)
#define D3_LOCKED (1ull << 15)
#define D3_NO_MAB (1ull << 16)
#define D3_LIN_VALID (1ull << 17)
#define D3_PHY_VALID (1ull << 18)
#define D3_L2_MISS (1ull << 20)
#define D3_SW_PF (1ull << 21)
#define D3_LAT(x) ((uint64_t) (x) << 32)
