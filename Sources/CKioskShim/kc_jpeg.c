// SPDX-License-Identifier: Apache-2.0
// JPEG decoding through libjpeg-turbo with every libjpeg error contained here.
//
// libjpeg reports a fatal error by calling err->error_exit, which must not return. Ours formats
// the message into the handle and longjmps back to the kc_jpeg_ function that called into the
// library (each sets its own setjmp first), which returns an error code. All memory libjpeg
// allocated lives in its pools and goes with jpeg_destroy_decompress in kc_jpeg_destroy.
//
// Memory: libjpeg's memory manager is wrapped (its alloc_small, alloc_large, alloc_sarray,
// alloc_barray and request_virt_* entries, and free_pool), so every request of the decoder's
// modules is counted per pool and one that would pass the limit (kc_jpeg_set_memory_limit)
// fails the call with KC_IMG_OVER_BUDGET before it is allocated. Markers: only the first
// APP1 "Exif" segment (at most 65533 bytes, all a segment can hold) and the APP2 "ICC_PROFILE"
// segments (at most KC_JPEG_ICC_MAX bytes in all) are kept, through marker processors of our
// own; every other APPn and COM segment is skipped unread (libjpeg's default).
// Work: libjpeg's progress monitor counts, scan by scan, the 8x8 blocks each scan passes over
// and refuses a file whose scans would pass over its blocks more than KC_JPEG_MAX_BLOCK_PASSES
// times on average, or that has more than KC_JPEG_MAX_SCANS scans.
// The output pass of a multi-scan file gives back the whole-image coefficient rows it has
// read (madvise MADV_DONTNEED, see release_read_coefficients), so the coefficients and the
// rows written from them do not add up: the decode's peak is the coefficients alone. Those
// arrays are advised for transparent huge pages when they are allocated (advise_huge_pages):
// filling them then takes a few dozen page faults instead of tens of thousands.
// References: libjpeg.txt (libjpeg-turbo) "Error handling", "Decompression parameter selection",
// "Special markers"; jerror.h for the message codes.
#include "kc_image.h"

#include <limits.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <jpeglib.h>
#include <jerror.h>

struct kc_jpeg {
    struct jpeg_decompress_struct cinfo;
    struct jpeg_error_mgr err;
    /// Called by libjpeg at every scan and every iMCU row: the scan limit.
    struct jpeg_progress_mgr progress;
    jmp_buf jump;
    int header_read;
    /// 1 from the call of jpeg_start_decompress on (the source running dry before that is a
    /// file cut in its headers).
    int decompressing;
    int started;
    /// 1 once the source ran dry (JWRN_JPEG_EOF: libjpeg supplied an EOI marker). Any
    /// warning after that means the image needed data the file does not have.
    int eof_reached;
    /// Bit c set when component c appeared in a scan (for a multi-scan sequential file cut
    /// between its scans).
    unsigned scanned_components;
    /// 1 when the output is CMYK that we convert (JPEG colour space CMYK or YCCK).
    int cmyk;
    /// One CMYK output row (JPOOL_IMAGE, freed with the decompressor).
    JSAMPARRAY cmyk_row;
    /// One output row read and thrown away by kc_jpeg_skip_rows (JPOOL_IMAGE), or NULL.
    JSAMPARRAY scratch_row;
    int code;
    char message[KC_IMG_MESSAGE_MAX];
    int warning_count;
    char warnings[KC_IMG_WARNINGS_MAX][KC_IMG_MESSAGE_MAX];
    /// The memory manager's entries we wrap (see "Memory" above), as libjpeg set them.
    struct jpeg_memory_mgr library_mem;
    /// Bytes requested from each pool (JPOOL_PERMANENT, JPOOL_IMAGE) and not freed, their
    /// peak, and the limit on their sum (0: none).
    size_t pool_bytes[JPOOL_NUMPOOLS], memory_peak, memory_limit;
    /// The first APP1 "Exif" segment's payload (JPOOL_IMAGE) and its length, or NULL.
    uint8_t *exif;
    size_t exif_length;
    /// The APP2 "ICC_PROFILE" segments kept (JPOOL_IMAGE): each one's data (after its 14-byte
    /// header), length and sequence number (1...count), in file order; how many there are,
    /// the count they give (0 until the first), the bytes of all of them (kept or not), and
    /// why they cannot make a profile (KC_JPEG_ICC_*).
    uint8_t *icc_data[256];
    size_t icc_size[256];
    int icc_seq[256];
    int icc_chunks, icc_count;
    size_t icc_total;
    int icc_problem;
    /// The joined profile (JPOOL_IMAGE), or NULL.
    uint8_t *icc;
    size_t icc_length;
    /// 1: CMYK output rows are the C, M, Y, K samples as decoded (kc_jpeg_keep_cmyk).
    int keep_cmyk;
    /// The scan counted last (input_scan_number), the blocks passed over by the scans so far,
    /// and the most allowed (KC_JPEG_MAX_BLOCK_PASSES x the blocks of the image).
    int counted_scan;
    unsigned long long block_passes, max_block_passes;
    /// The whole-image coefficient arrays (jdcoefct.c asks for one per component, in component
    /// order), their size in block rows and blocks per row, the block rows given back so far,
    /// and where the part of each not given back yet starts (a row may end inside a page).
    /// coef_count over MAX_COMPONENTS: more arrays than expected, nothing is given back.
    jvirt_barray_ptr coef_arrays[MAX_COMPONENTS];
    JDIMENSION coef_rows[MAX_COMPONENTS], coef_per_row[MAX_COMPONENTS], coef_released_rows[MAX_COMPONENTS];
    uintptr_t coef_pending_from[MAX_COMPONENTS], coef_run_end[MAX_COMPONENTS];
    int coef_count;
    /// 0: keep every coefficient to the end (kc_jpeg_release_coefficients).
    int coef_release;
    size_t coef_released_bytes;
    /// 0: leave the coefficient arrays in ordinary pages (kc_jpeg_use_huge_pages); the bytes of
    /// them advised for transparent huge pages.
    int coef_huge;
    size_t coef_huge_bytes;
};

