// SPDX-License-Identifier: Apache-2.0
import FoundationEssentials
import Glibc
import KioskCore
import KioskSystem

/// Where a manifest came from; decides how `src` values are resolved and which are allowed.
public enum ManifestOrigin: Equatable, Sendable {
    /// Fetched from this URL (after redirects: the URL that answered, which is the base URI of
    /// RFC 3986 §5.1.3). Every `src` must resolve to an http or https URL.
    case remote(URL)
    /// A playlist file given on the command line (local configuration). A `src` may be an
    /// absolute path, a path relative to the file's directory, a `file://` URL or an http(s) URL.
    case local(path: String)

    /// The URL or path, for error messages.
    public var name: String {
        switch self {
        case .remote(let url): return url.absoluteString
        case .local(let path): return path
        }
    }
}

/// One image of a manifest.
public struct ManifestItem: Equatable, Sendable {
    /// The resolved source: an absolute http(s) URL string, or (local playlists only) an
    /// absolute or manifest-relative file path.
    public var src: String
    /// How long it stays on screen (`duration` in the JSON, seconds); nil: the show's interval.
    public var duration: Duration?
    /// How it is placed (`fit`: `fit`, `fill`, `stretch` or `blur`); nil: the show's fit.
    public var fit: FitMode?
    /// The manifest's own identifier for the item (`id`, a string), if any.
    public var id: String?
    /// The SHA-256 of the image's bytes (`sha256`, 64 hex digits, stored lowercase), if the
    /// manifest gives one: a cached or downloaded body must match it.
    public var sha256: String?
    /// When it is in the rotation (`schedule`, docs/schedules.md); nil: always.
    public var schedule: ItemSchedule?
    /// `fallback`: shown only while no other item is in the rotation.
    public var fallback = false
    /// Words drawn at the bottom of the picture (`caption`, a string), if any.
    public var caption: String?
    /// How the show moves to this item (`transition`: `fade`, `slide` or `cut`); nil: the
    /// manifest's show-wide `transition`, else the command line's.
    public var transition: TransitionStyle?

    public init(src: String, duration: Duration? = nil, fit: FitMode? = nil, id: String? = nil, sha256: String? = nil,
                caption: String? = nil) {
        self.caption = caption
        self.src = src; self.duration = duration; self.fit = fit; self.id = id; self.sha256 = sha256
    }

    /// True when ``src`` is an http or https URL (to be fetched), false for a local file.
    public var isRemote: Bool { Self.isRemote(src) }

    /// True when `source` (a playlist item's, a SOURCE argument) is an http or https URL: the
    /// one test for "fetch it" rather than "open it".
    public static func isRemote(_ source: String) -> Bool {
        let lower = source.lowercased()
        return lower.hasPrefix("http://") || lower.hasPrefix("https://")
    }
}

/// A parsed, validated playlist manifest (docs/manifest.md).
///
/// Two JSON forms are read, UTF-8 with or without a byte-order mark:
///
/// ```json
/// {"interval": 8, "fade": 800, "fit": "fill",
///  "items": [{"src": "a.jpg"}, {"src": "https://cdn.example/b.png", "duration": 15, "fit": "fit",
///             "id": "promo-2", "sha256": "9f86d0…"}]}
/// ```
///
/// - `interval`: seconds from one image fully shown to the next (a number, 0 < x ≤ 86400);
/// - `fade`: cross-fade length in milliseconds (a number, 0 ≤ x ≤ 60000);
/// - `fit`: `fit`, `fill`, `stretch` or `blur` (``FitMode``);
/// - `brightness`: daily tiers as `--brightness` takes them (`"07:00=100,20:00=40,23:00=off"`,
///   ``BrightnessTiers``; docs/power.md);
/// - `presence_timeout`: seconds as `--presence-timeout` (a number, 0 ≤ x ≤ 86400; 0: presence off);
/// - `order`: the play order as `--order` takes it (``PlaylistOrder``: `name`, `shuffle`, ...);
/// - `transition`: `fade`, `slide` or `cut` as `--transition` takes it (``TransitionStyle``);
/// - `items[i].src` (required, non-empty), `duration` (seconds, 0 < x ≤ 86400), `fit`, `id`
///   (a string), `sha256` (64 hex digits), `caption` (a string), `transition` (how the show
///   moves to the item), `schedule` and `fallback`
///   (ManifestSchedule.swift). Other keys are ignored.
///
/// and the older banner form `{"imgs":[{"src":"/static/a.jpg"}]}` (only `src` is read).
///
/// A relative `src` is resolved against the manifest's URL as RFC 3986 §5.2 says (FoundationEssentials'
/// `URL(string:relativeTo:)`).
public struct Manifest: Equatable, Sendable {
    /// Which of the two forms the JSON had.
    public enum Format: String, Sendable { case items, banner }

