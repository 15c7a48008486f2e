// SPDX-License-Identifier: Apache-2.0
// The text parsers' fuzz targets: manifest, configuration file, control socket, EXIF.
import FoundationEssentials
import KioskCore
import KioskSystem
@testable import KioskImaging
@testable import KioskContent
@testable import KioskApp

// MARK: - manifest

/// The two origins a manifest comes from: a download (every `src` resolved against its URL) and
/// a playlist file on the command line.
let manifestOrigins: [ManifestOrigin] = [.remote(URL(string: "https://cdn.example/shows/lobby/manifest.json")!),
                                         .local(path: "/etc/kiosk-carousel/lobby.json")]

/// A manifest written back as JSON in its own form: resolved `src` values, durations in seconds,
/// fade in milliseconds, as docs/manifest.md describes them.
func manifestJSON(_ manifest: Manifest) -> [UInt8] {
    func seconds(_ d: Duration) -> JSONValue { .double(Double(d / .milliseconds(1)) / 1000) }
    var top: [String: JSONValue] = [:]
    var items: [JSONValue] = []
    for item in manifest.items {
        var fields: [String: JSONValue] = ["src": .string(item.src)]
        if let d = item.duration { fields["duration"] = seconds(d) }
        if let f = item.fit { fields["fit"] = .string(f.rawValue) }
        if let id = item.id { fields["id"] = .string(id) }
        if let h = item.sha256 { fields["sha256"] = .string(h) }
        items.append(.object(fields))
    }
    switch manifest.format {
    case .items:
        top["items"] = .array(items)
        if let i = manifest.interval { top["interval"] = seconds(i) }
        if let f = manifest.fade { top["fade"] = .int(Int64(f / .milliseconds(1))) }
        if let f = manifest.fit { top["fit"] = .string(f.rawValue) }
        if let b = manifest.brightness { top["brightness"] = .string(b.description) }
        if let t = manifest.presenceTimeout { top["presence_timeout"] = seconds(t) }
    case .banner:
        top["imgs"] = .array(items)
    }
    return JSONValue.object(top).serialized()
}

/// Any bytes as a manifest of each origin. Invariants: what parses re-serialises to JSON that
/// parses to the same manifest (the same items, resolved sources unchanged by resolving again);
/// a local manifest's sources are absolute paths or http(s) URLs; a remote one's http(s) URLs.
func fuzzManifest(_ data: [UInt8]) {
    for origin in manifestOrigins {
        guard let manifest = try? Manifest.parse(data, origin: origin, maxItems: 1000) else { continue }
        for item in manifest.items {
            let remote = ManifestItem.isRemote(item.src)
            guard remote || (origin != manifestOrigins[0] && item.src.hasPrefix("/")) else {
                fuzzFailure("\(origin.name): item src \"\(item.src)\" is neither an http(s) URL nor an absolute path",
                            data)
            }
        }
        let again = manifestJSON(manifest)
        do {
            let back = try Manifest.parse(again, origin: origin, maxItems: 1000)
            guard back == manifest else {
                fuzzFailure("\(origin.name): re-serialised manifest differs:\n\(manifest)\n\(back)\n"
                                + "from \(String(decoding: again, as: UTF8.self))", data)
            }
        } catch {
            fuzzFailure("\(origin.name): re-serialised manifest refused: \(error)\n"
                            + "\(String(decoding: again, as: UTF8.self))", data)
        }
    }
}

// MARK: - configuration file

/// Any bytes as a configuration file. Invariant: every error names the file and a line.
func fuzzConfig(_ data: [UInt8]) {
    var settings = Settings()
    let file = "/etc/kiosk-carousel/kiosk-carousel.conf"
    do {
        try CommandLineParser.applyConfig(data, file: file, to: &settings)
    } catch {
        let rest = error.message.dropFirst(file.count + 1)
        guard error.message.hasPrefix(file + ":"), let colon = rest.firstIndex(of: ":"), Int(rest[..<colon]) != nil
        else {
            fuzzFailure("config error without FILE:LINE: \(error.message)", data)
        }
    }
}

// MARK: - control socket

/// The lines a ``ControlLineReader`` gives for `data` received in chunks of the given sizes.
func controlLines(_ data: [UInt8], maxLineBytes: Int, chunks: (Int) -> Int) -> [ControlLineReader.Line] {
    var reader = ControlLineReader(maxLineBytes: maxLineBytes)
    var lines: [ControlLineReader.Line] = []
    var offset = 0
    var n = 0
    while offset < data.count {
        let end = min(data.count, offset + chunks(n))
        reader.append(data[offset..<end])
        while let line = reader.next(endOfInput: false) { lines.append(line) }
        offset = end
        n += 1
    }
    while let line = reader.next(endOfInput: true) { lines.append(line) }
    return lines
}

