// SPDX-License-Identifier: Apache-2.0
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
    /// The library needed more working memory than the limit it was given
    /// (kc_jpeg_set_memory_limit); see the message.
    KC_IMG_OVER_BUDGET = 6,
};

/// Longest message or warning kept (libjpeg's JMSG_LENGTH_MAX), including the NUL.
#define KC_IMG_MESSAGE_MAX 200
/// How many warnings a handle keeps; later ones are only counted.
#define KC_IMG_WARNINGS_MAX 8

// MARK: - JPEG (libjpeg-turbo, libjpeg 6.2 API)

/// A libjpeg decompressor plus its error state. Opaque.
typedef struct kc_jpeg kc_jpeg;

/// The most scans a JPEG may have. libjpeg-turbo advises a limit for untrusted input (djpeg
/// -maxscans): every scan of a progressive JPEG passes over the coefficients of the whole
/// image, so a small file repeating a tiny scan thousands of times costs seconds of CPU.
/// A normal progressive JPEG has about 10 scans. Scan 1001 is refused (KC_IMG_UNSUPPORTED).
#define KC_JPEG_MAX_SCANS 1000

/// The most passes a JPEG's scans may make over its 8x8 blocks, on average: each scan costs a
/// pass over every block of the components it carries (a tiny scan of one coefficient bit as
/// much as a full one), so the sum over the scans of their components' blocks, counted through
/// libjpeg's progress monitor as each SOS marker is read, may not pass this many times the
/// blocks of the whole image. libjpeg's own progressive script makes about 5 passes per block
/// (6 over luma, 4 over chroma), a sequential file 1. The scan that would pass the limit is
/// refused (KC_IMG_UNSUPPORTED) before its data is decoded, so a decode costs at most this
/// many passes over an image the memory budget admits.
#define KC_JPEG_MAX_BLOCK_PASSES 32

/// JPEG colour spaces as libjpeg's J_COLOR_SPACE names them (jpeg_color_space).
enum {
    KC_JPEG_CS_UNKNOWN = 0,
    KC_JPEG_CS_GRAYSCALE = 1,
    KC_JPEG_CS_RGB = 2,
    KC_JPEG_CS_YCBCR = 3,
    KC_JPEG_CS_CMYK = 4,
    KC_JPEG_CS_YCCK = 5,
};

/// The most bytes of APP2 ICC_PROFILE data kept (4 MiB): past it the segments are skipped and
/// the header says KC_JPEG_ICC_TOO_LARGE.
#define KC_JPEG_ICC_MAX (4 << 20)

/// Why a JPEG's ICC_PROFILE segments give no profile (kc_jpeg_header.icc_problem).
enum {
    /// No problem (there is a profile, or there are no ICC_PROFILE segments).
    KC_JPEG_ICC_NONE = 0,
    /// Their data adds up to more than KC_JPEG_ICC_MAX bytes (icc_length has the total).
    KC_JPEG_ICC_TOO_LARGE = 1,
    /// Their sequence numbers are missing, repeated, 0, past their count, or their counts differ.
    KC_JPEG_ICC_MALFORMED = 2,
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
    /// jpeg_has_multiple_scans: progressive, or sequential with components in separate scans.
    /// Such a file is decoded through a whole-image coefficient buffer that libjpeg fills
    /// with every scan before the first row comes out.
    int multiple_scans;
    /// The size of that buffer in bytes when multiple_scans (0 otherwise): over the
    /// components, width_in_blocks x height_in_blocks (each rounded up to the sampling factor,
    /// as jdcoefct.c does) x 128 bytes (64 coefficients of 2 bytes). It does not depend on
    /// the DCT scale: 6 bytes per pixel at 4:4:4, 3 at 4:2:0, 2 for grayscale.
    size_t coefficient_bytes;
    /// The first APP1 segment whose payload starts with "Exif\0\0" (payload only, without the
    /// marker and length bytes), or NULL. Owned by the handle, valid until kc_jpeg_destroy.
    const uint8_t *exif;
    size_t exif_length;
    /// The embedded ICC profile: the APP2 "ICC_PROFILE" segments' data joined in the order of
    /// their sequence numbers (ICC.1:2010 annex B.4), or NULL. Owned by the handle, valid until
    /// kc_jpeg_destroy. Every other APP2 segment (MPF, FlashPix) is skipped unread.
    const uint8_t *icc;
    /// Its length; with icc NULL and icc_problem KC_JPEG_ICC_TOO_LARGE, the segments' total.
    size_t icc_length;
    /// KC_JPEG_ICC_*: why ICC_PROFILE segments gave no profile.
    int icc_problem;
} kc_jpeg_header;