static kc_jpeg *handle_of(j_common_ptr cinfo) { return (kc_jpeg *)cinfo->client_data; }

/// The one message for a file whose data ends before the image does.
static const char truncated_message[] = "Premature end of JPEG file (the file is truncated)";

/// Fails the current kc_jpeg_ call with the truncation error.
static void fail_truncated(kc_jpeg *h) {
    snprintf(h->message, sizeof h->message, "%s", truncated_message);
    h->code = KC_IMG_CORRUPT;
    longjmp(h->jump, 1);
}

/// Records a fatal error with libjpeg's message and its class, then returns to the setjmp.
static void kc_jpeg_error_exit(j_common_ptr cinfo) {
    kc_jpeg *h = handle_of(cinfo);
    char text[JMSG_LENGTH_MAX];
    (*cinfo->err->format_message)(cinfo, text);
    int code = KC_IMG_CORRUPT;
    switch (cinfo->err->msg_code) {
    case JERR_OUT_OF_MEMORY: code = KC_IMG_NO_MEMORY; break;
    case JERR_NO_BACKING_STORE:
        // jmemnobs.c: a whole-image buffer over max_memory_to_use (kc_jpeg_set_memory_limit),
        // refused before it is allocated.
        code = KC_IMG_OVER_BUDGET;
        snprintf(text, sizeof text, "libjpeg's whole-image buffers do not fit in its memory limit of %ld bytes",
                 cinfo->mem->max_memory_to_use);
        break;
    case JERR_BAD_PRECISION:
    case JERR_SOF_UNSUPPORTED:
    case JERR_NOT_COMPILED: code = KC_IMG_UNSUPPORTED; break;
    default: break;
    }
    // data_precision is set from the SOF marker before the library checks it, whichever call
    // (jpeg_read_header or jpeg_start_decompress) finds it unsupported.
    if (cinfo->is_decompressor) {
        int precision = ((j_decompress_ptr)cinfo)->data_precision;
        if (precision != 0 && precision != 8) {
            code = KC_IMG_UNSUPPORTED;
            snprintf(text, sizeof text, "%d-bit JPEG (data precision %d) is not supported", precision, precision);
        }
    }
    h->code = code;
    snprintf(h->message, sizeof h->message, "%s", text);
    longjmp(h->jump, 1);
}

/// Warnings (msg_level -1) are kept; trace messages (>= 0) are dropped.
///
/// The end of the data (JWRN_JPEG_EOF, "Premature end of JPEG file": the source ran dry and
/// libjpeg supplied an EOI marker) is where a truncated file and one that only lacks its EOI
/// part ways (kc_image.h, kc_jpeg_read_pixels). In the headers it is the truncation error;
/// in an arithmetic-coded file too (its decoder pads with zeros silently). Otherwise it is
/// noted, and any warning after it is the truncation error: libjpeg would fill what is
/// missing with grey, and a show must skip a truncated file rather than display half of it.
static void kc_jpeg_emit_message(j_common_ptr cinfo, int msg_level) {
    if (msg_level >= 0) return;
    kc_jpeg *h = handle_of(cinfo);
    if (cinfo->err->msg_code == JWRN_JPEG_EOF) {
        j_decompress_ptr d = (j_decompress_ptr)cinfo;
        if (!h->decompressing || d->arith_code) fail_truncated(h);
        h->eof_reached = 1;
        cinfo->err->num_warnings++;
        return;
    }
    if (h->eof_reached) fail_truncated(h);
    if (h->warning_count < KC_IMG_WARNINGS_MAX) {
        char text[JMSG_LENGTH_MAX];
        (*cinfo->err->format_message)(cinfo, text);
        snprintf(h->warnings[h->warning_count], KC_IMG_MESSAGE_MAX, "%s", text);
    }
    h->warning_count++;
    cinfo->err->num_warnings++;
}

/// libjpeg's default prints to stderr; everything goes through the handle instead.
static void kc_jpeg_output_message(j_common_ptr cinfo) { (void)cinfo; }

/// Notes the components of the current scan (cur_comp_info, valid from its SOS marker on).
static void note_scanned_components(kc_jpeg *h) {
    j_decompress_ptr c = &h->cinfo;
    for (int i = 0; i < c->comps_in_scan && i < MAX_COMPS_IN_SCAN; i++) {
        if (c->cur_comp_info[i] != NULL && c->cur_comp_info[i]->component_index < 32)
            h->scanned_components |= 1u << c->cur_comp_info[i]->component_index;
    }
}

/// The progress monitor: libjpeg calls it at every new scan while it reads a multi-scan file
/// (jpeg_start_decompress: before each step of input, so right after an SOS marker, before
/// that scan's data) and at every iMCU row. Refuses scan KC_JPEG_MAX_SCANS + 1 before any of
/// its data is decoded, as djpeg -maxscans does.
/// Counts the scan libjpeg has just read the SOS marker of (once per scan): the blocks of each
/// of its components, and refuses it before its data is decoded when the passes over the
/// image's blocks summed over the scans so far exceed the limit.
static void count_scan(kc_jpeg *h) {
    j_decompress_ptr c = &h->cinfo;
    if (c->input_scan_number == h->counted_scan || c->comps_in_scan <= 0) return;
    h->counted_scan = c->input_scan_number;
    if (h->max_block_passes == 0) {
        unsigned long long blocks = 0;
        for (int ci = 0; ci < c->num_components; ci++)
            blocks += (unsigned long long)c->comp_info[ci].width_in_blocks * c->comp_info[ci].height_in_blocks;
        h->max_block_passes = blocks * KC_JPEG_MAX_BLOCK_PASSES;
    }
    for (int i = 0; i < c->comps_in_scan && i < MAX_COMPS_IN_SCAN; i++) {
        const jpeg_component_info *k = c->cur_comp_info[i];
        if (k != NULL) h->block_passes += (unsigned long long)k->width_in_blocks * k->height_in_blocks;
    }
    if (h->block_passes > h->max_block_passes) {
        snprintf(h->message, sizeof h->message,
                 "its first %d scans already pass over the image's 8x8 blocks more than %d times "
                 "(a progressive JPEG passes over each about 6 times; refused for the CPU time)",
                 c->input_scan_number, KC_JPEG_MAX_BLOCK_PASSES);
        h->code = KC_IMG_UNSUPPORTED;
        longjmp(h->jump, 1);
    }
}

