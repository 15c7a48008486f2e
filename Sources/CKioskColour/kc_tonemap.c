// SPDX-License-Identifier: Apache-2.0
// HDR (BT.2100 PQ or HLG) to SDR (sRGB) through lookup tables (see kc_colour.h).
//
// Per pixel:
// 1. Display light in cd/m² for each of R, G, B (the picture's own primaries):
//    PQ: the SMPTE ST 2084 EOTF of each sample (BT.2100 table 4);
//    HLG: the inverse OETF of each sample gives scene light E in 0...1, then the HLG OOTF
//    (BT.2100 table 5) Fd = Lw * Ys^(gamma - 1) * E with Ys = 0.2627 R + 0.6780 G + 0.0593 B
//    and gamma = 1.2 + 0.42 log10(Lw / 1000) (Lw the nominal peak, 1000 cd/m²: gamma 1.2).
// 2. Tone mapping: the EETF of ITU-R BT.2390 (section 5.4.1, its Hermite-spline knee in the PQ
//    domain, black level 0) from the source range [0, source_peak] to [0, sdr_white], applied to
//    max(R, G, B) and the three channels scaled by the same ratio, which keeps hue and
//    saturation (BT.2390 leaves the choice of signal to the implementer). Below the knee
//    (KS = 1.5 maxLum - 0.5; about 85 cd/m² from a 1000 cd/m² source) light is unchanged, so a
//    scene coded in SDR (its white at 203 cd/m², BT.2408) and in HDR comes out alike; above it,
//    highlights roll off into the last part of the SDR range instead of clipping.
// 3. SDR: divided by sdr_white, turned to BT.709/sRGB primaries by the caller's matrix,
//    clipped to 0...1 and encoded with the sRGB transfer function (IEC 61966-2-1).
// Tables: the samples' light (one entry per code), the EETF's ratio over sqrt(m / 10000) and,
// for HLG, Ys^(gamma - 1) over sqrt(Ys) (4097 entries each, interpolated), and the sRGB
// encoding of 65536 linear steps.
#include "kc_colour.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { RATIO_STEPS = 4096, GAIN_STEPS = 4096, ENCODE_STEPS = 65536 };

struct kc_tonemap {
    int transfer, bits;
    unsigned max_code;
    double source_peak, sdr_white;
    float matrix[9];
    float hlg_peak;
    /// PQ: display light in cd/m² per code; HLG: scene light E in 0...1 per code.
    float *light;
    /// EETF(m) / m over u = sqrt(m / 10000), RATIO_STEPS + 1 entries.
    float ratio[RATIO_STEPS + 1];
    /// HLG: Ys^(gamma - 1) over s = sqrt(Ys), GAIN_STEPS + 1 entries.
    float gain[GAIN_STEPS + 1];
    /// sRGB 8-bit code of linear v = i / (ENCODE_STEPS - 1).
    uint8_t encode[ENCODE_STEPS];
};

// SMPTE ST 2084 constants (BT.2100 table 4).
static const double PQ_M1 = 2610.0 / 16384.0, PQ_M2 = 2523.0 / 4096.0 * 128.0;
static const double PQ_C1 = 3424.0 / 4096.0, PQ_C2 = 2413.0 / 4096.0 * 32.0, PQ_C3 = 2392.0 / 4096.0 * 32.0;

/// PQ EOTF: signal 0...1 to cd/m².
static double pq_eotf(double e) {
    if (e <= 0) return 0;
    double p = pow(e, 1.0 / PQ_M2);
    double num = p - PQ_C1;
    if (num < 0) num = 0;
    return 10000.0 * pow(num / (PQ_C2 - PQ_C3 * p), 1.0 / PQ_M1);
}

/// PQ inverse EOTF: cd/m² to signal 0...1.
static double pq_inverse(double nits) {
    if (nits <= 0) return 0;
    double y = pow(nits / 10000.0, PQ_M1);
    return pow((PQ_C1 + PQ_C2 * y) / (1.0 + PQ_C3 * y), PQ_M2);
}