    public var format: Format
    /// Show-wide interval (`interval`, seconds in the JSON), if given.
    public var interval: Duration?
    /// Show-wide cross-fade (`fade`, milliseconds in the JSON), if given.
    public var fade: Duration?
    /// Show-wide fit, if given.
    public var fit: FitMode?
    /// Brightness tiers (`brightness`), if given.
    public var brightness: BrightnessTiers?
    /// The motion sensor's timeout (`presence_timeout`, seconds in the JSON; zero: presence off), if given.
    public var presenceTimeout: Duration?
    /// The play order (`order`), if given (docs/carousel.md "Order").
    public var order: PlaylistOrder?
    /// How the show moves between its items (`transition`), if given; an item's own wins.
    public var transition: TransitionStyle?
    public var items: [ManifestItem]

    public init(format: Format = .items, interval: Duration? = nil, fade: Duration? = nil, fit: FitMode? = nil,
                items: [ManifestItem]) {
        self.format = format; self.interval = interval; self.fade = fade; self.fit = fit; self.items = items
    }

    /// The most items a manifest may list (more is refused, not truncated).
    public static let defaultMaxItems = 10_000

    /// Parses and validates manifest bytes.
    ///
    /// - Parameters:
    ///   - bytes: the body as received (UTF-8, an optional `EF BB BF` BOM is skipped).
    ///   - origin: where it came from: decides how `src` is resolved and what is allowed.
    ///   - maxItems: more items than this are refused.
    /// - Throws: ``ContentError/manifestEncoding(source:reason:)`` (UTF-16/UTF-32 BOM, NUL bytes,
    ///   invalid UTF-8), ``ContentError/manifestSyntax(source:reason:)`` (not JSON), or
    ///   ``ContentError/manifestInvalid(source:path:reason:)`` with the place (`items[3].src`)
    ///   for a wrong type, an out-of-range number, an unknown fit, an empty `src`, a `src` that
    ///   is not http(s) in a remote manifest, or too many items.
    public static func parse(_ bytes: [UInt8], origin: ManifestOrigin,
                             maxItems: Int = defaultMaxItems) throws(ContentError) -> Manifest {
        let source = origin.name
        let body = try utf8Body(bytes, source: source)
        let root: JSONValue
        do {
            root = try JSONValue.parse(body)
        } catch {
            // jansson's words and place: `']' expected near '}' (line 2, column 2)`.
            throw .manifestSyntax(source: source, reason: error.reason)
        }
        var reader = Reader(source: source, origin: origin)
        return try reader.manifest(root, maxItems: maxItems)
    }

    /// The refusal of a manifest fetched from the https URL `base` that names a plain http
    /// image (docs/security.md: no downgrade unless `--allow-http-from-https`), naming the
    /// first such item; nil when `base` is not https or no item is http.
    public func downgradeProblem(base: URL) -> ContentError? {
        guard base.scheme?.lowercased() == "https" else { return nil }
        guard let index = items.firstIndex(where: { $0.src.startsWithScheme("http:") }) else { return nil }
        let key = format == .items ? "items" : "imgs"
        return .manifestInvalid(source: base.absoluteString, path: "\(key)[\(index)].src",
                                reason: "\(Log.hidingPasswords(items[index].src)) is plain http in an https manifest: "
                                    + "refused (--allow-http-from-https allows it)")
    }

    /// Reads and parses a local playlist file (a manifest given on the command line: it may name
    /// local files and http(s) URLs). Blocking file I/O: call it at start-up or off the frame
    /// loop. Throws what ``parse(_:origin:maxItems:)`` throws, or ``ContentError/system(_:)``
    /// when the file cannot be read (a missing file is `ENOENT`).
    public static func load(path: String, maxItems: Int = defaultMaxItems) throws(ContentError) -> Manifest {
        let read: [UInt8]?
        do { read = try AtomicFile.read(path) } catch { throw .system(error) }
        guard let bytes = read else { throw .system(SystemError(operation: "open", path: path, errno: ENOENT)) }
        return try parse(bytes, origin: .local(path: path), maxItems: maxItems)
    }

    /// Strips a UTF-8 BOM; refuses other BOMs, NUL bytes and invalid UTF-8.
    static func utf8Body(_ bytes: [UInt8], source: String) throws(ContentError) -> ArraySlice<UInt8> {
        if bytes.starts(with: [0x00, 0x00, 0xFE, 0xFF]) || bytes.starts(with: [0xFF, 0xFE, 0x00, 0x00]) {
            throw .manifestEncoding(source: source, reason: "it starts with a UTF-32 byte-order mark")
        }
        if bytes.starts(with: [0xFE, 0xFF]) || bytes.starts(with: [0xFF, 0xFE]) {
            throw .manifestEncoding(source: source, reason: "it starts with a UTF-16 byte-order mark")
        }
        var body = bytes[...]
        if body.starts(with: [0xEF, 0xBB, 0xBF]) { body = body.dropFirst(3) }
        if let nul = body.firstIndex(of: 0) {
            throw .manifestEncoding(source: source,
                                    reason: "NUL byte at offset \(nul) (UTF-16 or UTF-32 without a byte-order mark?)")
        }
        if String(validating: body, as: UTF8.self) == nil {
            throw .manifestEncoding(source: source, reason: "invalid UTF-8 byte sequence")
        }
        return body
    }
}