static void kc_jpeg_progress_monitor(j_common_ptr cinfo) {
    kc_jpeg *h = handle_of(cinfo);
    if (!cinfo->is_decompressor) return;
    note_scanned_components(h);
    count_scan(h);
    int scans = h->cinfo.input_scan_number;
    if (scans > KC_JPEG_MAX_SCANS) {
        snprintf(h->message, sizeof h->message,
                 "more than %d scans (a progressive JPEG has about 10; refused, as libjpeg-turbo advises for untrusted files, "
                 "because each scan costs a pass over the whole image)", KC_JPEG_MAX_SCANS);
        h->code = KC_IMG_UNSUPPORTED;
        longjmp(h->jump, 1);
    }
}

// MARK: - Memory accounting

/// Counts `bytes` more in `pool`, or fails the current call (KC_IMG_OVER_BUDGET) when that
/// passes the limit. An unknown pool is left to libjpeg to refuse.
static void charge(j_common_ptr cinfo, int pool, size_t bytes) {
    kc_jpeg *h = handle_of(cinfo);
    if (pool < 0 || pool >= JPOOL_NUMPOOLS) return;
    size_t in_use = h->pool_bytes[JPOOL_PERMANENT] + h->pool_bytes[JPOOL_IMAGE];
    if (h->memory_limit != 0 && (bytes > h->memory_limit || in_use > h->memory_limit - bytes)) {
        snprintf(h->message, sizeof h->message,
                 "libjpeg asked for %zu bytes more with %zu in use, over its memory limit of %zu bytes",
                 bytes, in_use, h->memory_limit);
        h->code = KC_IMG_OVER_BUDGET;
        longjmp(h->jump, 1);
    }
    h->pool_bytes[pool] += bytes;
    if (in_use + bytes > h->memory_peak) h->memory_peak = in_use + bytes;
}

/// rows x width of a sample or block array, with its row pointers (jmemmgr.c allocates them
/// the same way). JDIMENSIONs are 32 bits, so the product fits a 64-bit size_t.
static size_t array_bytes(JDIMENSION per_row, JDIMENSION rows, size_t element, size_t pointer) {
    return (size_t)per_row * rows * element + (size_t)rows * pointer;
}

static void *kc_alloc_small(j_common_ptr cinfo, int pool, size_t bytes) {
    charge(cinfo, pool, bytes);
    return (*handle_of(cinfo)->library_mem.alloc_small)(cinfo, pool, bytes);
}

static void *kc_alloc_large(j_common_ptr cinfo, int pool, size_t bytes) {
    charge(cinfo, pool, bytes);
    return (*handle_of(cinfo)->library_mem.alloc_large)(cinfo, pool, bytes);
}

static JSAMPARRAY kc_alloc_sarray(j_common_ptr cinfo, int pool, JDIMENSION per_row, JDIMENSION rows) {
    charge(cinfo, pool, array_bytes(per_row, rows, sizeof(JSAMPLE), sizeof(JSAMPROW)));
    return (*handle_of(cinfo)->library_mem.alloc_sarray)(cinfo, pool, per_row, rows);
}

static JBLOCKARRAY kc_alloc_barray(j_common_ptr cinfo, int pool, JDIMENSION per_row, JDIMENSION rows) {
    charge(cinfo, pool, array_bytes(per_row, rows, sizeof(JBLOCK), sizeof(JBLOCKROW)));
    return (*handle_of(cinfo)->library_mem.alloc_barray)(cinfo, pool, per_row, rows);
}

/// A virtual array is allocated whole by realize_virt_arrays (no backing store in this build):
/// counted when it is asked for, before that.
static jvirt_sarray_ptr kc_request_virt_sarray(j_common_ptr cinfo, int pool, boolean pre_zero,
                                               JDIMENSION per_row, JDIMENSION rows, JDIMENSION max_access) {
    charge(cinfo, pool, array_bytes(per_row, rows, sizeof(JSAMPLE), sizeof(JSAMPROW)));
    return (*handle_of(cinfo)->library_mem.request_virt_sarray)(cinfo, pool, pre_zero, per_row, rows, max_access);
}

static jvirt_barray_ptr kc_request_virt_barray(j_common_ptr cinfo, int pool, boolean pre_zero,
                                               JDIMENSION per_row, JDIMENSION rows, JDIMENSION max_access) {
    charge(cinfo, pool, array_bytes(per_row, rows, sizeof(JBLOCK), sizeof(JBLOCKROW)));
    kc_jpeg *h = handle_of(cinfo);
    jvirt_barray_ptr array =
        (*h->library_mem.request_virt_barray)(cinfo, pool, pre_zero, per_row, rows, max_access);
    if (h->coef_count < MAX_COMPONENTS) {
        h->coef_arrays[h->coef_count] = array;
        h->coef_rows[h->coef_count] = rows;
        h->coef_per_row[h->coef_count] = per_row;
    }
    if (h->coef_count <= MAX_COMPONENTS) h->coef_count++;
    return array;
}

/// Pages of a transparent huge page (x86-64 and arm64 with 4 KiB pages: 2 MiB, the PMD size).
#define KC_JPEG_HUGE_PAGE ((uintptr_t)2 << 20)
/// Arrays up to this size are one allocation: jmemmgr.c (alloc_barray) cuts an array in chunks
/// of at most MAX_ALLOC_CHUNK (1e9 bytes in libjpeg-turbo) less a header.
#define KC_JPEG_ONE_CHUNK_MAX ((size_t)512 << 20)