/// A decompressor reading `file` from its current position (jpeg_stdio_src). The caller keeps
/// ownership of `file` and must keep it open until kc_jpeg_destroy. NULL only when out of memory.
kc_jpeg *kc_jpeg_create_file(FILE *file);
/// A decompressor reading `size` bytes at `data` (jpeg_mem_src). The bytes are not copied and
/// must stay valid until kc_jpeg_destroy. NULL only when out of memory.
kc_jpeg *kc_jpeg_create_memory(const void *data, size_t size);
/// jpeg_read_header, keeping the first APP1 "Exif" segment (at most 65533 bytes, all a segment
/// holds) and the APP2 "ICC_PROFILE" segments (at most KC_JPEG_ICC_MAX bytes in all, joined
/// into one profile); every other APPn and COM segment is skipped unread.
/// A file that ends inside its headers is "Premature end of JPEG file (the file is truncated)".
int kc_jpeg_read_header(kc_jpeg *jpeg, kc_jpeg_header *header);
/// With `keep` 1, a CMYK or YCCK file's output rows are its C, M, Y, K samples as libjpeg
/// decodes them (Adobe-inverted when saw_adobe_marker), 4 bytes a pixel, for a colour transform
/// of the caller's; with 0 (the default) they are converted to B,G,R,0xFF as kc_jpeg_read_pixels
/// says. Call before kc_jpeg_start.
void kc_jpeg_keep_cmyk(kc_jpeg *jpeg, int keep);
/// Limits libjpeg's working memory (cinfo->mem->max_memory_to_use) to `bytes`, 0 for no
/// limit. libjpeg-turbo (jmemnobs.c) consults it when it allocates its whole-image buffers
/// in jpeg_start_decompress; one that does not fit would need a backing store, which this
/// build does not have, and kc_jpeg_start fails with KC_IMG_OVER_BUDGET before the buffer is
/// allocated. Call before kc_jpeg_start.
///
/// The same limit bounds everything libjpeg's memory manager is asked for (the decoder's
/// modules, tables, row buffers, the saved EXIF, the whole-image buffers), counted when asked
/// for, what the pools already hold included: a request that would pass it fails the call
/// with KC_IMG_OVER_BUDGET before it is allocated. May be called before kc_jpeg_read_header.
void kc_jpeg_set_memory_limit(kc_jpeg *jpeg, size_t bytes);
/// The bytes libjpeg's memory manager was asked for and still holds (not its few bytes of
/// pool headers), and the most it held at once so far.
size_t kc_jpeg_memory_in_use(const kc_jpeg *jpeg);
size_t kc_jpeg_memory_peak(const kc_jpeg *jpeg);
/// Whether the output pass of a multi-scan file gives back (madvise MADV_DONTNEED) the pages of
/// the whole-image coefficient arrays it has read and will not read again, as the rows are
/// read (kc_jpeg_read_pixels, kc_jpeg_read_rows): 1 (the default) or 0 to keep them all to
/// the end (for comparing the two). The rows given back are never read again, so the pixels
/// are the same either way; the memory counts above do not change (it stays allocated).
void kc_jpeg_release_coefficients(kc_jpeg *jpeg, int release);
/// The bytes of coefficient pages given back so far.
size_t kc_jpeg_coefficients_released(const kc_jpeg *jpeg);
/// Whether the whole-image coefficient arrays of a multi-scan file are advised for transparent
/// huge pages when jpeg_start_decompress allocates them (madvise MADV_HUGEPAGE on their 2 MiB-
/// aligned part): 1 (the default) or 0 (for comparing the two). Set before kc_jpeg_start. The
/// pixels and the memory counts are the same either way; the kernel takes far fewer page
/// faults filling them (see kc_jpeg.c).
void kc_jpeg_use_huge_pages(kc_jpeg *jpeg, int use);
/// The bytes of coefficient arrays advised for huge pages (0 for a single-scan file, for arrays
/// under 4 MiB, or when the kernel refused the advice: no transparent huge pages).
size_t kc_jpeg_coefficients_in_huge_pages(const kc_jpeg *jpeg);
/// Sets the DCT scale `scale_num`/8 (1...16, libjpeg-turbo's supported factors), the output
/// colour space and calls jpeg_start_decompress. The output size is ceil(width * scale_num / 8)
/// x ceil(height * scale_num / 8) pixels (jpeg_calc_output_dimensions) and is stored in
/// *out_width / *out_height. A multi-scan file is read to its end here: more than
/// KC_JPEG_MAX_SCANS scans is KC_IMG_UNSUPPORTED, a coefficient buffer over the memory limit
/// KC_IMG_OVER_BUDGET, and a file that ends before its last scan is complete is truncated.
int kc_jpeg_start(kc_jpeg *jpeg, int scale_num, int *out_width, int *out_height);
/// Reads every output row into `dest` (out_height rows of `bytes_per_row` bytes, at least
/// out_width * 4) as B,G,R,0xFF. Gray is expanded, YCbCr converted by libjpeg-turbo
/// (JCS_EXT_BGRX); CMYK and YCCK are converted here (see kc_jpeg.c for the formula).
///
/// The end of the file: a file whose data ends before the image does is an error,
/// "Premature end of JPEG file (the file is truncated)"; a Huffman-coded file whose data is
/// all there but that ends without its EOI marker (the last 2 bytes) decodes, and
/// kc_jpeg_eoi_missing says so. libjpeg tells the two apart: when its source runs dry it
/// warns (JWRN_JPEG_EOF) and supplies an EOI; if the decoder then still needs bits it warns
/// again (a corrupt-data warning: "premature end of data segment", "bad Huffman code"), and
/// a multi-scan file shows scans missing in its progression state (coef_bits) or a
/// component never scanned. Any warning after the end of the data is the truncation error.
/// An arithmetic-coded file supplies zeros at the end of its data without a warning, so
/// there any end of data before EOI is the truncation error.
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
/// 1 when the data ran out where the EOI marker should be and the image was complete (see
/// kc_jpeg_read_pixels), else 0.
int kc_jpeg_eoi_missing(const kc_jpeg *jpeg);
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

