#ifndef KC_IMAGE_H
#define KC_IMAGE_H
// setjmp-guarded steps of libjpeg-turbo (kc_jpeg.c) and libpng 1.6 (kc_png.c).
//
// libjpeg and libpng report fatal errors by calling an error handler that must not return;
// both files install handlers that longjmp back into the kc_ function that called the library,
// so the longjmp never crosses a Swift frame. Every kc_ function below returns KC_IMG_OK or an
// error code, with the library's message kept in the handle (kc_jpeg_error / kc_png_error).
// A handle owns everything the library allocated; kc_jpeg_destroy / kc_png_destroy free it on
// every path (after success, after an error, or half-way through).
//
// Pixel output is always 4 bytes per pixel, B,G,R,X (XRGB8888 as a little-endian uint32) for
// opaque images, or B,G,R,A with straight alpha (ARGB8888) when the header says has_alpha.
// The caller owns the destination buffer.

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/// Result codes of every kc_jpeg_ / kc_png_ call.
enum {
    KC_IMG_OK = 0,
    /// The library rejected the data (corrupt, truncated, or a bad header); see the message.
    KC_IMG_CORRUPT = 1,
    /// Valid data in a variant this build cannot decode (12-bit JPEG, lossless JPEG).
    KC_IMG_UNSUPPORTED = 2,
    /// malloc failed.
    KC_IMG_NO_MEMORY = 3,
    /// Called out of order (for example reading pixels before the header).
    KC_IMG_MISUSE = 4,
    /// A system call failed while writing (open, write, close); the message names it with errno.
    KC_IMG_IO_ERROR = 5,
};

/// Longest message or warning kept (libjpeg's JMSG_LENGTH_MAX), including the NUL.
#define KC_IMG_MESSAGE_MAX 200
/// How many warnings a handle keeps; later ones are only counted.
#define KC_IMG_WARNINGS_MAX 8

// MARK: - JPEG (libjpeg-turbo, libjpeg 6.2 API)

/// A libjpeg decompressor plus its error state. Opaque.
typedef struct kc_jpeg kc_jpeg;

/// JPEG colour spaces as libjpeg's J_COLOR_SPACE names them (jpeg_color_space).
enum {
    KC_JPEG_CS_UNKNOWN = 0,
    KC_JPEG_CS_GRAYSCALE = 1,
    KC_JPEG_CS_RGB = 2,
    KC_JPEG_CS_YCBCR = 3,
    KC_JPEG_CS_CMYK = 4,
    KC_JPEG_CS_YCCK = 5,
};

/// What jpeg_read_header found.
typedef struct kc_jpeg_header {
    /// image_width x image_height from the SOF marker, in pixels, as stored (no EXIF rotation).
    int width, height;
    /// num_components (1 gray, 3 YCbCr/RGB, 4 CMYK/YCCK).
    int components;
    /// jpeg_color_space as a KC_JPEG_CS_ value.
    int color_space;
    /// data_precision: bits per sample (8; 12 is refused with KC_IMG_UNSUPPORTED).
    int data_precision;
    /// saw_Adobe_marker: an APP14 "Adobe" segment was present (CMYK samples are then inverted).
    int saw_adobe_marker;
    /// progressive_mode and arith_code from the SOF marker (0 or 1).
    int progressive, arithmetic;
    /// The first APP1 segment whose payload starts with "Exif\0\0" (payload only, without the
    /// marker and length bytes), or NULL. Owned by the handle, valid until kc_jpeg_destroy.
    const uint8_t *exif;
    size_t exif_length;
} kc_jpeg_header;

