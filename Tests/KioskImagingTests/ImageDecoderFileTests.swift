// SPDX-License-Identifier: Apache-2.0
import Dispatch
import Foundation
import Glibc
import KioskCore
import KioskImaging
import Testing

/// ImageDecoder on paths that are not regular files: a FIFO (which used to block the decode
/// worker forever in fopen), a pipe (which used to fail its rewind and report "Not a JPEG
/// file"), character devices that never end, a socket, links to them. All are refused at
/// once, without reading, by decode and decodeFitted alike, and no descriptor is left open.
@Suite struct ImageDecoderFileTests {
    static let frame = Bitmap(width: 32, height: 24)

    /// The error of `decode(path:)` and of `decodeFitted(path:)`, each run on its own thread
    /// with a deadline, so that a decoder that blocks fails the test instead of hanging it.
    static func errors(_ path: String, seconds: Int = 10) -> [ImageError?] {
        [true, false].map { (fitted: Bool) -> ImageError? in
            let done = DispatchSemaphore(value: 0)
            nonisolated(unsafe) var outcome: ImageError?
            nonisolated(unsafe) var finished = false
            Thread.detachNewThread {
                do throws(ImageError) {
                    if fitted {
                        _ = try ImageDecoder.decodeFitted(path: path, into: Bitmap(width: 32, height: 24), fit: .fit,
                                                          background: .black)
                    } else {
                        _ = try ImageDecoder.decode(path: path)
                    }
                } catch {
                    outcome = error
                }
                finished = true
                done.signal()
            }
            if done.wait(timeout: .now() + .seconds(seconds)) == .timedOut {
                Issue.record("\(path): \(fitted ? "decodeFitted" : "decode") still blocked after \(seconds) s")
                return nil
            }
            #expect(finished)
            return outcome
        }
    }

