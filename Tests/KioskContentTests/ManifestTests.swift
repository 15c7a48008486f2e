// SPDX-License-Identifier: Apache-2.0
import Foundation
import KioskContent
import KioskCore
import Testing

private let remote = ManifestOrigin.remote(URL(string: "http://kiosk.example/shows/lobby/show.json?v=3")!)

private func parse(_ text: String, _ origin: ManifestOrigin = remote,
                   maxItems: Int = Manifest.defaultMaxItems) throws(ContentError) -> Manifest {
    try Manifest.parse(Array(text.utf8), origin: origin, maxItems: maxItems)
}

private func error(_ text: String, _ origin: ManifestOrigin = remote,
                   maxItems: Int = Manifest.defaultMaxItems) -> ContentError? {
    do { _ = try parse(text, origin, maxItems: maxItems); return nil } catch { return error }
}

@Test func theObjectFormWithEveryField() throws {
    let m = try parse("""
        {"interval": 8, "fade": 800, "fit": "fill", "unknown": [1],
         "items": [{"src": "a.jpg"},
                   {"src": "https://cdn.example/b.png?x=1", "duration": 2.5, "fit": "stretch", "id": "promo",
                    "sha256": "9F86D081884C7D659A2FEAA0C55AD015A3BF4F1B2B0B822CD15D6C15B0F00A08"}]}
        """)
    #expect(m.format == .items)
    #expect(m.interval == .seconds(8))
    #expect(m.fade == .milliseconds(800))
    #expect(m.fit == .fill)
    #expect(m.items == [
        ManifestItem(src: "http://kiosk.example/shows/lobby/a.jpg"),
        ManifestItem(src: "https://cdn.example/b.png?x=1", duration: .milliseconds(2500), fit: .stretch, id: "promo",
                     sha256: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"),
    ])
}

