// SPDX-License-Identifier: Apache-2.0
import Foundation
import Testing
import KioskCore
import KioskDisplay
@testable import KioskApp

/// `--config FILE`: the configuration file goes through the same option table as the command
/// line, errors name the file and the line, and the command line overrides the file.
private let repository = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
private let shippedConfig = repository.appendingPathComponent("deploy/kiosk-carousel.conf")

/// Writes `text` to a fresh file and returns its path.
private func configFile(_ text: String) throws -> String {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-conf-\(UUID().uuidString).conf")
    try Data(text.utf8).write(to: url)
    return url.path
}

/// The message of the UsageError `body` throws, or nil when it throws none.
private func usageMessage(_ body: () throws -> Void) -> String? {
    do {
        try body()
        return nil
    } catch let error as UsageError {
        return error.message
    } catch {
        return "unexpected error \(error)"
    }
}

/// Settings as text, to compare two of them whole.
private func dump(_ s: Settings) -> String { String(reflecting: s) }

@Test func everySpellingOfTheFileIsRead() throws {
    let path = try configFile("""
        # a comment
           # an indented comment

        display offscreen:/tmp/x
        size=800x480
        interval = 2.5
        fade\t250
        --fit fill
        background = #1a2B3c
        dots
          rotate 270   \r
        swap-rb
        max-pixels 1000
        run-for 12
        manifest https://signs.example.com/lobby/show.json?a=1#frag
        manifest-interval 300
        cache-dir /var/cache/k
        state-dir /var/lib/k
        cache-size 20
        clock real
        input /dev/input/event2
        touch-calibration 0 1 0 -1 0 1
        on-tap /usr/local/bin/tap.sh --loud  x
        source /srv/photos
        source = /srv/more photos/a b.jpg
        """)
    let s = try CommandLineParser.parse(["--config", path])
    #expect(s.configFile == path)
    #expect(s.display == "offscreen:/tmp/x")
    #expect(s.size == (800, 480))
    #expect(s.interval == .milliseconds(2500))
    #expect(s.fade == .milliseconds(250))
    #expect(s.fit == .fill)
    #expect(s.background == RGBColor(red: 0x1a, green: 0x2b, blue: 0x3c))
    #expect(s.dots && s.swapRedBlue)
    #expect(s.rotation == .clockwise270)
    #expect(s.maxPixels == 1000)
    #expect(s.runFor == .seconds(12))
    #expect(s.manifest?.absoluteString == "https://signs.example.com/lobby/show.json?a=1#frag")
    #expect(s.manifestInterval == .seconds(300))
    #expect(s.cacheDirectory == "/var/cache/k" && s.stateDirectory == "/var/lib/k")
    #expect(s.cacheBytes == 20_000_000)
    #expect(s.realClock == true)
    #expect(s.input == "/dev/input/event2")
    let calibrated = try CommandLineParser.parse(["--touch-calibration", "0 1 0 -1 0 1", "x"])
    #expect(s.touchCalibration == calibrated.touchCalibration)
    #expect(s.onTap == ["/usr/local/bin/tap.sh", "--loud", "x"])
    #expect(s.sources == ["/srv/photos", "/srv/more photos/a b.jpg"])
}

/// Every option of the table (as another engineer adds one, too) is reachable from a file:
/// `name value` in a file gives what `--name value` gives on the command line.
@Test func everyOptionOfTheTableWorksInAFile() throws {
    let samples: [String: String] = [
        "--display": "fbdev:/dev/fb1", "--size": "640x480", "--interval": "7", "--fade": "300",
        "--fit": "stretch", "--background": "ff8000", "--rotate": "90", "--max-pixels": "5000",
        "--run-for": "3", "--manifest": "http://x.example/m.json", "--manifest-interval": "30",
        "--cache-dir": "/c", "--state-dir": "/s", "--cache-size": "7", "--clock": "virtual",
        "--input": "none", "--touch-calibration": "swap-xy,invert-x", "--on-tap": "echo a b",
        "--display-off": "22:00-07:00", "--ca-file": "/etc/kiosk-carousel/ca.pem", "--proxy": "http://proxy.lan:3128",
    ]
    for option in CommandLineParser.options
    where option.name != "--config" && option.name != "--help" && option.name != "--version" {
        let name = String(option.name.dropFirst(2))
        if option.value == nil {
            let fromFile = try CommandLineParser.parse(["--config", try configFile("\(name)\nsource /x\n")])
            var fromLine = try CommandLineParser.parse([option.name, "/x"])
            fromLine.configFile = fromFile.configFile
            #expect(dump(fromFile) == dump(fromLine), "flag \(name)")
        } else if let value = samples[option.name] {
            let file = try configFile("\(name) \(value)\nsource /x\n")
            let fromFile = try CommandLineParser.parse(["--config", file])
            var fromLine = try CommandLineParser.parse([option.name, value, "/x"])
            fromLine.configFile = fromFile.configFile
            #expect(dump(fromFile) == dump(fromLine), "\(name) \(value)")
        } else {
            // An option this test has no sample value for: the file must reach the option's
            // own check (an error naming it, or success), never "unknown option".
            let file = try configFile("source x\n\(name) \u{2603}\n")
            let message = usageMessage { _ = try CommandLineParser.parse(["--config", file]) }
            if let message {
                #expect(message.hasPrefix("\(file):2: \(option.name)"), "\(message)")
            }
        }
    }
}