/// A decompressor reading `file` from its current position (jpeg_stdio_src). The caller keeps
/// ownership of `file` and must keep it open until kc_jpeg_destroy. NULL only when out of memory.
kc_jpeg *kc_jpeg_create_file(FILE *file);
/// A decompressor reading `size` bytes at `data` (jpeg_mem_src). The bytes are not copied and
/// must stay valid until kc_jpeg_destroy. NULL only when out of memory.
kc_jpeg *kc_jpeg_create_memory(const void *data, size_t size);
/// jpeg_read_header, keeping APP1 segments (jpeg_save_markers JPEG_APP0+1, 0xFFFF) for EXIF.
int kc_jpeg_read_header(kc_jpeg *jpeg, kc_jpeg_header *header);
/// Sets the DCT scale `scale_num`/8 (1...16, libjpeg-turbo's supported factors), the output
/// colour space and calls jpeg_start_decompress. The output size is ceil(width * scale_num / 8)
/// x ceil(height * scale_num / 8) pixels (jpeg_calc_output_dimensions) and is stored in
/// *out_width / *out_height.
int kc_jpeg_start(kc_jpeg *jpeg, int scale_num, int *out_width, int *out_height);
/// Reads every output row into `dest` (out_height rows of `bytes_per_row` bytes, at least
/// out_width * 4) as B,G,R,0xFF. Gray is expanded, YCbCr converted by libjpeg-turbo
/// (JCS_EXT_BGRX); CMYK and YCCK are converted here (see kc_jpeg.c for the formula).
/// A file that ends before its last row ("Premature end of JPEG file") is an error.
int kc_jpeg_read_pixels(kc_jpeg *jpeg, void *dest, size_t bytes_per_row);
/// Reads the next `count` output rows (libjpeg's output_scanline on) into rows[0...count-1],
/// each out_width * 4 bytes, converted as kc_jpeg_read_pixels does. For a caller that takes
/// the image a few rows at a time (a ring of rows) instead of whole. Asking for more rows than
/// are left is KC_IMG_MISUSE; a truncated file is an error as in kc_jpeg_read_pixels.
int kc_jpeg_read_rows(kc_jpeg *jpeg, uint8_t *const *rows, int count);
/// Moves past the next `count` output rows without converting them. From row 0 this is
/// jpeg_skip_scanlines (libjpeg-turbo >= 1.5), which skips the IDCT and colour conversion of
/// whole iMCU rows and returns the same following rows as a full read; anywhere else the
/// rows are read into a scratch row and dropped.
int kc_jpeg_skip_rows(kc_jpeg *jpeg, int count);
/// The message of the last error ("" when none).
const char *kc_jpeg_error(const kc_jpeg *jpeg);
/// How many warnings libjpeg emitted (corrupt-data warnings that it recovered from).
int kc_jpeg_warning_count(const kc_jpeg *jpeg);
/// Warning number `index` (0 <= index < min(count, KC_IMG_WARNINGS_MAX)), or "".
const char *kc_jpeg_warning(const kc_jpeg *jpeg, int index);
/// jpeg_destroy_decompress and free. NULL is allowed.
void kc_jpeg_destroy(kc_jpeg *jpeg);

// MARK: - PNG (libpng 1.6)

/// A libpng reader plus its error state. Opaque.
typedef struct kc_png kc_png;

/// What png_read_info found (IHDR and the chunks before IDAT).
typedef struct kc_png_header {
    /// IHDR width x height in pixels.
    int width, height;
    /// IHDR bit depth (1, 2, 4, 8, 16) and colour type (0, 2, 3, 4, 6).
    int bit_depth, color_type;
    /// 1 for Adam7.
    int interlaced;
    /// 1 when the output has an alpha channel: colour type 4 or 6, or a tRNS chunk.
    int has_alpha;
    /// 1 when the file has a gAMA chunk (or sRGB, which implies one); `gamma` is its value
    /// (for example 0.45455).
    int has_gamma;
    double gamma;
    /// The eXIf chunk (a TIFF structure, "II*\0" or "MM\0*"), when it comes before IDAT,
    /// or NULL. Owned by the handle.
    const uint8_t *exif;
    size_t exif_length;
} kc_png_header;

/// A reader taking bytes from `file` (fread). The caller keeps ownership of `file` and keeps it
/// open until kc_png_destroy. NULL only when out of memory.
kc_png *kc_png_create_file(FILE *file);
/// A reader taking `size` bytes at `data`, not copied, valid until kc_png_destroy.
kc_png *kc_png_create_memory(const void *data, size_t size);
/// Checks the signature and runs png_read_info. libpng's own width/height limits are lifted
/// (png_set_user_limits 0x7fffffff) so that the caller's pixel budget is what refuses a huge image.
int kc_png_read_header(kc_png *png, kc_png_header *header);
/// Sets the transforms (palette/gray/tRNS expansion, strip 16 to 8 bits, gray to RGB, BGR order,
/// 0xFF filler for opaque images, gamma to a 2.2 screen when the file has gAMA, Adam7 handling)
/// and reads the whole image into `dest`: `height` rows of `bytes_per_row` bytes (at least
/// width * 4), B,G,R,X or B,G,R,A.
int kc_png_read_pixels(kc_png *png, void *dest, size_t bytes_per_row);
const char *kc_png_error(const kc_png *png);
/// Warnings from libpng (png_warning, benign errors such as a bad iCCP profile).
int kc_png_warning_count(const kc_png *png);
const char *kc_png_warning(const kc_png *png, int index);
/// png_destroy_read_struct and free. NULL is allowed.
void kc_png_destroy(kc_png *png);

/// Writes `width` x `height` pixels (rows `bytes_per_row` apart, 4 bytes per pixel, B,G,R,X or
/// B,G,R,A) as an 8-bit PNG to the open descriptor `fd`: colour type 2 (RGB, the X byte dropped)
/// or 6 (RGBA) when `has_alpha`. `compression_level` is zlib's 0...9. The descriptor is always
/// closed, on success and on error. On error the message is copied into `message`
/// (KC_IMG_MESSAGE_MAX bytes).
int kc_png_write_fd(int fd, const void *pixels, int width, int height, size_t bytes_per_row,
                    int has_alpha, int compression_level, char *message);

#endif