/// Walks the JSON tree, validating as it goes; every error names its path.
private struct Reader {
    let source: String
    let origin: ManifestOrigin

    func fail(_ path: String, _ reason: String) -> ContentError {
        .manifestInvalid(source: source, path: path, reason: reason)
    }

    func object(_ value: JSONValue, _ path: String) throws(ContentError) -> [String: JSONValue] {
        guard case .object(let o) = value else { throw fail(path, "expected an object, found \(value.typeName)") }
        return o
    }

    func number(_ value: JSONValue?, _ path: String, _ range: ClosedRange<Double>, excludingLower: Bool,
                unit: String) throws(ContentError) -> Double? {
        guard let value, case let v = value, !isNull(v) else { return nil }
        guard let n = v.number else { throw fail(path, "expected a number (\(unit)), found \(v.typeName)") }
        let low = excludingLower ? "more than \(format(range.lowerBound))" : "at least \(format(range.lowerBound))"
        guard n.isFinite, n <= range.upperBound, excludingLower ? n > range.lowerBound : n >= range.lowerBound else {
            throw fail(path, "\(format(n)) \(unit) is out of range (\(low) and at most \(format(range.upperBound)))")
        }
        return n
    }

    func string(_ value: JSONValue?, _ path: String) throws(ContentError) -> String? {
        guard let value, !isNull(value) else { return nil }
        guard case .string(let s) = value else { throw fail(path, "expected a string, found \(value.typeName)") }
        return s
    }

    func isNull(_ v: JSONValue) -> Bool { if case .null = v { return true }; return false }

    func format(_ d: Double) -> String { d == d.rounded() && abs(d) < 1e15 ? String(Int(d)) : String(d) }

    func transition(_ value: JSONValue?, _ path: String) throws(ContentError) -> TransitionStyle? {
        guard let text = try string(value, path) else { return nil }
        guard let style = TransitionStyle(rawValue: text) else {
            let known = TransitionStyle.allCases.map(\.rawValue).joined(separator: ", ")
            throw fail(path, "\"\(text)\" is not a transition (one of \(known))")
        }
        return style
    }

    func fit(_ value: JSONValue?, _ path: String) throws(ContentError) -> FitMode? {
        guard let s = try string(value, path) else { return nil }
        guard let mode = FitMode(rawValue: s) else {
            throw fail(path, "\"\(s)\" is not a fit mode "
                       + "(one of \(FitMode.allCases.map(\.rawValue).joined(separator: ", ")))")
        }
        return mode
    }

