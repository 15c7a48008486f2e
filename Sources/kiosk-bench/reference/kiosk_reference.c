// SPDX-License-Identifier: Apache-2.0
/*
 * kiosk_reference.c: the C reference loops that kiosk-bench measures kiosk-carousel's Swift
 * pixel loops against. Plain, portable C, written the way a competent programmer writes it:
 * one pixel at a time, each channel taken out with shifts and masks, no intrinsics, no
 * hand-vectorisation. kiosk-bench compiles it at run time with `gcc -O3` (no -march, so the
 * same x86-64 / aarch64 baseline a distribution package is built for, and the same baseline
 * the Swift code is compiled for) and runs it as a child process.
 *
 * usage: kiosk_reference KERNEL ITERATIONS WARMUP
 * prints: "<median ms per frame> <checksum>"; the checksum (FNV-1a over the output) must equal
 * the one kiosk-bench computes over the Swift output for the same inputs, which proves that
 * both sides did the same work.
 *
 * Kernels (1920x1080 frames, pixels 0xAARRGGBB, bytes B,G,R,A):
 *   blend        out = (a*(256-w) + b*w + 128) >> 8 per channel, w = 128, X byte = 0xFF
 *   blend-bytes  the same formula over every byte (the X byte blended too), for information
 *   rgb565       XRGB8888 -> RGB565, truncating
 *   rgb565-dither the same with 4x4 Bayer ordered dithering: t = bayer[y&3][x&3],
 *                r += (t<<3)>>4, g += (t<<2)>>4, b += (t<<3)>>4, each clamped at 255
 *   xrgb-copy    frame -> XRGB8888 scanout with a 7680-byte pitch, row by row memcpy
 *   xrgb-rot90   1080x1920 frame -> 1920x1080 panel turned 90 degrees clockwise, pitch 7680:
 *                panel (px, py) = frame (x = py, y = 1919 - px), one panel row at a time
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define W 1920
#define H 1080
#define PITCH 7680

/* The same deterministic test frames kiosk-bench builds (see Kernels.swift: testPixel). */
static uint32_t test_pixel(uint32_t i, uint32_t seed) {
    uint32_t x = i * 2654435761u + seed;
    x ^= x >> 15;
    x *= 2246822519u;
    x ^= x >> 13;
    return 0xFF000000u | (x & 0x00FFFFFFu);
}

static uint64_t fnv1a(const void *p, size_t n) {
    const uint8_t *b = p;
    uint64_t h = 14695981039346656037ull;
    for (size_t i = 0; i < n; i++) { h ^= b[i]; h *= 1099511628211ull; }
    return h;
}

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void blend(uint32_t *restrict out, const uint32_t *restrict a, const uint32_t *restrict b,
                  int n, uint32_t w) {
    uint32_t wa = 256 - w, wb = w;
    for (int i = 0; i < n; i++) {
        uint32_t pa = a[i], pb = b[i];
        uint32_t r = (((pa >> 16) & 0xFF) * wa + ((pb >> 16) & 0xFF) * wb + 128) >> 8;
        uint32_t g = (((pa >> 8) & 0xFF) * wa + ((pb >> 8) & 0xFF) * wb + 128) >> 8;
        uint32_t bl = ((pa & 0xFF) * wa + (pb & 0xFF) * wb + 128) >> 8;
        out[i] = 0xFF000000u | (r << 16) | (g << 8) | bl;
    }
}

static void blend_bytes(uint8_t *restrict out, const uint8_t *restrict a, const uint8_t *restrict b,
                        int n, unsigned w) {
    for (int i = 0; i < n; i++)
        out[i] = (uint8_t)((a[i] * (256 - w) + b[i] * w + 128) >> 8);
}

static void to565(uint16_t *restrict dst, int dst_stride_px, const uint32_t *restrict src, int w, int h) {
    for (int y = 0; y < h; y++) {
        const uint32_t *s = src + (size_t)y * w;
        uint16_t *d = dst + (size_t)y * dst_stride_px;
        for (int x = 0; x < w; x++) {
            uint32_t p = s[x];
            uint32_t r = (p >> 16) & 0xFF, g = (p >> 8) & 0xFF, b = p & 0xFF;
            d[x] = (uint16_t)(((r >> 3) << 11) | ((g >> 2) << 5) | (b >> 3));
        }
    }
}

