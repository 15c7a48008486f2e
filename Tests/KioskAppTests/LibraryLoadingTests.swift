// SPDX-License-Identifier: Apache-2.0
import Foundation
import Testing

/// libcurl is opened with dlopen when the first download starts, FreeType, HarfBuzz,
/// fontconfig and FriBidi when text is first drawn, libcrypto at the first SHA-256, not linked:
/// a show of local files without words never maps them (nor the 45-odd libraries they depend
/// on), a show with a manifest URL, a caption or the clock does. Checked with the dynamic loader's own
/// report (`LD_DEBUG=files`, ld.so(8)), which names every library it maps, dlopen()ed ones
/// included.
private let samples = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("deploy/samples")

/// The libraries the loader mapped while the program showed `sources` offscreen for 1 s, with
/// `environment` added to the test's own; and the program's log lines (its stderr).
private func librariesMapped(_ arguments: [String], environment: [String: String] = [:])
    throws -> (status: Int32, libraries: Set<String>, log: [Substring]) {
    let frames = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-ld-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: frames) }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: kioskExecutable())
    process.arguments = ["--display", "offscreen:\(frames.path)", "--size", "64x40", "--run-for", "1"] + arguments
    process.environment = ProcessInfo.processInfo.environment
        .merging(environment.merging(["LD_DEBUG": "files"]) { $1 }) { $1 }
    let err = Pipe()
    process.standardOutput = FileHandle.nullDevice
    process.standardError = err
    try process.run()
    let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    // Lines such as "  1234:\tfile=libcurl.so.4 [0];  dynamically loaded by ...".
    var names: Set<String> = [], log: [Substring] = []
    for line in stderr.split(separator: "\n") {
        guard let start = line.range(of: "file=") else {
            if !line.contains(":\t") { log.append(line) }  // the loader's lines are "PID:\t..."
            continue
        }
        names.insert(String(line[start.upperBound...].prefix { $0 != " " }))
    }
    return (process.terminationStatus, names, log)
}

@Test func aShowOfLocalFilesNeverLoadsLibcurl() throws {
    let local = try librariesMapped([samples.appendingPathComponent("path-1920x1200.jpg").path])
    #expect(local.status == 0)
    #expect(local.libraries.contains("libjpeg.so.62"), "the loader's report was read: \(local.libraries)")
    #expect(!local.libraries.contains("libcurl.so.4"), "\(local.libraries.sorted())")
    #expect(!local.libraries.contains { $0.hasPrefix("libgnutls") || $0.hasPrefix("libkrb5") },
            "\(local.libraries.sorted())")
    // No words on screen: no text libraries (nor glib, graphite2, expat... they bring), no libcrypto.
    for library in textLibraries + ["libglib-2.0.so.0", "libgraphite2.so.3", "libexpat.so.1", "libcrypto.so.3"] {
        #expect(!local.libraries.contains(library), "\(library): \(local.libraries.sorted())")
    }
    // sd_notify is spoken directly: libsystemd and what it pulls in are never mapped.
    #expect(!local.libraries.contains {
        $0.hasPrefix("libsystemd") || $0.hasPrefix("libgcrypt") || $0.hasPrefix("libzstd")
    },
            "\(local.libraries.sorted())")

    // A manifest URL (port 9, discard: refused at once on loopback) starts the fetcher, which
    // opens libcurl; the show goes on with the empty screen.
    let remote = try librariesMapped(["--manifest", "http://127.0.0.1:9/manifest.json"])
    #expect(remote.status == 0)
    #expect(remote.libraries.contains("libcurl.so.4"), "\(remote.libraries.sorted())")
}

private let textLibraries = ["libfreetype.so.6", "libharfbuzz.so.0", "libfontconfig.so.1", "libfribidi.so.0"]
private let photo = samples.appendingPathComponent("path-1920x1200.jpg").path

@Test func theClockOrACaptionLoadsTheTextLibraries() throws {
    let clock = try librariesMapped(["--overlay", "clock", photo])
    #expect(clock.status == 0)
    for library in textLibraries {
        #expect(clock.libraries.contains(library), "\(library): \(clock.libraries.sorted())")
    }

    // A playlist whose item has a caption: the decode worker loads them for it.
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-ld-caption-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: dir) }
    let playlist = dir.appendingPathComponent("show.json")
    try Data(#"{"items": [{"src": "\#(photo)", "caption": "Lake"}]}"#.utf8).write(to: playlist)
    let caption = try librariesMapped([playlist.path])
    #expect(caption.status == 0)
    for library in textLibraries {
        #expect(caption.libraries.contains(library), "\(library): \(caption.libraries.sorted())")
    }

    // A folder without images: the "no images" screen has words.
    let empty = dir.appendingPathComponent("empty")
    try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
    let status = try librariesMapped([empty.path])
    #expect(status.status == 0, "\(status.log)")
    for library in textLibraries {
        #expect(status.libraries.contains(library), "\(library): \(status.libraries.sorted())")
    }
}

/// A library that cannot be loaded: the show goes on without words, after one log line naming
/// it. A "libfontconfig.so.1" found first on LD_LIBRARY_PATH that is really the C library
/// (already mapped: the loader hands back libc, which has no FcInit).
@Test func withoutTheTextLibrariesTheShowGoesOnWithoutWords() throws {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-ld-nofc-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: dir) }
    // The C library's file, as the loader mapped it into this process (read to the end:
    // /proc files have no size to read by).
    let maps = try #require(FileHandle(forReadingAtPath: "/proc/self/maps")).readDataToEndOfFile()
    let libc = try #require(String(decoding: maps, as: UTF8.self).split(separator: "\n").compactMap { line in
        line.split(separator: " ", omittingEmptySubsequences: true).last.map(String.init)
    }.first { $0.hasSuffix("/libc.so.6") })
    try FileManager.default.createSymbolicLink(atPath: dir.appendingPathComponent("libfontconfig.so.1").path,
                                               withDestinationPath: libc)
    let show = try librariesMapped(["--overlay", "clock", "--caption", "exif", photo],
                                   environment: ["LD_LIBRARY_PATH": dir.path])
    #expect(show.status == 0, "\(show.log)")
    let noText = show.log.filter { $0.contains("no text on screen") }
    #expect(noText.count == 1, "\(show.log)")
    #expect(noText.first?.contains("libfontconfig.so.1 cannot be loaded: no symbol FcInit") == true, "\(show.log)")
    #expect(show.log.contains { $0.contains("show done") && $0.contains("1 frame written") }, "\(show.log)")
}