/// Advises the kernel to back each whole-image coefficient array with transparent huge pages
/// (madvise MADV_HUGEPAGE, madvise(2); the kernel's transparent_hugepage "madvise" and
/// "always" modes honour it): the 2 MiB-aligned part of each array, before libjpeg touches
/// it. libjpeg zeroes and fills these arrays a row at a time; in 4 KiB pages that is a page
/// fault every 32 blocks, about 21,000 for a 14.7 MP 4:4:4 photo and a fifth of its decode
/// time, in 2 MiB pages 512 times fewer. Only the address of row 0 is asked for
/// (access_virt_barray, which zeroes just that row); an array is one allocation up to
/// KC_JPEG_ONE_CHUNK_MAX. The advice is no allocation: the budget counts the same bytes, and
/// the peak is the same (the arrays are filled whole either way; rows given back later split
/// their huge pages). Where the kernel finds no free 2 MiB block it compacts memory or falls
/// back to small pages (its transparent_hugepage "defrag" setting), on the decode thread.
///
/// Why transparent huge pages through madvise: in the kernel's admin guide
/// (Documentation/admin-guide/mm/transhuge.rst, "Global THP controls") MADV_HUGEPAGE is the
/// per-range opt-in of the "madvise" mode; in the "always" mode (the default of Debian's
/// kernel config) the arrays may get huge pages anyway, and the advice lets the default
/// "defrag=madvise" setting compact memory for them at fault time. It is a hint only: with
/// THP "never", or no free 2 MiB block, the pages are ordinary ones and nothing fails.
/// hugetlbfs pages (MAP_HUGETLB) would need a pool the administrator reserves
/// (vm.nr_hugepages) and fail the allocation without one, and libjpeg allocates through
/// malloc, which cannot ask for them. Fewer page faults, the same work and pixels:
/// CoefficientReleaseTests compares the pixels, and the faults taken while
/// jpeg_start_decompress fills the arrays, with and without the advice.
static void advise_huge_pages(kc_jpeg *h) {
    j_common_ptr common = (j_common_ptr)&h->cinfo;
    if (!h->coef_huge || h->coef_count > MAX_COMPONENTS) return;
    for (int ci = 0; ci < h->coef_count; ci++) {
        size_t bytes = (size_t)h->coef_rows[ci] * h->coef_per_row[ci] * sizeof(JBLOCK);
        if (bytes < 2 * KC_JPEG_HUGE_PAGE || bytes > KC_JPEG_ONE_CHUNK_MAX) continue;
        JBLOCKARRAY rows = (*h->cinfo.mem->access_virt_barray)(common, h->coef_arrays[ci], 0, 1, TRUE);
        uintptr_t start = (uintptr_t)rows[0];
        uintptr_t low = (start + KC_JPEG_HUGE_PAGE - 1) & ~(KC_JPEG_HUGE_PAGE - 1);
        uintptr_t high = (start + bytes) & ~(KC_JPEG_HUGE_PAGE - 1);
        if (high > low && madvise((void *)low, high - low, MADV_HUGEPAGE) == 0) h->coef_huge_bytes += high - low;
    }
}

/// libjpeg's realize_virt_arrays (which allocates every virtual array, jpeg_start_decompress),
/// then the huge-page advice.
static void kc_realize_virt_arrays(j_common_ptr cinfo) {
    kc_jpeg *h = handle_of(cinfo);
    (*h->library_mem.realize_virt_arrays)(cinfo);
    advise_huge_pages(h);
}

static void kc_free_pool(j_common_ptr cinfo, int pool) {
    kc_jpeg *h = handle_of(cinfo);
    (*h->library_mem.free_pool)(cinfo, pool);
    if (pool >= 0 && pool < JPOOL_NUMPOOLS) h->pool_bytes[pool] = 0;
}

/// Puts the wrappers in the memory manager's public entries, keeping libjpeg's own.
static void wrap_memory_manager(kc_jpeg *h) {
    struct jpeg_memory_mgr *mem = h->cinfo.mem;
    h->library_mem = *mem;
    mem->alloc_small = kc_alloc_small;
    mem->alloc_large = kc_alloc_large;
    mem->alloc_sarray = kc_alloc_sarray;
    mem->alloc_barray = kc_alloc_barray;
    mem->request_virt_sarray = kc_request_virt_sarray;
    mem->request_virt_barray = kc_request_virt_barray;
    mem->realize_virt_arrays = kc_realize_virt_arrays;
    mem->free_pool = kc_free_pool;
}

// MARK: - APP1

/// The next byte of the marker being read (libjpeg.txt, "Special markers": a marker processor
/// reads through the data source). Ours never suspend; a source that runs dry supplies an EOI
/// and warns JWRN_JPEG_EOF, which fails the call as truncated (kc_jpeg_emit_message).
static unsigned next_byte(j_decompress_ptr c) {
    struct jpeg_source_mgr *src = c->src;
    if (src->bytes_in_buffer == 0 && !(*src->fill_input_buffer)(c)) ERREXIT(c, JERR_CANT_SUSPEND);
    src->bytes_in_buffer--;
    return *src->next_input_byte++;
}

/// The APP1 marker processor (jpeg_set_marker_processor): keeps the payload of the first
/// segment that starts with "Exif\0\0" (in JPOOL_IMAGE, at most 65533 bytes: the length field
/// is 16 bits and counts itself) and skips every other APP1 (XMP, a second Exif...) unread.
static boolean read_app1(j_decompress_ptr c) {
    kc_jpeg *h = handle_of((j_common_ptr)c);
    unsigned hi = next_byte(c);
    long length = (long)((hi << 8) | next_byte(c)) - 2;
    if (length <= 0) return TRUE;
    static const uint8_t exif_id[6] = { 'E', 'x', 'i', 'f', 0, 0 };
    uint8_t head[6];
    long got = 0;
    while (got < length && got < 6) head[got++] = (uint8_t)next_byte(c);
    if (h->exif != NULL || got < 6 || memcmp(head, exif_id, 6) != 0) {
        if (length > got) (*c->src->skip_input_data)(c, length - got);
        return TRUE;
    }
    uint8_t *payload = (*c->mem->alloc_small)((j_common_ptr)c, JPOOL_IMAGE, (size_t)length);
    memcpy(payload, head, 6);
    for (long i = 6; i < length; i++) payload[i] = (uint8_t)next_byte(c);
    h->exif = payload;
    h->exif_length = (size_t)length;
    return TRUE;
}

