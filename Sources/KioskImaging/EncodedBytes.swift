// SPDX-License-Identifier: Apache-2.0
import Glibc
import KioskSystem

/// The whole encoded file in memory, for a library that reads from a buffer (libwebp's
/// `WebPDecode`, libheif's `heif_context_read_from_memory_without_copy`): the bytes of an
/// ``ImageSource/memory(_:)`` source borrowed as they are, or those of an
/// ``ImageSource/file(_:)`` read into one `malloc` block of the file's size (from `fstat`),
/// which counts against ``DecodeOptions/maxDecoderBytes`` and is freed on deinit.
final class EncodedBytes {
    /// The file's bytes, valid while this object lives.
    let bytes: UnsafeRawBufferPointer
    /// The bytes allocated here (0 for a borrowed buffer).
    let heldBytes: Int
    private let owned: UnsafeMutableRawPointer?

    private init(bytes: UnsafeRawBufferPointer, owned: UnsafeMutableRawPointer?) {
        self.bytes = bytes
        self.owned = owned
        heldBytes = owned == nil ? 0 : bytes.count
    }

    deinit { free(owned) }

    /// What holding a file of `count` bytes costs, for the memory check.
    static func memoryUse(_ count: Int) -> MemoryUse {
        MemoryUse(what: "the file held whole (\(byteSize(count)))", bytes: count)
    }

    /// The bytes of `source`. A file is read from its start to its end (its size from `fstat`;
    /// a file that shrinks meanwhile keeps what was read).
    /// - Throws: `unreadable` (errno of `fstat` or `fread`), `corrupt` for an empty file,
    ///   `overMemoryBudget` when the file alone is over ``DecodeOptions/maxDecoderBytes``,
    ///   `outOfMemory`.
    static func load(_ source: ImageSource, name: String, options: DecodeOptions) throws(ImageError) -> EncodedBytes {
        switch source {
        case .memory(let buffer):
            return EncodedBytes(bytes: buffer, owned: nil)
        case .file(let file):
            let fd = fileno(file)
            var st = stat()
            do { try syscall("fstat", path: name) { fstat(fd, &st) } } catch {
                throw .unreadable(path: name, errno: error.errno)
            }
            let size = Int(st.st_size)
            guard size > 0 else { throw .corrupt(path: name, reason: "the file is empty (0 bytes)") }
            try checkMemory([[memoryUse(size)]], options: options, name: name)
            guard let memory = malloc(size) else {
                throw .outOfMemory(path: name, reason: "cannot allocate \(size) bytes to hold the file")
            }
            // pread on the stream's descriptor: from the file's start, whatever stdio has read.
            var count = 0
            while count < size {
                let n: Int
                do {
                    n = try syscall("pread", path: name) { pread(fd, memory + count, size - count, off_t(count)) }
                } catch {
                    free(memory)
                    throw .unreadable(path: name, errno: error.errno)
                }
                if n == 0 { break }
                count += n
            }
            return EncodedBytes(bytes: UnsafeRawBufferPointer(start: memory, count: count), owned: memory)
        }
    }
}
