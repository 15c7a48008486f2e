// SPDX-License-Identifier: Apache-2.0
// Test helper for KioskContentTests (not installed): writes one DiskCache entry slowly through
// the project's own CacheWriter, so that a test can SIGKILL it in the middle of the write.
//
//   kiosk-cache-writer DIR URL BYTES SEED CHUNK DELAY_MS
//
// The body is BYTES bytes: FF D8 FF, then byte i = (i * 31 + SEED) & 0xFF. It prints
// `started TEMP_PATH` once the first chunk is written, then `committed` when the entry is in.
//
//   kiosk-cache-writer --fetch DIR URL [--proxy URL] [--ca-file PATH]
//
// fetches one image with the project's Fetcher (default limits) into a disk cache at DIR, in a
// process of its own (so that its environment, `http_proxy` and the like, and its peak memory
// are its own), and prints `ok LENGTH` or `failed KIND: DESCRIPTION`, then `VmHWM KIB` (the
// peak resident set, from /proc/self/status).
import Dispatch
import Glibc
import KioskContent
import KioskSystem

let args = CommandLine.arguments
if args.count >= 4 && args[1] == "--fetch" {
    var configuration = Fetcher.Configuration()
    var i = 4
    while i + 1 < args.count {
        if args[i] == "--proxy" { configuration.proxy = args[i + 1] }
        if args[i] == "--ca-file" { configuration.caFile = args[i + 1] }
        i += 2
    }
    setvbuf(stdout, nil, _IONBF, 0)
    do {
        let fetcher = Fetcher(cache: try DiskCache(.init(directory: args[2])), configuration: configuration)
        let done = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var line = ""
        fetcher.fetchImage(args[3]) { result in
            switch result {
            case .success(let entry): line = "ok \(entry.length)"
            case .failure(let error): line = "failed \(error.kind): \(error.description)"
            }
            done.signal()
        }
        done.wait()
        fetcher.shutdown()
        print(line)
        let status = (try? readRegularFile("/proc/self/status", limit: 1 << 16)) ?? []
        let peak = String(decoding: status, as: UTF8.self).split(separator: "\n").first { $0.hasPrefix("VmHWM:") }
        print(peak.map {
            "VmHWM " + ($0.dropFirst(6).split(whereSeparator: { $0 == " " || $0 == "\t" }).first ?? "unknown")
        } ?? "VmHWM unknown")
        exit(0)
    } catch {
        fputs("kiosk-cache-writer: \(error)\n", stderr)
        exit(1)
    }
}
guard args.count == 7, let total = Int(args[3]), let seed = Int(args[4]), let chunk = Int(args[5]),
      let delay = UInt32(args[6]) else {
    fputs("usage: kiosk-cache-writer DIR URL BYTES SEED CHUNK DELAY_MS\n", stderr)
    exit(64)
}
setvbuf(stdout, nil, _IONBF, 0)
do {
    let cache = try DiskCache(.init(directory: args[1]))
    let writer = try cache.makeWriter(url: args[2])
    var body = (0..<total).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ seed) }
    body.replaceSubrange(0..<min(3, total), with: [0xFF, 0xD8, 0xFF].prefix(total))
    var offset = 0
    while offset < total {
        let end = min(total, offset + chunk)
        try body[offset..<end].withUnsafeBytes { raw in
            Result { () throws(ContentError) in try writer.append(raw) }
        }.get()
        if offset == 0 { print("started \(writer.temporaryPath)") }
        offset = end
        usleep(delay * 1000)
    }
    try writer.commit()
    print("committed")
} catch {
    fputs("kiosk-cache-writer: \(error)\n", stderr)
    exit(1)
}