// MARK: - APP2

/// The APP2 marker processor: keeps the data of every segment that starts with
/// "ICC_PROFILE\0" followed by its sequence number and count (ICC.1:2010 annex B.4), at most
/// KC_JPEG_ICC_MAX bytes in all, and skips every other APP2 (MPF, FlashPix...) unread.
static boolean read_app2(j_decompress_ptr c) {
    kc_jpeg *h = handle_of((j_common_ptr)c);
    unsigned hi = next_byte(c);
    long length = (long)((hi << 8) | next_byte(c)) - 2;
    if (length <= 0) return TRUE;
    static const uint8_t icc_id[12] = { 'I', 'C', 'C', '_', 'P', 'R', 'O', 'F', 'I', 'L', 'E', 0 };
    uint8_t head[14];
    long got = 0;
    while (got < length && got < 14) head[got++] = (uint8_t)next_byte(c);
    if (got < 14 || memcmp(head, icc_id, 12) != 0) {
        if (length > got) (*c->src->skip_input_data)(c, length - got);
        return TRUE;
    }
    size_t data = (size_t)(length - 14);
    int seq = head[12], count = head[13];
    h->icc_total += data;
    if (h->icc_count == 0) h->icc_count = count;
    if (seq == 0 || count == 0 || seq > count || count != h->icc_count || h->icc_chunks >= 256) {
        if (h->icc_problem == KC_JPEG_ICC_NONE) h->icc_problem = KC_JPEG_ICC_MALFORMED;
    }
    if (h->icc_problem != KC_JPEG_ICC_NONE || h->icc_total > KC_JPEG_ICC_MAX) {
        if (h->icc_problem == KC_JPEG_ICC_NONE) h->icc_problem = KC_JPEG_ICC_TOO_LARGE;
        if (data > 0) (*c->src->skip_input_data)(c, (long)data);
        return TRUE;
    }
    uint8_t *payload = data == 0 ? NULL : (*c->mem->alloc_large)((j_common_ptr)c, JPOOL_IMAGE, data);
    for (size_t i = 0; i < data; i++) payload[i] = (uint8_t)next_byte(c);
    h->icc_data[h->icc_chunks] = payload;
    h->icc_size[h->icc_chunks] = data;
    h->icc_seq[h->icc_chunks] = seq;
    h->icc_chunks++;
    return TRUE;
}

/// Joins the kept ICC_PROFILE segments in sequence order once the header is read: each
/// number from 1 to the count exactly once, else KC_JPEG_ICC_MALFORMED.
static void join_icc(kc_jpeg *h) {
    if (h->icc_chunks == 0 || h->icc_problem != KC_JPEG_ICC_NONE) return;
    if (h->icc_chunks != h->icc_count) { h->icc_problem = KC_JPEG_ICC_MALFORMED; return; }
    int index[256];
    for (int i = 0; i < 256; i++) index[i] = -1;
    for (int i = 0; i < h->icc_chunks; i++) {
        if (index[h->icc_seq[i]] != -1) { h->icc_problem = KC_JPEG_ICC_MALFORMED; return; }
        index[h->icc_seq[i]] = i;
    }
    if (h->icc_total == 0) { h->icc_problem = KC_JPEG_ICC_MALFORMED; return; }
    struct jpeg_decompress_struct *c = &h->cinfo;
    h->icc = (*c->mem->alloc_large)((j_common_ptr)c, JPOOL_IMAGE, h->icc_total);
    size_t at = 0;
    for (int seq = 1; seq <= h->icc_count; seq++) {
        int i = index[seq];
        if (h->icc_size[i] > 0) memcpy(h->icc + at, h->icc_data[i], h->icc_size[i]);
        at += h->icc_size[i];
    }
    h->icc_length = at;
}

/// jpeg_create_decompress under a setjmp (it reports running out of memory through error_exit).
/// Returns 0 on success; on failure the half-made decompressor is already destroyed.
static int kc_jpeg_create(kc_jpeg *h) {
    if (setjmp(h->jump)) {
        jpeg_destroy_decompress(&h->cinfo); // safe on a half-created struct (checks cinfo->mem)
        return -1;
    }
    jpeg_create_decompress(&h->cinfo);
    return 0;
}

static kc_jpeg *kc_jpeg_new(void) {
    kc_jpeg *h = calloc(1, sizeof *h);
    if (h == NULL) return NULL;
    h->cinfo.err = jpeg_std_error(&h->err);
    h->err.error_exit = kc_jpeg_error_exit;
    h->err.emit_message = kc_jpeg_emit_message;
    h->err.output_message = kc_jpeg_output_message;
    h->cinfo.client_data = h; // kept by jpeg_create_decompress
    if (kc_jpeg_create(h) != 0) { free(h); return NULL; }
    wrap_memory_manager(h);
    h->coef_release = 1;
    h->coef_huge = 1;
    h->progress.progress_monitor = kc_jpeg_progress_monitor;
    h->cinfo.progress = &h->progress;
    return h;
}

kc_jpeg *kc_jpeg_create_file(FILE *file) {
    kc_jpeg *h = kc_jpeg_new();
    if (h == NULL) return NULL;
    if (setjmp(h->jump)) { kc_jpeg_destroy(h); return NULL; }
    jpeg_stdio_src(&h->cinfo, file);
    return h;
}

kc_jpeg *kc_jpeg_create_memory(const void *data, size_t size) {
    kc_jpeg *h = kc_jpeg_new();
    if (h == NULL) return NULL;
    if (setjmp(h->jump)) {
        // jpeg_mem_src refuses 0 bytes ("Empty input file"); keep the handle so that the
        // caller reads the message from kc_jpeg_read_header.
        h->header_read = -1;
        return h;
    }
    jpeg_mem_src(&h->cinfo, data, (unsigned long)size);
    return h;
}