/// The largest eXIf chunk kept, in bytes: 64 KiB, what a JPEG APP1 segment can hold (a PNG's
/// EXIF is almost always a JPEG's, carried over). A longer one is skipped with a warning and
/// the image is shown unturned.
#define KC_PNG_EXIF_MAX 65536
/// The largest iCCP profile libpng may inflate, in bytes (4 MiB): a longer one is refused
/// (a warning) and the picture shown as sRGB.
#define KC_PNG_ICC_MAX (4 << 20)
/// png_set_chunk_cache_max: how many text, sPLT or unknown chunks libpng would store at most.
/// The reader skips them all unread (see kc_png.c), so this is only a second guard.
#define KC_PNG_CHUNK_CACHE_MAX 16
/// Compressed bytes the call that reads a PNG's final row may read beyond the row's own size
/// (rows + 1 filter byte, + 1/64): 64 KiB. Past the last row, libpng inflates what image data
/// is left only to find the end of the zlib stream; deflate expands at most about 1032 times,
/// so this bounds that work to about 66 MB of output (about 0.15 s here) whatever the file
/// holds. Past it the read stops and the image, already complete, is shown with a warning.
#define KC_PNG_TRAILING_SLACK 65536

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
    /// The iCCP profile, inflated by libpng (which checks its header and length), or NULL.
    /// Owned by the handle.
    const uint8_t *icc;
    size_t icc_length;
    /// 1 when the file has an sRGB chunk.
    int has_srgb;
    /// 1 when it has a valid cHRM chunk: white x, y, red x, y, green x, y, blue x, y.
    int has_chrm;
    double chrm[8];
    /// 1 when it has a cICP chunk (PNG third edition, 11.3.2.6): colour primaries, transfer
    /// function, matrix coefficients, video full range flag (ITU-T H.273).
    int has_cicp;
    uint8_t cicp[4];
} kc_png_header;