@Test func theCommandLineOverridesTheFileWhereverConfigStands() throws {
    let path = try configFile("interval 8\nfade 800\ndots\nfit fill\nsource /from/file\nsource /also/file\n")
    let before = try CommandLineParser.parse(["--interval", "3", "--config", path])
    let after = try CommandLineParser.parse(["--config", path, "--interval=3"])
    for s in [before, after] {
        #expect(s.interval == .seconds(3))
        #expect(s.fade == .milliseconds(800))
        #expect(s.fit == .fill && s.dots)
        #expect(s.sources == ["/from/file", "/also/file"])
    }
    // SOURCEs on the command line replace the file's.
    let replaced = try CommandLineParser.parse(["--config", path, "/cli/a", "/cli/b"])
    #expect(replaced.sources == ["/cli/a", "/cli/b"])
    // Checks across options run on the result: the file's fade against the line's interval.
    let message = usageMessage { _ = try CommandLineParser.parse(["--config", path, "--interval", "0.5"]) }
    #expect(message?.contains("longer than --interval") == true)
    // The last --config wins.
    let other = try configFile("interval 9\nsource y\n")
    #expect(try CommandLineParser.parse(["--config", path, "--config", other]).interval == .seconds(9))
}

@Test func aFileWithoutSourcesStillNeedsOneOrAManifest() throws {
    let path = try configFile("interval 8\n")
    #expect(usageMessage { _ = try CommandLineParser.parse(["--config", path]) }?.contains("no SOURCE given") == true)
    #expect(try CommandLineParser.parse(["--config", path, "/photos"]).sources == ["/photos"])
    let manifestOnly = try configFile("manifest https://a.example/show.json\n")
    #expect(try CommandLineParser.parse(["--config", manifestOnly]).sources.isEmpty)
}

@Test(arguments: [
    ("interval soon", "--interval: expected seconds in 0.05...86400, got 'soon'"),
    ("interval", "--interval needs a value SECONDS"),
    ("interval =", "--interval needs a value SECONDS"),
    ("rotate 45", "--rotate: expected 0, 90, 180 or 270, got '45'"),
    ("dots yes", "--dots takes no value"),
    ("dots =", "--dots takes no value"),
    ("intervall 5", "unknown option 'intervall'"),
    ("photos/a.jpg", "unknown option 'photos/a.jpg'"),
    ("= 5", "expected 'name value' or 'name = value'"),
    ("source", "source needs a value PATH"),
    ("config /etc/other.conf", "--config is not allowed in a configuration file"),
    ("help", "--help is not allowed in a configuration file"),
    ("touch-calibration 1 2 3", "--touch-calibration"),
    ("manifest ftp://x/y", "--manifest: expected an http or https URL"),
    ("manifest https://a.example/show.json extra",
     "--manifest takes one value URL, but 'extra' follows 'https://a.example/show.json'"),
    ("interval = 8  # seconds",
     "--interval takes one value SECONDS, but '#' follows '8' (a # comment needs a line of its own)"),
    ("on-tap /usr/local/bin/tap.sh --loud  # lights",
     "--on-tap: '# lights' after the value would be taken as part of it: a # comment needs a line of its own"),
    ("overlay-format %H:%M\t# the clock", "--overlay-format: '# the clock' after the value"),
    ("proxy http://p.lan:3128\thttp://q.lan:3128",
     "--proxy takes one value URL, but 'http://q.lan:3128' follows 'http://p.lan:3128'"),
])
func errorsNameTheFileAndTheLine(line: String, expected: String) throws {
    let path = try configFile("# kiosk\n\nsource /photos\ninterval 8\n\n# the bad one:\n\(line)\nfade 100\n")
    let message = usageMessage { _ = try CommandLineParser.parse(["--config", path]) }
    #expect(message?.hasPrefix("\(path):7: ") == true, "\(message ?? "no error")")
    #expect(message?.contains(expected) == true, "\(message ?? "no error")")
}