static int jpeg_color_space_code(J_COLOR_SPACE cs) {
    switch (cs) {
    case JCS_GRAYSCALE: return KC_JPEG_CS_GRAYSCALE;
    case JCS_RGB: return KC_JPEG_CS_RGB;
    case JCS_YCbCr: return KC_JPEG_CS_YCBCR;
    case JCS_CMYK: return KC_JPEG_CS_CMYK;
    case JCS_YCCK: return KC_JPEG_CS_YCCK;
    default: return KC_JPEG_CS_UNKNOWN;
    }
}

int kc_jpeg_read_header(kc_jpeg *h, kc_jpeg_header *out) {
    memset(out, 0, sizeof *out);
    if (h->header_read != 0) {
        if (h->header_read < 0) return h->code; // the source could not be set up
        snprintf(h->message, sizeof h->message, "kc_jpeg_read_header called twice");
        return h->code = KC_IMG_MISUSE;
    }
    if (setjmp(h->jump)) return h->code;
    jpeg_set_marker_processor(&h->cinfo, JPEG_APP0 + 1, read_app1);
    jpeg_set_marker_processor(&h->cinfo, JPEG_APP0 + 2, read_app2);
    (void)jpeg_read_header(&h->cinfo, TRUE); // with require_image, anything but an image errors
    h->header_read = 1;
    join_icc(h);

    struct jpeg_decompress_struct *c = &h->cinfo;
    out->width = (int)c->image_width;
    out->height = (int)c->image_height;
    out->components = c->num_components;
    out->color_space = jpeg_color_space_code(c->jpeg_color_space);
    out->data_precision = c->data_precision;
    out->saw_adobe_marker = c->saw_Adobe_marker ? 1 : 0;
    out->progressive = c->progressive_mode ? 1 : 0;
    out->arithmetic = c->arith_code ? 1 : 0;
    out->multiple_scans = jpeg_has_multiple_scans(c) ? 1 : 0;
    if (out->multiple_scans) {
        // jdcoefct.c, jinit_d_coef_controller with a full buffer: one virtual array of JBLOCKs
        // per component, jround_up(width_in_blocks, h_samp) x jround_up(height_in_blocks, v_samp).
        size_t total = 0;
        for (int ci = 0; ci < c->num_components; ci++) {
            const jpeg_component_info *k = &c->comp_info[ci];
            size_t w = ((size_t)k->width_in_blocks + k->h_samp_factor - 1) / k->h_samp_factor * k->h_samp_factor;
            size_t rows = ((size_t)k->height_in_blocks + k->v_samp_factor - 1) / k->v_samp_factor * k->v_samp_factor;
            total += w * rows * sizeof(JBLOCK);
        }
        out->coefficient_bytes = total;
    }
    note_scanned_components(h); // the first scan (jpeg_read_header stops at its SOS)
    count_scan(h);
    out->exif = h->exif;
    out->exif_length = h->exif_length;
    out->icc = h->icc;
    out->icc_length = h->icc != NULL ? h->icc_length : h->icc_total;
    out->icc_problem = h->icc_problem;
    if (c->data_precision != 8) {
        snprintf(h->message, sizeof h->message, "%d-bit JPEG (data precision %d) is not supported",
                 c->data_precision, c->data_precision);
        return h->code = KC_IMG_UNSUPPORTED;
    }
    return KC_IMG_OK;
}

int kc_jpeg_start(kc_jpeg *h, int scale_num, int *out_width, int *out_height) {
    if (h->header_read != 1 || h->started || scale_num < 1 || scale_num > 16) {
        snprintf(h->message, sizeof h->message, "kc_jpeg_start: no header yet, already started, or scale %d/8 outside 1...16", scale_num);
        return h->code = KC_IMG_MISUSE;
    }
    if (setjmp(h->jump)) return h->code;
    struct jpeg_decompress_struct *c = &h->cinfo;
    c->scale_num = (unsigned int)scale_num;
    c->scale_denom = 8;
    if (c->jpeg_color_space == JCS_CMYK || c->jpeg_color_space == JCS_YCCK) {
        // libjpeg turns YCCK into CMYK; CMYK to RGB is ours (kc_jpeg_read_pixels).
        c->out_color_space = JCS_CMYK;
        h->cmyk = 1;
    } else {
        // B,G,R,A with A = 0xFF: our XRGB8888 straight from the colour converter. (JCS_EXT_BGRX
        // would leave the X byte undefined, jpeglib.h.) Gray and YCbCr both convert to it.
        c->out_color_space = JCS_EXT_BGRA;
    }
    h->decompressing = 1;
    jpeg_start_decompress(c); // a multi-scan file is read to its end here
    if (h->eof_reached && jpeg_has_multiple_scans(c)) {
        // The data ended where the EOI should be, with no warning since. Only a file whose
        // scans are all there may go on: a progressive one whose every coefficient got its
        // last bit (coef_bits 0: the progression is complete), a sequential one whose every
        // component was scanned. Anything else is a file cut between two scans.
        int complete = 1;
        if (c->progressive_mode) {
            for (int ci = 0; ci < c->num_components && complete; ci++)
                for (int k = 0; k < DCTSIZE2; k++)
                    if (c->coef_bits == NULL || c->coef_bits[ci][k] != 0) { complete = 0; break; }
        } else {
            for (int ci = 0; ci < c->num_components; ci++)
                if (ci >= 32 || !(h->scanned_components & (1u << ci))) { complete = 0; break; }
        }
        if (!complete) fail_truncated(h);
    }
    if (h->cmyk && !h->keep_cmyk) {
        h->cmyk_row = (*c->mem->alloc_sarray)((j_common_ptr)c, JPOOL_IMAGE, c->output_width * 4, 1);
    }
    h->started = 1;
    *out_width = (int)c->output_width;
    *out_height = (int)c->output_height;
    return KC_IMG_OK;
}

/// round(a * b / 255) for a, b in 0...255, exactly (the usual t + (t >> 8) trick; Pillow's
/// MULDIV255 is the same).
static inline unsigned mul_div_255(unsigned a, unsigned b) {
    unsigned t = a * b + 128;
    return (t + (t >> 8)) >> 8;
}