/// A reader taking bytes from `file` (fread). libpng keeps nothing but what the picture needs:
/// IHDR, PLTE, tRNS, gAMA, sRGB, cHRM, cICP, an iCCP of at most KC_PNG_ICC_MAX bytes inflated and
/// an eXIf of at most KC_PNG_EXIF_MAX bytes; every other chunk (tEXt, zTXt, iTXt, sPLT, unknown
/// chunks...) is skipped unread, never inflated, and the
/// chunks after the image data are not read. Every byte libpng allocates (with zlib's inflate
/// state) is counted against the limit of kc_png_set_memory_limit. The caller keeps ownership of `file` and keeps it
/// open until kc_png_destroy. NULL only when out of memory.
kc_png *kc_png_create_file(FILE *file);
/// A reader taking `size` bytes at `data`, not copied, valid until kc_png_destroy.
kc_png *kc_png_create_memory(const void *data, size_t size);
/// Checks the signature and runs png_read_info. libpng's own width/height limits are lifted
/// (png_set_user_limits 0x7fffffff) so that the caller's limits (side, pixels, memory) are what
/// refuse a huge image, with a message that gives its size. Nothing image-sized is allocated.
int kc_png_read_header(kc_png *png, kc_png_header *header);
/// Sets the transforms (palette/gray/tRNS expansion, strip 16 to 8 bits, gray to RGB, BGR order,
/// 0xFF filler for opaque images, gamma to a 2.2 screen when the file has gAMA, Adam7 handling)
/// and reads the whole image into `dest`: `height` rows of `bytes_per_row` bytes (at least
/// width * 4), B,G,R,X or B,G,R,A.
int kc_png_read_pixels(kc_png *png, void *dest, size_t bytes_per_row);
/// For reading a non-interlaced image a few rows at a time instead (a caller that keeps a ring
/// of rows): sets the same transforms and starts reading (png_read_update_info). An
/// interlaced image is KC_IMG_MISUSE (its rows come in seven passes).
int kc_png_start(kc_png *png);
/// Reads the next `count` rows (png_read_row) into rows[0...count-1], each width * 4 bytes,
/// converted as kc_png_read_pixels does. Asking for more rows than are left is KC_IMG_MISUSE;
/// a truncated or corrupt file is an error as in kc_png_read_pixels.
int kc_png_read_rows(kc_png *png, uint8_t *const *rows, int count);
/// With `correct` 0, no gamma correction is set (for a caller that converts the colours with
/// the file's cHRM and gAMA or its profile); 1, the default, corrects gAMA for a 2.2 screen.
/// Call before kc_png_read_pixels or kc_png_start.
void kc_png_set_gamma_correction(kc_png *png, int correct);
/// Limits what libpng may hold at once, in bytes, counting what it holds already (0: no
/// limit, the default). An allocation that would pass it is refused: for what libpng needs, the
/// call fails with KC_IMG_OVER_BUDGET; for an ancillary chunk, the chunk is dropped with a
/// warning. May be called at any time (before kc_png_read_header to bound the header's chunks).
void kc_png_set_memory_limit(kc_png *png, size_t bytes);
/// The bytes libpng holds now (its structures, zlib's state and window, row buffers, eXIf).
size_t kc_png_memory_in_use(const kc_png *png);
/// The most it held at once so far, in bytes.
size_t kc_png_memory_peak(const kc_png *png);
const char *kc_png_error(const kc_png *png);
/// Warnings from libpng (png_warning, benign errors such as a bad gAMA chunk).
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