@Test func fitBlurShowWideAndPerItem() throws {
    let m = try parse(#"{"fit":"blur","items":[{"src":"a.jpg"},{"src":"b.jpg","fit":"blur"},"#
                      + #"{"src":"c.jpg","fit":"fill"}]}"#)
    #expect(m.fit == .blur)
    #expect(m.items.map(\.fit) == [nil, .blur, .fill])
}

@Test func theBannerForm() throws {
    let m = try parse(#"{"imgs":[{"src":"/static/a.jpg"},{"src":"b.jpg","duration":"ignored"}]}"#)
    #expect(m.format == .banner)
    #expect(m.items.map(\.src) == ["http://kiosk.example/static/a.jpg", "http://kiosk.example/shows/lobby/b.jpg"])
    #expect(m.interval == nil && m.fade == nil && m.fit == nil)
}

/// RFC 3986 §5.4.1 (normal) and §5.4.2 (abnormal) examples, base `http://a/b/c/d;p?q`; the
/// ones whose result is not an http URL (`g:h`) are refused instead (remote manifest).
@Test func relativeReferencesResolveAsRFC3986Says() throws {
    let base = ManifestOrigin.remote(URL(string: "http://a/b/c/d;p?q")!)
    let examples: [(String, String)] = [
        ("g", "http://a/b/c/g"), ("./g", "http://a/b/c/g"), ("g/", "http://a/b/c/g/"), ("/g", "http://a/g"),
        ("//g", "http://g"), ("?y", "http://a/b/c/d;p?y"), ("g?y", "http://a/b/c/g?y"), ("#s", "http://a/b/c/d;p?q#s"),
        ("g#s", "http://a/b/c/g#s"), ("g?y#s", "http://a/b/c/g?y#s"), (";x", "http://a/b/c/;x"),
        ("g;x", "http://a/b/c/g;x"), ("g;x?y#s", "http://a/b/c/g;x?y#s"), (".", "http://a/b/c/"),
        ("./", "http://a/b/c/"),
        ("..", "http://a/b/"), ("../", "http://a/b/"), ("../g", "http://a/b/g"), ("../..", "http://a/"),
        ("../../", "http://a/"), ("../../g", "http://a/g"),
        // 5.4.2 abnormal
        ("../../../g", "http://a/g"), ("../../../../g", "http://a/g"), ("/./g", "http://a/g"), ("/../g", "http://a/g"),
        ("g.", "http://a/b/c/g."), (".g", "http://a/b/c/.g"), ("g..", "http://a/b/c/g.."), ("..g", "http://a/b/c/..g"),
        ("./../g", "http://a/b/g"), ("./g/.", "http://a/b/c/g/"), ("g/./h", "http://a/b/c/g/h"),
        ("g/../h", "http://a/b/c/h"), ("g;x=1/./y", "http://a/b/c/g;x=1/y"), ("g;x=1/../y", "http://a/b/c/y"),
        ("g?y/./x", "http://a/b/c/g?y/./x"),
        ("g?y/../x", "http://a/b/c/g?y/../x"), ("g#s/./x", "http://a/b/c/g#s/./x"),
        ("g#s/../x", "http://a/b/c/g#s/../x"),
        // §5.4.2: "http:g" -> "http:g" (strict) or "http://a/b/c/g" (for backward compatibility)
        ("http:g", "http://a/b/c/g"),
    ]
    var wrong: [String] = []
    for (reference, expected) in examples {
        let json = #"{"items":[{"src":"\#(reference)"}]}"#
        do {
            let got = try Manifest.parse(Array(json.utf8), origin: base).items[0].src
            if got != expected && !(reference == "http:g" && got == "http:g") {
                wrong.append("\(reference) -> \(got), expected \(expected)")
            }
        } catch {
            if reference != "http:g" { wrong.append("\(reference) -> \(error)") }
        }
    }
    #expect(wrong == [])
    // "g:h" resolves to the URI g:h (§5.4.1): not http(s), refused in a remote manifest.
    #expect(error(#"{"items":[{"src":"g:h"}]}"#, base)?.kind == "manifest-invalid")
}

@Test func aUTF8ByteOrderMarkIsSkipped() throws {
    let bytes: [UInt8] = [0xEF, 0xBB, 0xBF] + Array(#"{"items":[{"src":"ä.jpg"}]}"#.utf8)
    let m = try Manifest.parse(bytes, origin: remote)
    #expect(m.items[0].src == "http://kiosk.example/shows/lobby/%C3%A4.jpg")
}

@Test func otherEncodingsAreRefused() {
    let text = #"{"items":[{"src":"a.jpg"}]}"#
    let utf16le: [UInt8] = [0xFF, 0xFE] + text.utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }
    let utf16be: [UInt8] = [0xFE, 0xFF] + text.utf16.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
    let utf16NoBOM: [UInt8] = text.utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }
    let utf32: [UInt8] = [0xFF, 0xFE, 0x00, 0x00] + text.unicodeScalars.flatMap { [UInt8($0.value & 0xFF), 0, 0, 0] }
    let latin1: [UInt8] = Array(#"{"items":[{"src":""#.utf8) + [0xE4] + Array(#".jpg"}]}"#.utf8)
    for (bytes, words) in [(utf16le, "UTF-16 byte-order mark"), (utf16be, "UTF-16 byte-order mark"),
                           (utf16NoBOM, "NUL byte"), (utf32, "UTF-32 byte-order mark"), (latin1, "invalid UTF-8")] {
        do {
            _ = try Manifest.parse(bytes, origin: remote)
            Issue.record("accepted \(words)")
        } catch {
            #expect(error.kind == "manifest-encoding")
            #expect(error.description.contains(words), "\(error)")
            #expect(error.description.hasPrefix("http://kiosk.example/shows/lobby/show.json?v=3: "))
        }
    }
}

@Test func invalidJSONSaysWhere() {
    let e = error("{\"items\": [ {\"src\": \"a.jpg\"}\n }")
    #expect(e?.kind == "manifest-syntax")
    #expect(e?.description.contains("']' expected near '}' (line 2, column 2)") == true, "\(String(describing: e))")
    #expect(error("")?.kind == "manifest-syntax")
    #expect(error("<html>502 Bad Gateway</html>")?.kind == "manifest-syntax")
}

@Test func aTrailingCommaOrARepeatedKeyIsNotJSON() {
    // RFC 8259 allows no comma after the last member; the message names it and says where.
    let array = error("{\"items\": [\n  {\"src\": \"a.jpg\"},\n  {\"src\": \"b.jpg\"},\n]}")
    #expect(array?.kind == "manifest-syntax")
    #expect(array?.description.contains("trailing comma before ']'") == true, "\(String(describing: array))")
    #expect(array?.description.contains("(line 4, column 1)") == true, "\(String(describing: array))")
    let object = error(#"{"items":[{"src":"a.jpg"}],}"#)
    #expect(object?.kind == "manifest-syntax")
    #expect(object?.description.contains("trailing comma before '}'") == true, "\(String(describing: object))")
    // Two "items": which one is meant is not said (RFC 8259 §4), so neither is taken.
    let twice = error(#"{"items":[{"src":"a.jpg"}],"items":[{"src":"b.jpg"}]}"#)
    #expect(twice?.kind == "manifest-syntax")
    #expect(twice?.description.contains("repeats a key") == true, "\(String(describing: twice))")
    // A NUL escaped in a string would reach paths and URLs: refused like a raw NUL byte.
    #expect(error(#"{"items":[{"src":"a\u0000.jpg"}]}"#)?.kind == "manifest-syntax")
}

@Test func wrongTypesAndValuesNameThePlace() {
    let cases: [(String, String)] = [
        (#"[1,2]"#, "(root): expected an object, found an array"),
        (#"{"items":{}}"#, "items: expected an array, found an object"),
        (#"{"other":[]}"#, "(root): neither \"items\" nor \"imgs\""),
        (#"{"items":[{"src":"a.jpg"},{"src":"b.jpg"},{"src":"c.jpg"},{"src":42}]}"#,
         "items[3].src: expected a string, found a number"),
        (#"{"items":[{"src":""}]}"#, "items[0].src: empty"),
        (#"{"items":[{"src":"   "}]}"#, "items[0].src: empty"),
        (#"{"items":[{"duration":3}]}"#, "items[0].src: missing"),
        (#"{"items":["a.jpg"]}"#, "items[0]: expected an object, found a string"),
        (#"{"interval":"5","items":[]}"#, "interval: expected a number (seconds), found a string"),
        (#"{"interval":true,"items":[]}"#, "interval: expected a number (seconds), found a boolean"),
        (#"{"interval":0,"items":[]}"#, "interval: 0 seconds is out of range"),
        // Below the command line's 50 ms: an interval of 0.4 ms once asked for endless moves.
        (#"{"interval":0.0004,"fade":0,"items":[]}"#, "interval: 0.0004 seconds is out of range"),
        (#"{"interval":0.049,"items":[]}"#, "interval: 0.049 seconds is out of range"),
        (#"{"items":[{"src":"a.jpg","duration":0.0001}]}"#, "items[0].duration: 0.0001 seconds is out of range"),
        (#"{"fade":-1,"items":[]}"#, "fade: -1 ms is out of range"),
        (#"{"fit":"cover","items":[]}"#, "fit: \"cover\" is not a fit mode (one of fit, fill, stretch, blur)"),
        (#"{"items":[{"src":"a.jpg","duration":1e999}]}"#,
         "manifest is not valid JSON: a number out of range: real number overflow near '1e999' (line 1, column 41)"),
        (#"{"items":[{"src":"a.jpg","id":7}]}"#, "items[0].id: expected a string, found a number"),
        (#"{"items":[{"src":"a.jpg","sha256":"abc"}]}"#, "items[0].sha256: \"abc\" is not 64 hex digits"),
        (#"{"imgs":[{"src":"a.jpg"},{"href":"b.jpg"}]}"#, "imgs[1].src: missing"),
    ]
    for (json, expected) in cases {
        let e = error(json)
        #expect(e?.description.contains(expected) == true, "\(json): \(String(describing: e))")
    }
}

@Test func aRemoteManifestMayOnlyNameHTTPURLs() {
    for src in ["file:///etc/passwd", "FILE:/etc/passwd", "ftp://kiosk.example/a.jpg", "data:image/png;base64,AAAA",
                "javascript:x"] {
        let e = error(#"{"items":[{"src":"a.jpg"},{"src":"\#(src)"}]}"#)
        #expect(e?.description.contains("items[1].src") == true, "\(src): \(String(describing: e))")
        #expect(e?.description.contains("not an http or https URL") == true, "\(src): \(String(describing: e))")
    }
    #expect(error(#"{"items":[{"src":"https:///nohost.jpg"}]}"#) != nil)
}

@Test func moreItemsThanTheCapAreRefused() throws {
    let items = (0..<11).map { #"{"src":"\#($0).jpg"}"# }.joined(separator: ",")
    let e = error(#"{"items":[\#(items)]}"#, maxItems: 10)
    #expect(e?.description.contains("items: 11 items is more than the limit of 10") == true, "\(String(describing: e))")
    #expect(try parse(#"{"items":[\#(items)]}"#, maxItems: 11).items.count == 11)
    let big = (0..<10_001).map { _ in #"{"src":"a.jpg"}"# }.joined(separator: ",")
    #expect(error(#"{"imgs":[\#(big)]}"#)?.description.contains("10001 items is more than the limit of 10000") == true)
}

@Test func aLocalPlaylistMayNameFilesAndURLs() throws {
    let m = try parse(#"{"items":[{"src":"a.jpg"},{"src":"/srv/b.png"},{"src":"file:///srv/c%20d.jpg"},"#
                      + #"{"src":"https://x.example/e.jpg"},{"src":"sub/f.jpg"}]}"#,
                      .local(path: "/etc/kiosk/show.json"))
    #expect(m.items.map(\.src)
            == ["/etc/kiosk/a.jpg", "/srv/b.png", "/srv/c d.jpg", "https://x.example/e.jpg", "/etc/kiosk/sub/f.jpg"])
    #expect(m.items.map(\.isRemote) == [false, false, false, true, false])
    #expect(error(#"{"items":[{"src":"ftp://x/a.jpg"}]}"#, .local(path: "/etc/kiosk/show.json")) != nil)
}

@Test func aLocalPlaylistFileIsReadFromDisk() throws {
    let dir = makeTempDirectory("playlist")
    try writeFile(dir + "/show.json",
                  [0xEF, 0xBB, 0xBF] + Array(#"{"fade":0,"items":[{"src":"a.jpg","duration":3}]}"#.utf8))
    let m = try Manifest.load(path: dir + "/show.json")
    #expect(m.items == [ManifestItem(src: dir + "/a.jpg", duration: .seconds(3))])
    #expect(m.fade == .zero)
    #expect(throws: ContentError.system(.init(operation: "open", path: dir + "/missing.json", errno: ENOENT))) {
        try Manifest.load(path: dir + "/missing.json")
    }
}

@Test func cacheAndStateDirectoriesFollowSystemdThenXDG() {
    #expect(ContentDirectories.cache(environment: ["CACHE_DIRECTORY": "/var/cache/kiosk-carousel:/other",
                                                   "HOME": "/root"])
            == "/var/cache/kiosk-carousel")
    #expect(ContentDirectories.state(environment: ["STATE_DIRECTORY": "/var/lib/kiosk"]) == "/var/lib/kiosk")
    #expect(ContentDirectories.cache(environment: ["XDG_CACHE_HOME": "/home/k/.c", "HOME": "/home/k"])
            == "/home/k/.c/kiosk-carousel")
    #expect(ContentDirectories.state(environment: ["HOME": "/home/k"]) == "/home/k/.local/state/kiosk-carousel")
    #expect(ContentDirectories.cache(environment: [:]) == "/var/cache/kiosk-carousel")
    #expect(ContentDirectories.state(environment: ["HOME": "/"]) == "/var/lib/kiosk-carousel")
}

/// Inputs the manifest fuzz target found (Tests/fuzz, docs/fuzzing.md): a local playlist's
/// `file:` URL whose path is relative (`file:a.jpg`, `file:1//srv/d.gif`) gave a relative `src`,
/// read against the working directory rather than the playlist's; one whose path decodes to a
/// control character gave a path no playlist may hold. Each is refused, naming the item.
@Test func fileURLsWithoutAnAbsolutePathAreRefused() throws {
    let dir = contentFixtures + "/../fuzz/manifest/"
    let cases = [("file-url-relative-path.json", "items[0].src", "not an absolute file URL"),
                 ("file-url-authority-after-path.json", "imgs[0].src", "not an absolute file URL"),
                 ("file-url-control-character.json", "items[0].src", "control character")]
    for (name, place, reason) in cases {
        let bytes = try #require(FileManager.default.contents(atPath: dir + name))
        do {
            let m = try Manifest.parse(Array(bytes), origin: .local(path: "/etc/kiosk/show.json"))
            Issue.record("\(name) accepted: \(m.items.map(\.src))")
        } catch {
            #expect(error.description.contains(place) && error.description.contains(reason), "\(name): \(error)")
        }
    }
    let m = try parse(#"{"items":[{"src":"file:///srv/a.jpg"},{"src":"file://localhost/srv/b%20c.jpg"}]}"#,
                      .local(path: "/etc/kiosk/show.json"))
    #expect(m.items.map(\.src) == ["/srv/a.jpg", "/srv/b c.jpg"])
}

/// The manifest fuzz target's re-parse check (Tests/fuzz): a `file:` URL of a path with
/// `://` in it gave a `src` that, written into a playlist as a path, was refused as a URL of
/// scheme `/srv/show/a`. A scheme starts with a letter (RFC 3986 section 3.1): an absolute path
/// with a colon in it is a path, and the resolved `src` reads back as itself.
@Test func aPathWithColonSlashSlashIsAPath() throws {
    let local = ManifestOrigin.local(path: "/etc/kiosk/show.json")
    let bytes = try #require(FileManager.default.contents(
        atPath: contentFixtures + "/../fuzz/manifest/file-url-with-colon-slash-slash-in-its-path.json"))
    let first = try Manifest.parse(Array(bytes), origin: local)
    #expect(first.items.map(\.src) == ["/srv/show/a://b.gif"])
    let again = try parse(#"{"items":[{"src":"/srv/show/a://b.gif"},{"src":"sub/12:00://c.png"}]}"#, local)
    #expect(again.items.map(\.src) == ["/srv/show/a://b.gif", "/etc/kiosk/sub/12:00://c.png"])
    #expect(error(#"{"items":[{"src":"ftp://x/a.jpg"}]}"#, local) != nil)
}

/// An item URL with a port past 65535 refuses the manifest like any bad `src`, naming the item
/// (remote and local manifests): the last good show stays instead of an item retried forever.
@Test func anItemPortOutOfRangeIsRefusedNamingTheItem() throws {
    for origin in [remote, ManifestOrigin.local(path: "/srv/show.json")] {
        let json = #"{"items":[{"src":"http://cdn.example/a.jpg"},{"src":"http://u:pw@cdn.example:99999/b.jpg"}]}"#
        do {
            _ = try Manifest.parse(Array(json.utf8), origin: origin)
            Issue.record("accepted")
        } catch {
            #expect(error.description.hasSuffix("items[1].src: 'http://u:***@cdn.example:99999/b.jpg': port 99999 "
                                                + "is out of range (a TCP port is 1...65535)"), "\(error.description)")
        }
    }
    // A relative src inherits the manifest's port; one in range is kept.
    let ok = try Manifest.parse(Array(#"{"items":[{"src":"//cdn.example:8080/a.jpg"}]}"#.utf8), origin: remote)
    #expect(ok.items.map(\.src) == ["http://cdn.example:8080/a.jpg"])
}

/// The show-wide `brightness` (tiers as `--brightness` takes them) and `presence_timeout`
/// (seconds, 0 ... 86400, a fraction kept to the millisecond): read, and a bad value refused
/// naming the key and why. The fuzz finding is a manifest the manifest target's write-back once
/// dropped `presence_timeout` from (Tests/fuzz); it must read as the JSON says.
@Test func brightnessAndPresenceTimeoutAreReadShowWide() throws {
    let m = try parse(#"{"brightness":"20:00=40,07:00=100,23:00=off","presence_timeout":0,"items":[{"src":"a.jpg"}]}"#)
    #expect(m.brightness?.description == "07:00=100,20:00=40,23:00=off")
    #expect(m.presenceTimeout == .zero)
    #expect(try parse(#"{"items":[{"src":"a.jpg"}]}"#).brightness == nil)
    let bytes = try #require(FileManager.default.contents(
        atPath: contentFixtures + "/../fuzz/manifest/presence-timeout-fraction.json"))
    let found = try Manifest.parse(Array(bytes), origin: remote)
    #expect(found.presenceTimeout == .milliseconds(300_500))
    #expect(found.items.map(\.duration) == [.seconds(7)])
    let bad = [(#"{"brightness":"07:00=140","items":[{"src":"a.jpg"}]}"#, "brightness", "140"),
               (#"{"brightness":"23:00=off","items":[{"src":"a.jpg"}]}"#, "brightness", "off"),
               (#"{"brightness":40,"items":[{"src":"a.jpg"}]}"#, "brightness", "string"),
               (#"{"presence_timeout":86401,"items":[{"src":"a.jpg"}]}"#, "presence_timeout", "86400"),
               (#"{"presence_timeout":-1,"items":[{"src":"a.jpg"}]}"#, "presence_timeout", "86400")]
    for (json, key, reason) in bad {
        let e = try #require(error(json), "accepted: \(json)")
        #expect(e.description.contains(key) && e.description.contains(reason), "\(json): \(e)")
    }
}