/// CMYK (4 bytes a pixel) to B,G,R,0xFF. With the Adobe APP14 marker the samples are inverted
/// (Adobe writes 255 - C etc.; every Photoshop CMYK JPEG and Pillow's do), so the stored value
/// is already the amount of light: R = C' * K' / 255 with C' = stored C, K' = stored K.
/// Without the marker, C' = 255 - C and K' = 255 - K. This is the naive conversion without an
/// ICC profile, R = (1 - C)(1 - K), the one Pillow and most viewers use.
static void cmyk_to_bgrx(const JSAMPLE *src, uint8_t *dst, JDIMENSION width, int inverted) {
    unsigned flip = inverted ? 0 : 255;
    for (JDIMENSION x = 0; x < width; x++, src += 4, dst += 4) {
        unsigned c = src[0] ^ flip, m = src[1] ^ flip, y = src[2] ^ flip, k = src[3] ^ flip;
        dst[0] = (uint8_t)mul_div_255(y, k);
        dst[1] = (uint8_t)mul_div_255(m, k);
        dst[2] = (uint8_t)mul_div_255(c, k);
        dst[3] = 0xFF;
    }
}

// MARK: - Giving back the coefficients read

/// iMCU rows of coefficients kept behind the one the output pass decodes next: its block
/// smoothing (jdcoefct.c decompress_smooth_data, libjpeg-turbo 2.1) reads the two iMCU rows
/// above the current one; one more for safety.
#define KC_JPEG_COEF_ROWS_KEPT 3
/// The least given back at once per component (fewer madvise calls), except at the end.
#define KC_JPEG_COEF_RELEASE_MIN ((size_t)1024 * 1024)

/// Gives back to the kernel (madvise MADV_DONTNEED) the pages of the whole-image coefficient
/// arrays that the output pass has read and will not read again: the block rows above
/// KC_JPEG_COEF_ROWS_KEPT iMCU rows before cinfo->output_iMCU_row (the iMCU rows the
/// coefficient controller has decoded). Only whole pages inside rows already read are given
/// back; the memory stays allocated (libjpeg frees it with the pool; a page given back reads
/// as zeros, never read again here: no buffered-image mode, and jpeg_skip_scanlines only moves
/// forward). Called under the caller's setjmp (access_virt_barray may fail like any libjpeg
/// call, on rows the decoder itself has just read without failing).
static void release_read_coefficients(kc_jpeg *h) {
    struct jpeg_decompress_struct *c = &h->cinfo;
    if (!h->coef_release || h->coef_count == 0 || h->coef_count != c->num_components || c->buffered_image ||
        c->output_iMCU_row <= KC_JPEG_COEF_ROWS_KEPT)
        return;
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    JDIMENSION decoded = c->output_iMCU_row - KC_JPEG_COEF_ROWS_KEPT;
    for (int ci = 0; ci < h->coef_count; ci++) {
        JDIMENSION upto = decoded * (JDIMENSION)c->comp_info[ci].v_samp_factor;
        if (upto > h->coef_rows[ci]) upto = h->coef_rows[ci];
        JDIMENSION from = h->coef_released_rows[ci];
        size_t row_bytes = (size_t)h->coef_per_row[ci] * sizeof(JBLOCK);
        int last = c->output_iMCU_row >= c->total_iMCU_rows; // every iMCU row decoded: no more calls
        if (upto <= from || ((size_t)(upto - from) * row_bytes < KC_JPEG_COEF_RELEASE_MIN && !last)) continue;
        for (JDIMENSION r = from; r < upto; r++) {
            JBLOCKARRAY row = (*c->mem->access_virt_barray)((j_common_ptr)c, h->coef_arrays[ci], r, 1, FALSE);
            uintptr_t start = (uintptr_t)row[0];
            if (start != h->coef_run_end[ci]) {
                // Not right after the rows before (a new chunk): what is left of the last run
                // stays (at most a page).
                h->coef_pending_from[ci] = start;
            }
            h->coef_run_end[ci] = start + row_bytes;
            uintptr_t low = (h->coef_pending_from[ci] + page - 1) & ~(page - 1);
            uintptr_t high = h->coef_run_end[ci] & ~(page - 1);
            if (high > low && (high - low >= KC_JPEG_COEF_RELEASE_MIN || r + 1 == upto)) {
                if (madvise((void *)low, high - low, MADV_DONTNEED) == 0) h->coef_released_bytes += high - low;
                h->coef_pending_from[ci] = high;
            }
        }
        h->coef_released_rows[ci] = upto;
    }
}

/// Reads the next `count` output rows (count <= rows left) into rows[0...count-1] as
/// B,G,R,0xFF. Called under the caller's setjmp. Returns the number of rows read: fewer than
/// `count` only if libjpeg made no progress (a suspending source; ours never suspend).
static JDIMENSION read_rows(kc_jpeg *h, JSAMPROW *rows, JDIMENSION count) {
    struct jpeg_decompress_struct *c = &h->cinfo;
    int inverted = c->saw_Adobe_marker ? 1 : 0;
    JDIMENSION done = 0;
    while (done < count) {
        if (h->cmyk && !h->keep_cmyk) {
            if (jpeg_read_scanlines(c, h->cmyk_row, 1) != 1) break;
            cmyk_to_bgrx(h->cmyk_row[0], rows[done], c->output_width, inverted);
            done++;
        } else {
            // Straight into the caller's rows; libjpeg returns as many as it has ready (one
            // row group: 1 or 2 rows).
            JDIMENSION n = jpeg_read_scanlines(c, rows + done, count - done);
            if (n == 0) break;
            done += n;
        }
    }
    release_read_coefficients(h);
    return done;
}

