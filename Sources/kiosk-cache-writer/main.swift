// Test helper for KioskContentTests (not installed): writes one DiskCache entry slowly through
// the project's own CacheWriter, so that a test can SIGKILL it in the middle of the write.
//
//   kiosk-cache-writer DIR URL BYTES SEED CHUNK DELAY_MS
//
// The body is BYTES bytes: FF D8 FF, then byte i = (i * 31 + SEED) & 0xFF. It prints
// `started TEMP_PATH` once the first chunk is written, then `committed` when the entry is in.
import Glibc
import KioskContent

let args = CommandLine.arguments
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
        try body[offset..<end].withUnsafeBytes { raw in Result { () throws(ContentError) in try writer.append(raw) } }.get()
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