// HLG constants (BT.2100 table 5).
static const double HLG_A = 0.17883277, HLG_B = 0.28466892, HLG_C = 0.55991073;

/// HLG inverse OETF: signal 0...1 to scene light 0...1.
static double hlg_inverse_oetf(double e) {
    if (e <= 0) return 0;
    if (e <= 0.5) return e * e / 3.0;
    return (exp((e - HLG_C) / HLG_A) + HLG_B) / 12.0;
}

/// The BT.2390 EETF from [0, source_peak] to [0, sdr_white], in cd/m².
static double eetf(const kc_tonemap *t, double nits) {
    double lw = pq_inverse(t->source_peak);
    if (lw <= 0) return 0;
    double max_lum = pq_inverse(t->sdr_white) / lw;
    double e1 = pq_inverse(nits) / lw;
    if (e1 > 1) e1 = 1;
    double e2 = e1;
    double ks = 1.5 * max_lum - 0.5;
    if (max_lum < 1 && e1 >= ks) {
        double tt = (e1 - ks) / (1 - ks), t2 = tt * tt, t3 = t2 * tt;
        e2 = (2 * t3 - 3 * t2 + 1) * ks + (t3 - 2 * t2 + tt) * (1 - ks) + (-2 * t3 + 3 * t2) * max_lum;
    }
    return pq_eotf(e2 * lw);
}

/// sRGB transfer function (IEC 61966-2-1): linear 0...1 to signal 0...1.
static double srgb_encode(double v) {
    if (v <= 0.0031308) return 12.92 * v;
    return 1.055 * pow(v, 1.0 / 2.4) - 0.055;
}

kc_tonemap *kc_tonemap_create(const kc_tonemap_params *p, int bits) {
    if ((p->transfer != KC_HDR_PQ && p->transfer != KC_HDR_HLG) || bits < 8 || bits > 16 ||
        !(p->source_peak >= 1 && p->source_peak <= 10000) || !(p->sdr_white >= 1 && p->sdr_white <= 10000))
        return NULL;
    kc_tonemap *t = calloc(1, sizeof *t);
    if (t == NULL) return NULL;
    t->transfer = p->transfer;
    t->bits = bits;
    t->max_code = (1u << bits) - 1;
    t->source_peak = p->source_peak;
    t->sdr_white = p->sdr_white;
    for (int i = 0; i < 9; i++) t->matrix[i] = (float)p->matrix[i];
    t->light = malloc(sizeof(float) * ((size_t)t->max_code + 1));
    if (t->light == NULL) { free(t); return NULL; }
    for (unsigned c = 0; c <= t->max_code; c++) {
        double e = (double)c / t->max_code;
        t->light[c] = (float)(p->transfer == KC_HDR_PQ ? pq_eotf(e) : hlg_inverse_oetf(e));
    }
    for (int i = 0; i <= RATIO_STEPS; i++) {
        double u = (double)i / RATIO_STEPS, m = 10000.0 * u * u;
        t->ratio[i] = m <= 0 ? 1.0f : (float)(eetf(t, m) / m);
    }
    // HLG: the nominal peak is the source peak; gamma from BT.2100 note 5e (its extended form).
    t->hlg_peak = (float)p->source_peak;
    double gamma = 1.2 + 0.42 * log10(p->source_peak / 1000.0);
    for (int i = 0; i <= GAIN_STEPS; i++) {
        double s = (double)i / GAIN_STEPS; // sqrt(Ys)
        t->gain[i] = s <= 0 ? (gamma > 1 ? 0.0f : 1.0f) : (float)pow(s, 2 * (gamma - 1));
    }
    for (int i = 0; i < ENCODE_STEPS; i++) {
        double v = srgb_encode((double)i / (ENCODE_STEPS - 1));
        t->encode[i] = (uint8_t)lround(v * 255.0);
    }
    return t;
}

size_t kc_tonemap_bytes(const kc_tonemap *t) {
    return sizeof *t + sizeof(float) * ((size_t)t->max_code + 1);
}

double kc_tonemap_luminance(const kc_tonemap *t, double nits) { return eetf(t, nits); }