static const uint8_t bayer[4][4] = {
    { 0, 8, 2, 10 }, { 12, 4, 14, 6 }, { 3, 11, 1, 9 }, { 15, 7, 13, 5 },
};

static void to565_dither(uint16_t *restrict dst, int dst_stride_px, const uint32_t *restrict src, int w, int h) {
    for (int y = 0; y < h; y++) {
        const uint32_t *s = src + (size_t)y * w;
        uint16_t *d = dst + (size_t)y * dst_stride_px;
        for (int x = 0; x < w; x++) {
            uint32_t p = s[x], t = bayer[y & 3][x & 3];
            uint32_t d5 = (t << 3) >> 4, d6 = (t << 2) >> 4;
            uint32_t r = ((p >> 16) & 0xFF) + d5, g = ((p >> 8) & 0xFF) + d6, b = (p & 0xFF) + d5;
            if (r > 255) r = 255;
            if (g > 255) g = 255;
            if (b > 255) b = 255;
            d[x] = (uint16_t)(((r >> 3) << 11) | ((g >> 2) << 5) | (b >> 3));
        }
    }
}

static void xrgb_copy(uint8_t *dst, const uint32_t *src, int w, int h) {
    for (int y = 0; y < h; y++)
        memcpy(dst + (size_t)y * PITCH, src + (size_t)y * w, (size_t)w * 4);
}

/* fw x fh logical frame onto a panel of fh x fw pixels, 90 degrees clockwise. */
static void xrgb_rot90(uint8_t *dst, const uint32_t *src, int fw, int fh) {
    int pw = fh, ph = fw;
    for (int py = 0; py < ph; py++) {
        uint32_t *d = (uint32_t *)(dst + (size_t)py * PITCH);
        for (int px = 0; px < pw; px++)
            d[px] = src[(size_t)(pw - 1 - px) * fw + py];
    }
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: %s KERNEL ITERATIONS WARMUP\n", argv[0]);
        return 64;
    }
    const char *k = argv[1];
    int iters = atoi(argv[2]), warm = atoi(argv[3]);
    if (iters < 1) iters = 1;
    int n = W * H;
    uint32_t *a = malloc((size_t)n * 4), *b = malloc((size_t)n * 4), *o = malloc((size_t)H * PITCH);
    if (!a || !b || !o) return 71;
    for (int i = 0; i < n; i++) { a[i] = test_pixel((uint32_t)i, 1); b[i] = test_pixel((uint32_t)i, 2); }
    memset(o, 0, (size_t)H * PITCH);

    int kind;
    size_t out_bytes;
    if (!strcmp(k, "blend")) { kind = 0; out_bytes = (size_t)n * 4; }
    else if (!strcmp(k, "blend-bytes")) { kind = 1; out_bytes = (size_t)n * 4; }
    else if (!strcmp(k, "rgb565")) { kind = 2; out_bytes = (size_t)n * 2; }
    else if (!strcmp(k, "rgb565-dither")) { kind = 3; out_bytes = (size_t)n * 2; }
    else if (!strcmp(k, "xrgb-copy")) { kind = 4; out_bytes = (size_t)H * PITCH; }
    else if (!strcmp(k, "xrgb-rot90")) { kind = 5; out_bytes = (size_t)H * PITCH; }
    else { fprintf(stderr, "unknown kernel %s\n", k); return 64; }

    double *t = malloc(sizeof(double) * (size_t)iters);
    for (int it = -warm; it < iters; it++) {
        double t0 = now_ms();
        switch (kind) {
        case 0: blend(o, a, b, n, 128); break;
        case 1: blend_bytes((uint8_t *)o, (const uint8_t *)a, (const uint8_t *)b, n * 4, 128); break;
        case 2: to565((uint16_t *)o, W, a, W, H); break;
        case 3: to565_dither((uint16_t *)o, W, a, W, H); break;
        case 4: xrgb_copy((uint8_t *)o, a, W, H); break;
        case 5: xrgb_rot90((uint8_t *)o, a, H, W); break;
        }
        double t1 = now_ms();
        if (it >= 0) t[it] = t1 - t0;
    }
    qsort(t, (size_t)iters, sizeof(double), cmp_double);
    double median = iters % 2 ? t[iters / 2] : (t[iters / 2 - 1] + t[iters / 2]) / 2;
    printf("%.4f %016llx\n", median, (unsigned long long)fnv1a(o, out_bytes));
    return 0;
}