@Test func theExactMessageForABadValue() throws {
    let path = try configFile("source /photos\n\n\n\n\n\ninterval x\n")
    #expect(usageMessage { _ = try CommandLineParser.parse(["--config", path]) }
            == "\(path):7: --interval: expected seconds in 0.05...86400, got 'x'")
}

@Test func unreadableFilesAreUsageErrors() throws {
    let missing = "/nonexistent/kiosk-carousel.conf"
    #expect(usageMessage { _ = try CommandLineParser.parse(["--config", missing]) }
            == "--config: open \(missing): No such file or directory (errno 2)")
    #expect(usageMessage { _ = try CommandLineParser.parse(["--config", "/tmp"]) }
            == "--config: /tmp: not a regular file")
    #expect(usageMessage { _ = try CommandLineParser.parse(["--config", "/dev/null"]) }
            == "--config: /dev/null: not a regular file")
    #expect(usageMessage { _ = try CommandLineParser.parse(["--config", "", "x"]) } == "--config: empty value")
    #expect(usageMessage { _ = try CommandLineParser.parse(["x", "--config"]) } == "--config needs a value FILE")
    // A FIFO is refused at once (no writer: opening it for reading must not block).
    let fifo = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-conf-fifo-\(UUID().uuidString)")
        .path
    #expect(mkfifo(fifo, 0o600) == 0)
    #expect(usageMessage { _ = try CommandLineParser.parse(["--config", fifo]) }
            == "--config: \(fifo): not a regular file")
    unlink(fifo)
    // Too large.
    let big = try configFile(String(repeating: "# padding padding padding padding\n", count: 40_000))
    #expect(usageMessage { _ = try CommandLineParser.parse(["--config", big]) }?.contains("larger than 1024 KiB")
            == true)
}

@Test func bytesThatAreNotTextAreRefusedWithTheirLine() throws {
    var settings = Settings()
    #expect(usageMessage {
        try CommandLineParser.applyConfig(Array("dots\nsource \u{FF}".utf8) + [0xFF], file: "f", to: &settings)
    }
            == "f:2: not UTF-8 text")
    #expect(usageMessage {
        try CommandLineParser.applyConfig(Array("dots\n\nsource a\u{1}b\n".utf8), file: "f", to: &settings)
    }
            == "f:3: control character in the line")
    // A byte-order mark and CRLF line ends are fine; tabs count as blanks.
    try CommandLineParser.applyConfig([0xEF, 0xBB, 0xBF] + Array("interval\t= 4\r\nsource  /a b \r\n".utf8), file: "f",
                                      to: &settings)
    #expect(settings.interval == .seconds(4))
    #expect(settings.sources == ["/a b"])
}

@Test func helpDoesNotReadTheFile() throws {
    #expect(try CommandLineParser.parse(["--config", "/nonexistent.conf", "--help"]).showHelp)
    #expect(CommandLineParser.help.contains("--config FILE"))
}

/// deploy/kiosk-carousel.conf as shipped parses, and so does each of its examples
/// (`#name value` lines) once uncommented; display values are valid `--display` specs.
@Test func theShippedConfigurationAndEachOfItsExamplesParse() throws {
    let text = try String(contentsOf: shippedConfig, encoding: .utf8)
    let shipped = try CommandLineParser.parse(["--config", shippedConfig.path])
    #expect(shipped.sources == ["/var/lib/kiosk-carousel/images"])
    #expect(shipped.display == "auto")
    let known = Set(CommandLineParser.options.map { String($0.name.dropFirst(2)) } + ["source"])
    var examples = 0
    for line in text.split(separator: "\n") where line.count > 1 && line.hasPrefix("#") {
        let example = line.dropFirst()
        guard let first = example.first, first.isLetter, first.isLowercase else { continue }  // prose
        let name = String(example.prefix { $0 != " " && $0 != "=" })
        if !known.contains(name) {
            // Only display-off was ever allowed here, before it joined the option table.
            #expect(name == "display-off", "example '\(example)' names no option of the table")
            continue
        }
        examples += 1
        let edited = text.replacingOccurrences(of: "\n" + line + "\n", with: "\n" + example + "\n")
        #expect(edited != text)
        let settings: Settings
        do {
            settings = try CommandLineParser.parse(["--config", try configFile(edited)])
        } catch {
            Issue.record("example '\(example)': \(error)")
            continue
        }
        if name == "display" {
            #expect(throws: Never.self, "\(example)") { _ = try DisplaySpec.parse(settings.display) }
        }
    }
    #expect(examples >= 12)
}