    mutating func manifest(_ root: JSONValue, maxItems: Int) throws(ContentError) -> Manifest {
        let top = try object(root, "(root)")
        let format: Manifest.Format
        let list: JSONValue
        if let items = top["items"] {
            format = .items; list = items
        } else if let imgs = top["imgs"] {
            format = .banner; list = imgs
        } else {
            throw fail("(root)", "neither \"items\" nor \"imgs\" is present")
        }
        let key = format == .items ? "items" : "imgs"
        guard case .array(let entries) = list else { throw fail(key, "expected an array, found \(list.typeName)") }
        guard entries.count <= maxItems else {
            throw fail(key, "\(entries.count) items is more than the limit of \(maxItems)")
        }
        var manifest = Manifest(format: format, items: [])
        if format == .items {
            if let s = try number(top["interval"], "interval", CarouselConfig.intervalRange, excludingLower: false,
                                  unit: "seconds") {
                manifest.interval = .milliseconds(Int64((s * 1000).rounded()))
            }
            if let ms = try number(top["fade"], "fade", 0...60000, excludingLower: false, unit: "ms") {
                manifest.fade = .milliseconds(Int64(ms.rounded()))
            }
            manifest.fit = try fit(top["fit"], "fit")
            manifest.transition = try transition(top["transition"], "transition")
            if let text = try string(top["brightness"], "brightness") {
                do {
                    manifest.brightness = try BrightnessTiers.parse(text)
                } catch {
                    throw fail("brightness", error.description)
                }
            }
            if let s = try number(
                top["presence_timeout"], "presence_timeout", 0...86_400, excludingLower: false, unit: "seconds")
            {
                manifest.presenceTimeout = .milliseconds(Int64((s * 1000).rounded()))
            }
            if let text = try string(top["order"], "order") {
                guard let order = PlaylistOrder(rawValue: text) else {
                    let known = PlaylistOrder.allCases.map(\.rawValue).joined(separator: ", ")
                    throw fail("order", "\"\(text)\" is not an order (one of \(known))")
                }
                manifest.order = order
            }
        }
        manifest.items.reserveCapacity(entries.count)
        for (index, entry) in entries.enumerated() {
            let path = "\(key)[\(index)]"
            let fields = try object(entry, path)
            guard let raw = try string(fields["src"], path + ".src") else { throw fail(path + ".src", "missing") }
            // Blank: only tabs and space separators (Unicode Zs), as CharacterSet.whitespaces.
            guard !raw.unicodeScalars.allSatisfy({ $0 == "\t" || $0.properties.generalCategory == .spaceSeparator })
            else { throw fail(path + ".src", "empty") }
            var item = ManifestItem(src: try resolve(raw, path + ".src"))
            if format == .items {
                if let s = try number(fields["duration"], path + ".duration", CarouselConfig.intervalRange,
                                      excludingLower: false, unit: "seconds") {
                    item.duration = .milliseconds(Int64((s * 1000).rounded()))
                }
                item.fit = try fit(fields["fit"], path + ".fit")
                item.id = try string(fields["id"], path + ".id")
                item.caption = try string(fields["caption"], path + ".caption")
                item.transition = try transition(fields["transition"], path + ".transition")
                if let h = try string(fields["sha256"], path + ".sha256") {
                    let lower = h.lowercased()
                    guard lower.utf8.count == 64,
                          lower.utf8.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) }) else {
                        throw fail(path + ".sha256", "\"\(h)\" is not 64 hex digits")
                    }
                    item.sha256 = lower
                }
                item.schedule = try ManifestSchedule.read(fields["schedule"], path: path + ".schedule", fail: fail)
                item.fallback = try ManifestSchedule.fallback(fields["fallback"], path: path + ".fallback", fail: fail)
            }
            manifest.items.append(item)
        }
        return manifest
    }

    /// RFC 3986 §5.2 reference resolution for a remote manifest; paths and URLs for a local one.
    func resolve(_ raw: String, _ path: String) throws(ContentError) -> String {
        if raw.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
            throw fail(path, "contains a control character")
        }
        switch origin {
        case .remote(let base):
            guard let url = URL(string: raw, relativeTo: base)?.absoluteURL else {
                throw fail(path, "\"\(raw)\" is not a URL reference")
            }
            let scheme = url.scheme?.lowercased() ?? ""
            guard scheme == "http" || scheme == "https" else {
                throw fail(path, "\"\(raw)\" is not an http or https URL "
                           + "(a remote manifest may only name http(s) URLs)")
            }
            guard let host = url.host, !host.isEmpty else { throw fail(path, "\"\(raw)\" has no host") }
            if let problem = HTTPURL.problem(url.absoluteString) { throw fail(path, problem) }
            return url.absoluteString
        case .local(let manifestPath):
            // A URL starts with a scheme (RFC 3986 section 3.1: a letter, then letters, digits,
            // "+", "-", "."): `/srv/12:00://a.jpg` is a path with a colon in it.
            if let colon = raw.firstIndex(of: ":"),
               raw[colon...].hasPrefix("://") || raw.lowercased().hasPrefix("file:"),
               raw.first!.isASCII && raw.first!.isLetter,
               raw[..<colon].allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) }) {
                let scheme = raw[..<colon].lowercased()
                guard let url = URL(string: raw) else { throw fail(path, "\"\(raw)\" is not a URL") }
                switch scheme {
                case "http", "https":
                    guard let host = url.host, !host.isEmpty else { throw fail(path, "\"\(raw)\" has no host") }
                    if let problem = HTTPURL.problem(url.absoluteString) { throw fail(path, problem) }
                    return url.absoluteString
                case "file":
                    guard url.host == nil || url.host == "" || url.host == "localhost" else {
                        throw fail(path, "\"\(raw)\" names another host")
                    }
                    // `file:a.jpg` has the relative path `a.jpg` (RFC 8089 section 2 allows only
                    // absolute ones); `%0A` decodes to a control character.
                    let decoded = url.path
                    guard decoded.hasPrefix("/") else {
                        throw fail(path, "\"\(raw)\" is not an absolute file URL (file:///PATH)")
                    }
                    if decoded.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
                        throw fail(path, "\"\(raw)\" decodes to a path with a control character")
                    }
                    return decoded
                default:
                    throw fail(path, "\"\(raw)\": scheme \(scheme) is not http, https or file")
                }
            }
            if raw.hasPrefix("/") { return raw }
            let dir: String
            if let slash = manifestPath.lastIndex(of: "/") { dir = String(manifestPath[...slash]) } else { dir = "" }
            return dir + raw
        }
    }
}