int kc_jpeg_read_pixels(kc_jpeg *h, void *dest_pixels, size_t bytes_per_row) {
    uint8_t *dest = dest_pixels;
    if (!h->started) {
        snprintf(h->message, sizeof h->message, "kc_jpeg_read_pixels before kc_jpeg_start");
        return h->code = KC_IMG_MISUSE;
    }
    if (setjmp(h->jump)) return h->code;
    struct jpeg_decompress_struct *c = &h->cinfo;
    while (c->output_scanline < c->output_height) {
        JSAMPROW rows[16];
        JDIMENSION n = c->output_height - c->output_scanline;
        if (n > 16) n = 16;
        for (JDIMENSION i = 0; i < n; i++)
            rows[i] = dest + (size_t)(c->output_scanline + i) * bytes_per_row;
        if (read_rows(h, rows, n) < n) break;
    }
    if (c->output_scanline < c->output_height) {
        snprintf(h->message, sizeof h->message, "libjpeg stopped at row %u of %u", c->output_scanline, c->output_height);
        return h->code = KC_IMG_CORRUPT;
    }
    // No jpeg_finish_decompress: every row is in, and what follows the last scan (trailing
    // bytes; a missing EOI, see kc_jpeg_eoi_missing) does not matter to the picture.
    return KC_IMG_OK;
}

int kc_jpeg_read_rows(kc_jpeg *h, uint8_t *const *rows, int count) {
    if (!h->started || count < 0 || (JDIMENSION)count > h->cinfo.output_height - h->cinfo.output_scanline) {
        snprintf(h->message, sizeof h->message, "kc_jpeg_read_rows: not started, or %d rows from row %u of %u",
                 count, h->cinfo.output_scanline, h->cinfo.output_height);
        return h->code = KC_IMG_MISUSE;
    }
    if (setjmp(h->jump)) return h->code;
    struct jpeg_decompress_struct *c = &h->cinfo;
    // At most 16 rows per jpeg_read_scanlines call (JSAMPARRAY is an array of non-const rows).
    JSAMPROW batch[16];
    int done = 0;
    while (done < count) {
        int n = count - done < 16 ? count - done : 16;
        for (int i = 0; i < n; i++) batch[i] = rows[done + i];
        JDIMENSION got = read_rows(h, batch, (JDIMENSION)n);
        done += (int)got;
        if (got < (JDIMENSION)n) {
            snprintf(h->message, sizeof h->message, "libjpeg stopped at row %u of %u", c->output_scanline, c->output_height);
            return h->code = KC_IMG_CORRUPT;
        }
    }
    return KC_IMG_OK;
}

int kc_jpeg_skip_rows(kc_jpeg *h, int count) {
    if (!h->started || count < 0 || (JDIMENSION)count > h->cinfo.output_height - h->cinfo.output_scanline) {
        snprintf(h->message, sizeof h->message, "kc_jpeg_skip_rows: not started, or %d rows from row %u of %u",
                 count, h->cinfo.output_scanline, h->cinfo.output_height);
        return h->code = KC_IMG_MISUSE;
    }
    if (count == 0) return KC_IMG_OK;
    if (setjmp(h->jump)) return h->code;
    struct jpeg_decompress_struct *c = &h->cinfo;
    if (c->output_scanline == 0) {
        // From the top of the image jpeg_skip_scanlines gives the very rows a full read gives
        // (compared row for row with libjpeg-turbo 2.1.5: samplings 4:4:4, 4:2:2, 4:4:0, 4:2:0,
        // 4:1:1, baseline, progressive, arithmetic, restart markers, gray, CMYK, YCCK, every
        // scale 1/8...8/8, every skip of up to 80 rows and more beyond; DecodeFittedTests
        // compare whole frames).
        // Skipping from the middle of a row group is where libjpeg-turbo has had bugs
        // (rows from before the skip returned after it), so that case reads instead.
        // Single-scan files still entropy-decode the skipped rows (jdapistd.c), so a corrupt
        // or truncated file is noticed there as in a full read.
        JDIMENSION skipped = jpeg_skip_scanlines(c, (JDIMENSION)count);
        if (skipped != (JDIMENSION)count) {
            snprintf(h->message, sizeof h->message, "jpeg_skip_scanlines skipped %u of %d rows", skipped, count);
            return h->code = KC_IMG_CORRUPT;
        }
        return KC_IMG_OK;
    }
    if (h->scratch_row == NULL)
        h->scratch_row = (*c->mem->alloc_sarray)((j_common_ptr)c, JPOOL_IMAGE, c->output_width * 4, 1);
    for (int i = 0; i < count; i++) {
        if (read_rows(h, h->scratch_row, 1) != 1) {
            snprintf(h->message, sizeof h->message, "libjpeg stopped at row %u of %u", c->output_scanline, c->output_height);
            return h->code = KC_IMG_CORRUPT;
        }
    }
    return KC_IMG_OK;
}

void kc_jpeg_set_memory_limit(kc_jpeg *h, size_t bytes) {
    h->memory_limit = bytes;
    h->cinfo.mem->max_memory_to_use = bytes > (size_t)LONG_MAX ? LONG_MAX : (long)bytes;
}

size_t kc_jpeg_memory_in_use(const kc_jpeg *h) { return h->pool_bytes[JPOOL_PERMANENT] + h->pool_bytes[JPOOL_IMAGE]; }
size_t kc_jpeg_memory_peak(const kc_jpeg *h) { return h->memory_peak; }
void kc_jpeg_keep_cmyk(kc_jpeg *h, int keep) { h->keep_cmyk = keep != 0; }
void kc_jpeg_release_coefficients(kc_jpeg *h, int release) { h->coef_release = release != 0; }
size_t kc_jpeg_coefficients_released(const kc_jpeg *h) { return h->coef_released_bytes; }
void kc_jpeg_use_huge_pages(kc_jpeg *h, int use) { h->coef_huge = use != 0; }
size_t kc_jpeg_coefficients_in_huge_pages(const kc_jpeg *h) { return h->coef_huge_bytes; }

int kc_jpeg_eoi_missing(const kc_jpeg *h) { return h->eof_reached; }

const char *kc_jpeg_error(const kc_jpeg *h) { return h->message; }
int kc_jpeg_warning_count(const kc_jpeg *h) { return h->warning_count; }
const char *kc_jpeg_warning(const kc_jpeg *h, int index) {
    if (index < 0 || index >= h->warning_count || index >= KC_IMG_WARNINGS_MAX) return "";
    return h->warnings[index];
}

void kc_jpeg_destroy(kc_jpeg *h) {
    if (h == NULL) return;
    jpeg_destroy_decompress(&h->cinfo); // frees every pool, including the saved markers
    free(h);
}
