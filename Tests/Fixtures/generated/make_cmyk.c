// SPDX-License-Identifier: Apache-2.0
// Makes cmyk-plain.jpg (CMYK, no Adobe marker, samples not inverted) and ycck-adobe.jpg (YCCK
// with the Adobe APP14 marker, transform 2, samples inverted as Adobe writes them) with
// libjpeg-turbo. Run once from this folder:  cc make_cmyk.c -ljpeg -o /tmp/make_cmyk && /tmp/make_cmyk
// The 64x48 picture is the four CMYK quadrants of make_fixtures.py.
#include <stdio.h>
#include <stdlib.h>
#include <jpeglib.h>

static const unsigned char quadrants[4][4] = {
    {0, 255, 255, 0}, {255, 0, 255, 64}, {0, 0, 0, 128}, {200, 50, 0, 30}};

static int write_file(const char *path, J_COLOR_SPACE jpeg_space, int adobe) {
    enum { W = 64, H = 48 };
    FILE *f = fopen(path, "wb");
    if (!f) { perror(path); return 1; }
    struct jpeg_compress_struct c;
    struct jpeg_error_mgr err;
    c.err = jpeg_std_error(&err);
    jpeg_create_compress(&c);
    jpeg_stdio_dest(&c, f);
    c.image_width = W;
    c.image_height = H;
    c.input_components = 4;
    c.in_color_space = JCS_CMYK;
    jpeg_set_defaults(&c);
    jpeg_set_colorspace(&c, jpeg_space); // JCS_YCCK turns the Adobe marker on
    c.write_Adobe_marker = adobe;
    jpeg_set_quality(&c, 95, TRUE);
    jpeg_start_compress(&c, TRUE);
    unsigned char row[W * 4];
    while (c.next_scanline < H) {
        int y = (int)c.next_scanline;
        for (int x = 0; x < W; x++) {
            const unsigned char *q = quadrants[(y >= H / 2) * 2 + (x >= W / 2)];
            for (int i = 0; i < 4; i++) row[x * 4 + i] = adobe ? 255 - q[i] : q[i];
        }
        JSAMPROW p = row;
        jpeg_write_scanlines(&c, &p, 1);
    }
    jpeg_finish_compress(&c);
    jpeg_destroy_compress(&c);
    fclose(f);
    return 0;
}

int main(void) {
    return write_file("cmyk-plain.jpg", JCS_CMYK, 0) | write_file("ycck-adobe.jpg", JCS_YCCK, 1);
}