/// Every option that takes one word refuses a second one, naming the file, the line and the
/// word (`manifest URL extra` was read as `URL%20extra`); lists, commands and paths keep the
/// rest of the line, blanks and all.
@Test func anExtraWordIsRefusedWhereOneValueIsExpected() throws {
    for option in CommandLineParser.options where option.value != nil && option.name != "--config" {
        let name = String(option.name.dropFirst(2))
        let path = try configFile("source /photos\n\(name) one two\n")
        let message = usageMessage { _ = try CommandLineParser.parse(["--config", path]) }
        if CommandLineParser.freeTextOptions.contains(name) {
            #expect(message?.contains("but 'two' follows") != true, "\(name): \(message ?? "accepted")")
        } else {
            #expect(message == "\(path):2: --\(name) takes one value \(option.value!), but 'two' follows 'one'",
                    "\(name): \(message ?? "accepted")")
        }
    }
    let kept = try configFile("source /photos\non-tap /usr/bin/logger -t kiosk\noverlay-format %a %-d %b\n"
                              + "cache-dir /srv/kiosk cache\n"
                              + "display-off 22:00-07:00, 12:00-13:00\ntouch-calibration 0 1 0 -1 0 1\n")
    let s = try CommandLineParser.parse(["--config", kept])
    #expect(s.onTap == ["/usr/bin/logger", "-t", "kiosk"])
    #expect(s.overlayFormat == "%a %-d %b")
    #expect(s.cacheDirectory == "/srv/kiosk cache")
}

/// A relative `source` in the file is read against the file's folder, not the working
/// directory (a unit's or a shell's, which differ); absolute paths and URLs stay as written.
@Test func aRelativeSourceIsTakenAgainstTheFilesFolder() throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-conf-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let file = folder.appendingPathComponent("kiosk.conf").path
    try Data("source images\nsource ./more/a.jpg\nsource /srv/p\nsource https://example.com/a.jpg\n".utf8)
        .write(to: URL(fileURLWithPath: file))
    let s = try CommandLineParser.parse(["--config", file])
    #expect(s.sources == [folder.path + "/images", folder.path + "/./more/a.jpg", "/srv/p",
                          "https://example.com/a.jpg"])
    // A file named relatively: its folder relative too; one in the working directory: as written.
    #expect(configSource("images", file: "conf/kiosk.conf") == "conf/images")
    #expect(configSource("images", file: "kiosk.conf") == "images")
    #expect(configSource("images", file: "/kiosk.conf") == "/images")
    #expect(usageMessage { _ = try CommandLineParser.parse(["--config", try configFile("source javascript:x\n")]) }?
        .contains("is a URL of the scheme javascript:") == true)
}

/// `--recent-days` weights a shuffle: with another order, given on the command line or in the
/// configuration file, it is refused at the start naming both options, not taken silently.
@Test func recentDaysWithAnOrderOtherThanShuffleIsRefused() throws {
    for order in ["name", "date", "newest", "on-this-day"] {
        let message = usageMessage { _ = try CommandLineParser.parse(["--order", order, "--recent-days", "30", "/p"]) }
        #expect(message == "--recent-days 30 weights a shuffle: it needs --order shuffle, but --order is \(order)",
                "\(order): \(message ?? "accepted")")
    }
    #expect(usageMessage { _ = try CommandLineParser.parse(["--recent-days", "7", "/p"]) }?
        .hasSuffix("but --order is name") == true, "the default order")
    let file = try configFile("order date\nrecent-days 7\nsource /p\n")
    #expect(usageMessage { _ = try CommandLineParser.parse(["--config", file]) }?.hasPrefix("--recent-days 7") == true)
    #expect(try CommandLineParser.parse(["--config", file, "--order", "shuffle"]).recentDays == 7)
    #expect(try CommandLineParser.parse(["--order", "shuffle", "--recent-days", "30", "/p"]).recentDays == 30)
    // A manifest or a playlist may set order shuffle: then it is taken, and waits for that.
    #expect(try CommandLineParser.parse(["--recent-days", "30", "--manifest", "http://127.0.0.1:1/m.json"])
        .recentDays == 30)
    #expect(try CommandLineParser.parse(["--recent-days", "30", "/srv/list.json"]).recentDays == 30)
}
