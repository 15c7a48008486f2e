// SPDX-License-Identifier: Apache-2.0
// The libFuzzer entry points of kiosk-fuzz, one executable holding every fuzz target, built only
// by Tests/fuzz/run.sh (`swift build --sanitize fuzzer --sanitize address`: libFuzzer's own main
// drives it). The target is the program name's suffix (run.sh links kiosk-fuzz-manifest,
// kiosk-fuzz-png, ... to it, so libFuzzer's child runs and -minimize_crash keep it), or the
// environment's KIOSK_FUZZ_TARGET. Options and corpus directories are libFuzzer's
// (https://llvm.org/docs/LibFuzzer.html).
import Glibc

/// A fuzz target: one input, any bytes. It returns normally or stops the process through
/// ``fuzzFailure(_:_:)`` (an invariant broken) or a sanitizer report.
typealias FuzzTarget = (_ data: [UInt8]) -> Void

let fuzzTargets: [(name: String, run: FuzzTarget, what: String)] = [
    ("manifest", fuzzManifest, "the manifest, both forms, local and remote origin; re-serialised and parsed again to the same manifest"),
    ("config", fuzzConfig, "the configuration file (--config); errors name the file and line"),
    ("control", fuzzControl, "the control socket: line splitting and request parsing; replies parse back"),
    ("mqtt", fuzzMQTT, "MQTT commands (topic, payload, retain flag), broker URLs, event lines to outbox payloads"),
    ("outbox", fuzzOutbox, "the MQTT outbox file: replay up to the first bad line, the rewrite replays the same"),
    ("exif", fuzzEXIF, "the EXIF reader: orientation and DateTimeOriginal (APP1 segment, bare TIFF, PNG eXIf)"),
    ("shuffle", fuzzShuffleRound, "the shuffle round kept in the state directory, restored and played two rounds"),
    ("jpeg", fuzzJPEG, "JPEG bytes to a fitted frame, streamed and whole"),
    ("png", fuzzPNG, "PNG bytes to a fitted frame, streamed and whole"),
    ("webp", fuzzWebP, "WebP bytes to a fitted frame"),
    ("gif", fuzzGIF, "GIF bytes to a fitted frame"),
    ("animation", fuzzAnimation, "animated GIF or WebP bytes played frame by frame into a fitted frame"),
    ("heif", fuzzHEIF, "HEIF/AVIF bytes to a fitted frame (libheif)"),
    ("hosts", fuzzHosts, "host names and addresses (every numeric form), --allow-hosts lists, the policy's decisions"),
    ("redirects", fuzzRedirects,
     "a request's redirects as libcurl hands their headers over: scheme, downgrade, host, loop, limit"),
    ("icc", fuzzICC, "ICC profile bytes through Little CMS: embedded in each pixel layout, and as the screen's"),
    ("touch", fuzzTouch, "evdev events (any type, code, value; SYN_DROPPED anywhere) through the decoder and the gesture recogniser"),
]

/// The target libFuzzer calls, chosen in ``fuzzInitialize(_:_:)``.
nonisolated(unsafe) var selectedTarget: FuzzTarget?

/// Writes `text` to stderr.
func fuzzLog(_ text: String) {
    _ = text.withCString { write(2, $0, strlen($0)) }
}

/// Stops the run as a crash that libFuzzer saves (`crash-<sha1>`): an invariant is broken.
func fuzzFailure(_ message: String, _ data: [UInt8]) -> Never {
    fuzzLog("kiosk-fuzz: invariant broken: \(message)\n")
    abort()
}

@_cdecl("LLVMFuzzerInitialize")
public func fuzzInitialize(_ argc: UnsafeMutablePointer<Int32>,
                           _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>) -> Int32 {
    let program = argv.pointee.flatMap { $0.pointee.map { String(cString: $0) } } ?? ""
    let base = program.split(separator: "/").last.map(String.init) ?? program
    var name = base.hasPrefix("kiosk-fuzz-") ? String(base.dropFirst("kiosk-fuzz-".count)) : ""
    if name.isEmpty, let env = getenv("KIOSK_FUZZ_TARGET") { name = String(cString: env) }
    guard let target = fuzzTargets.first(where: { $0.name == name }) else {
        var usage = "kiosk-fuzz: no target \"\(name)\": run it as kiosk-fuzz-TARGET or with KIOSK_FUZZ_TARGET=TARGET\ntargets:\n"
        for t in fuzzTargets { usage += "  \(t.name): \(t.what)\n" }
        fuzzLog(usage)
        exit(64)
    }
    selectedTarget = target.run
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> Int32 {
    selectedTarget?(count == 0 || bytes == nil ? [] : Array(UnsafeBufferPointer(start: bytes, count: count)))
    return 0
}