void kc_tonemap_destroy(kc_tonemap *t) {
    if (t == NULL) return;
    free(t->light);
    free(t);
}

/// Table lookup with linear interpolation at x * steps, x in 0...1 (clamped).
static inline float lookup(const float *table, int steps, float x) {
    float f = x * (float)steps;
    if (!(f > 0)) return table[0];
    if (f >= (float)steps) return table[steps];
    int i = (int)f;
    float w = f - (float)i;
    return table[i] + (table[i + 1] - table[i]) * w;
}

/// Steps 2 and 3 on one pixel's display light (cd/m², the source primaries): its B, G, R bytes.
static inline void finish(const kc_tonemap *t, float r, float g, float b, uint8_t *out) {
    float m = r > g ? r : g;
    if (b > m) m = b;
    float u = sqrtf(m * (1.0f / 10000.0f));
    float scale = lookup(t->ratio, RATIO_STEPS, u) / (float)t->sdr_white;
    r *= scale; g *= scale; b *= scale;
    const float *x = t->matrix;
    float rr = x[0] * r + x[1] * g + x[2] * b;
    float gg = x[3] * r + x[4] * g + x[5] * b;
    float bb = x[6] * r + x[7] * g + x[8] * b;
    const float top = (float)(ENCODE_STEPS - 1);
    rr = rr < 0 ? 0 : rr > 1 ? 1 : rr;
    gg = gg < 0 ? 0 : gg > 1 ? 1 : gg;
    bb = bb < 0 ? 0 : bb > 1 ? 1 : bb;
    out[0] = t->encode[(int)(bb * top + 0.5f)];
    out[1] = t->encode[(int)(gg * top + 0.5f)];
    out[2] = t->encode[(int)(rr * top + 0.5f)];
}

/// Step 1 on three codes, then the rest.
static inline void map_pixel(const kc_tonemap *t, unsigned cr, unsigned cg, unsigned cb, uint8_t *out) {
    if (cr > t->max_code) cr = t->max_code;
    if (cg > t->max_code) cg = t->max_code;
    if (cb > t->max_code) cb = t->max_code;
    float r = t->light[cr], g = t->light[cg], b = t->light[cb];
    if (t->transfer == KC_HDR_HLG) {
        float ys = 0.2627f * r + 0.6780f * g + 0.0593f * b;
        float k = t->hlg_peak * lookup(t->gain, GAIN_STEPS, sqrtf(ys));
        r *= k; g *= k; b *= k;
    }
    finish(t, r, g, b, out);
}

void kc_tonemap_rows16(const kc_tonemap *t, uint8_t *rows, size_t stride, int width, int height, int channels) {
    unsigned max = t->max_code;
    for (int y = 0; y < height; y++) {
        uint8_t *row = rows + (size_t)y * stride;
        const uint8_t *in = row;
        uint8_t *out = row;
        for (int x = 0; x < width; x++, in += 2 * channels, out += 4) {
            // Every sample of the pixel is read before its output (at or before it) is written.
            unsigned r = (unsigned)in[0] | (unsigned)in[1] << 8;
            unsigned g = (unsigned)in[2] | (unsigned)in[3] << 8;
            unsigned b = (unsigned)in[4] | (unsigned)in[5] << 8;
            unsigned a = channels == 4 ? ((unsigned)in[6] | (unsigned)in[7] << 8) : max;
            if (a > max) a = max;
            uint8_t px[3];
            map_pixel(t, r, g, b, px);
            out[0] = px[0]; out[1] = px[1]; out[2] = px[2];
            out[3] = (uint8_t)((a * 255u + max / 2) / max);
        }
    }
}

void kc_tonemap_bgra8(const kc_tonemap *t, uint32_t *pixels, size_t count) {
    uint8_t *p = (uint8_t *)pixels;
    for (size_t i = 0; i < count; i++, p += 4) {
        uint8_t px[3];
        map_pixel(t, p[2], p[1], p[0], px);
        p[0] = px[0]; p[1] = px[1]; p[2] = px[2];
    }
}