/// Any bytes a client may send. Invariants: the same lines whether the bytes come at once or in
/// small pieces; no line over the limit, blank, or holding a newline; every request, parsed or
/// refused, gets one reply line of JSON with the request's `request_id`; any JSON value read
/// is written back to the same value.
func fuzzControl(_ data: [UInt8]) {
    let maxLineBytes = 512
    let whole = controlLines(data, maxLineBytes: maxLineBytes, chunks: { _ in Int.max / 2 })
    let pieces = controlLines(data, maxLineBytes: maxLineBytes, chunks: { n in Int(data[n % data.count] % 7) + 1 })
    guard whole == pieces else { fuzzFailure("lines differ with the chunking:\n\(whole)\n\(pieces)", data) }
    for line in whole {
        guard case .request(let request) = line else { continue }
        guard request.count <= maxLineBytes, !request.contains(0x0A),
              !request.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) else {
            fuzzFailure("bad request line \(request)", data)
        }
        checkControlRequest(request, data)
    }
    checkControlRequest(data, data)
}

func checkControlRequest(_ request: [UInt8], _ data: [UInt8]) {
    if let value = try? JSONValue.parse(request) {
        let written = value.serialized()
        guard let back = try? JSONValue.parse(written), back == value else {
            fuzzFailure("JSON value not read back the same: \(value) wrote "
                            + "\(String(decoding: written, as: UTF8.self))", data)
        }
    }
    let id: JSONValue?
    let reply: [UInt8]
    switch ControlProtocol.parse(request) {
    case .success(let parsed):
        id = parsed.id
        reply = ControlProtocol.reply(id: parsed.id, error: "success")
    case .failure(let failure):
        id = failure.id
        reply = ControlProtocol.reply(id: failure.id, error: failure.message)
    }
    guard reply.last == 0x0A, reply.firstIndex(of: 0x0A) == reply.count - 1,
          case .object(let fields)? = try? JSONValue.parse(reply.dropLast()),
          case .string? = fields["error"], fields["request_id"] == id else {
        fuzzFailure("reply \(String(decoding: reply, as: UTF8.self)) is not one JSON line with the request's id "
                        + "\(String(describing: id))", data)
    }
}

// MARK: - EXIF

/// Any bytes as an APP1 EXIF segment and as a bare TIFF structure (the WebP and HEIF form),
/// and the metadata reader over them as a file, as a JPEG's APP1 "Exif" and as a PNG's eXIf.
/// Invariants: the orientation found turns a bitmap to its oriented size; a capture time found
/// is a real date and time of day.
func fuzzEXIF(_ data: [UInt8]) {
    for orientation in [EXIFOrientation.parse(exifSegment: data), EXIFOrientation.parse(tiff: data)] {
        let bitmap = Bitmap(width: 3, height: 2)
        let turned = orientation.apply(to: bitmap)
        let size = orientation.orientedSize(width: 3, height: 2)
        guard turned.width == size.width, turned.height == size.height,
              size == (orientation.swapsAxes ? (2, 3) : (3, 2)) else {
            fuzzFailure("orientation \(orientation) turned 3x2 into \(turned.width)x\(turned.height)", data)
        }
    }
    let segment = Array("Exif\0\0".utf8) + data.prefix(65_000)
    let n = segment.count + 2
    let jpeg: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE1, UInt8(n >> 8), UInt8(n & 0xFF)] + segment + [0xFF, 0xD9]
    let length = data.count
    let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A,
                        UInt8(length >> 24 & 0xFF), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF),
                        UInt8(length & 0xFF)] + Array("eXIf".utf8) + data + [0, 0, 0, 0]
    for bytes in [data, jpeg, png] {
        guard let t = ImageDescription.metadata(bytes).dateTimeOriginal else { continue }
        let d = t.date
        guard (1...12).contains(d.month), (1...LocalDate.daysIn(month: d.month, year: d.year)).contains(d.day),
              (0..<86_400).contains(t.secondOfDay), abs(t.utcOffsetSeconds ?? 0) <= 14 * 3600 else {
            fuzzFailure("capture time \(t) is not a real date and time", data)
        }
    }
}

// MARK: - shuffle round

/// Any bytes as the state directory's `shuffle-round`, restored over a playlist of eight files
/// and played for two rounds. Invariants: a text that decodes encodes again to the same places;
/// no source comes twice within a round; each completed round shows every source.
func fuzzShuffleRound(_ data: [UInt8]) {
    guard var bag = ShuffleBag(decoding: String(decoding: data, as: UTF8.self), seed: 1) else { return }
    if let again = ShuffleBag(decoding: bag.encoded(), seed: 1),
       again.upcoming != bag.upcoming || again.shownThisRound != bag.shownThisRound {
        fuzzFailure("the round does not encode to itself", data)
    }
    let sources = (0..<8).map { "/p/\($0).jpg" }
    bag.update(sources: sources)
    var round = Set(bag.shownThisRound), current: String?
    var completed = 0
    for _ in 0..<40 where completed < 2 {
        guard let next = bag.next(after: current) else { fuzzFailure("a bag of eight has no next", data) }
        if round.contains(next) { fuzzFailure("\(next) twice within a round", data) }
        round.insert(next)
        current = next
        if bag.shown(next) {
            if completed > 0, round != Set(sources) { fuzzFailure("a round without every source", data) }
            completed += 1
            round = []
        }
    }
    if completed < 2 { fuzzFailure("two rounds of eight did not end in 40 steps", data) }
}