    /// How many descriptors this process has open on files under `directory` (other tests
    /// run at the same time, so only the files of this test are counted).
    static func openDescriptors(under directory: String) -> Int {
        let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return fds.filter { fd in
            ((try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + fd)) ?? "")
                .hasPrefix(directory)
        }.count
    }

    @Test func fifoIsRefusedAtOnceWithOrWithoutAWriter() throws {
        let directory = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let fifo = directory + "/x.jpg"
        #expect(mkfifo(fifo, 0o644) == 0)
        for error in Self.errors(fifo) {
            #expect(error == .notRegularFile(path: fifo, kind: "FIFO"))
        }
        // With a writer that has sent a whole JPEG, still refused (a pipe cannot be rewound,
        // and the show would consume what the writer meant for someone else).
        let writer = open(fifo, O_RDWR | O_NONBLOCK)
        #expect(writer >= 0)
        let jpeg = try Fixtures.bytes("libjpeg-turbo-testimages", "testorig.jpg")
        _ = jpeg.prefix(4096).withUnsafeBytes { write(writer, $0.baseAddress, $0.count) }
        for error in Self.errors(fifo) {
            #expect(error == .notRegularFile(path: fifo, kind: "FIFO"))
        }
        close(writer)
        #expect(Self.openDescriptors(under: directory) == 0)
    }

    /// Such a path is refused from its `stat`, never opened: a writer blocked in open(2) on the
    /// FIFO, which any reader's open would release, is still waiting after the decodes.
    @Test func fifoIsNotEvenOpened() throws {
        let directory = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let fifo = directory + "/w.png"
        #expect(mkfifo(fifo, 0o644) == 0)
        let opened = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var writer: Int32 = -1
        Thread.detachNewThread {
            writer = open(fifo, O_WRONLY)  // blocks until a reader opens the FIFO
            opened.signal()
        }
        usleep(100_000)
        for error in Self.errors(fifo) {
            #expect(error == .notRegularFile(path: fifo, kind: "FIFO"))
        }
        #expect(opened.wait(timeout: .now() + .milliseconds(300)) == .timedOut, "the decoder opened the FIFO")
        // Release the writer.
        let reader = open(fifo, O_RDONLY | O_NONBLOCK)
        #expect(opened.wait(timeout: .now() + .seconds(10)) == .success)
        close(reader)
        if writer >= 0 { close(writer) }
        #expect(ImageError.notRegularFile(path: fifo, kind: "FIFO").description
                    == "\(fifo): not a regular file (a FIFO): only regular image files are read")
    }

    /// A pipe as a source (/dev/stdin, a shell's <(cat a.jpg), here /proc/self/fd/N) is a FIFO.
    @Test func pipeIsRefusedNotMisreadAsNotAJPEG() throws {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        defer { close(fds[0]); close(fds[1]) }
        let jpeg = try Fixtures.bytes("libjpeg-turbo-testimages", "testorig.jpg")
        _ = jpeg.prefix(4096).withUnsafeBytes { write(fds[1], $0.baseAddress, $0.count) }
        let path = "/proc/self/fd/\(fds[0])"
        for error in Self.errors(path) {
            #expect(error == .notRegularFile(path: path, kind: "FIFO"))
        }
    }

    /// Devices that never end (or are always empty) are refused before a byte is read.
    @Test(arguments: ["/dev/zero", "/dev/urandom", "/dev/null"])
    func characterDevicesAreRefused(path: String) {
        for error in Self.errors(path) {
            #expect(error == .notRegularFile(path: path, kind: "character device"))
        }
    }

    /// A UNIX socket (open(2) fails on it with ENXIO) is named as a socket.
    @Test func socketIsRefused() throws {
        let directory = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/s.png"
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        #expect(fd >= 0)
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            for (i, byte) in path.utf8.prefix(buffer.count - 1).enumerated() { buffer[i] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        #expect(bound == 0)
        for error in Self.errors(path) {
            #expect(error == .notRegularFile(path: path, kind: "socket"))
        }
    }

    /// Symbolic links are followed: to a photo it decodes, to /dev/zero it is refused.
    @Test func linksAreFollowed() throws {
        let directory = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let good = directory + "/good.jpg", bad = directory + "/bad.jpg"
        #expect(symlink(Fixtures.path("libjpeg-turbo-testimages", "testorig.jpg"), good) == 0)
        #expect(symlink("/dev/zero", bad) == 0)
        #expect(try ImageDecoder.decode(path: good).bitmap.width == 227)
        for error in Self.errors(bad) {
            #expect(error == .notRegularFile(path: bad, kind: "character device"))
        }
    }

    /// Regular files are read as before, from the start (the signature is read with pread, so
    /// nothing is rewound), and every path, good or bad, closes its descriptor.
    @Test func regularFilesDecodeAndNothingLeaks() throws {
        let directory = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let empty = directory + "/empty.jpg", text = directory + "/text.png"
        try Data().write(to: URL(fileURLWithPath: empty))
        try Data("hello".utf8).write(to: URL(fileURLWithPath: text))
        let fifo = directory + "/fifo.png"
        #expect(mkfifo(fifo, 0o644) == 0)
        for _ in 0..<20 {
            #expect(try ImageDecoder.decode(path: Fixtures.path("pngsuite", "basn6a08.png")).bitmap.width == 32)
            #expect(try ImageDecoder.decodeFitted(path: Fixtures.path("generated", "progressive.jpg"), into: Self.frame,
                                                  fit: .fill,
                                                  background: .black).streamed)
            #expect(throws: ImageError.corrupt(path: empty, reason: "the file is empty (0 bytes)")) {
                try ImageDecoder.decode(path: empty)
            }
            #expect(throws: ImageError.otherFormat(path: text, format: .unknown(firstBytes: Array("hello".utf8)))) {
                try ImageDecoder.decode(path: text)
            }
            #expect(throws: ImageError.unreadable(path: directory, errno: EISDIR)) {
                try ImageDecoder.decode(path: directory)
            }
            #expect(throws: ImageError.unreadable(path: directory + "/none", errno: ENOENT)) {
                try ImageDecoder.decodeFitted(path: directory + "/none", into: Self.frame, fit: .fit,
                                              background: .black)
            }
            #expect(throws: ImageError.notRegularFile(path: fifo, kind: "FIFO")) { try ImageDecoder.decode(path: fifo) }
            #expect(throws: ImageError.corrupt(path: empty, reason: "the file is empty (0 bytes)")) {
                try ImageDecoder.decodeFitted(path: empty, into: Self.frame, fit: .fit, background: .black)
            }
        }
        #expect(Self.openDescriptors(under: directory) == 0)
    }
}
