// SPDX-License-Identifier: Apache-2.0
import Glibc
import Testing
import KioskCore
import KioskContent
@testable import KioskApp

@Test func defaultsFollowTheSpec() throws {
    let s = try CommandLineParser.parse(["photos"])
    #expect(s.display == "auto")
    #expect(s.interval == .seconds(5))
    #expect(s.fade == .milliseconds(500))
    #expect(s.fit == .fit)
    #expect(s.background == .black)
    #expect(s.maxPixels == 100_000_000)
    #expect(s.rotation == .none)
    #expect(!s.dots && !s.swapRedBlue)
    #expect(s.runFor == nil)
    #expect(s.sources == ["photos"])
}

@Test func everyOptionIsParsedInBothSpellings() throws {
    let s = try CommandLineParser.parse([
        "--display", "offscreen:/tmp/x", "--size=800x480", "--interval", "2.5", "--fade=250",
        "--fit", "fill", "--background", "#1a2B3c", "--dots", "--rotate", "270", "--swap-rb",
        "--max-pixels", "1000", "--run-for", "12", "a.jpg", "--", "--weird-name.png",
    ])
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
    #expect(s.sources == ["a.jpg", "--weird-name.png"])
}

@Test(arguments: [
    (["--interval", "0", "x"], "--interval"),
    (["--interval", "abc", "x"], "'abc'"),
    (["--fade", "-1", "x"], "--fade"),
    (["--fade", "6000", "x"], "longer than --interval"),
    (["--fit", "zoom", "x"], "fit, fill, stretch or blur"),
    (["--background", "red", "x"], "RRGGBB"),
    (["--rotate", "45", "x"], "0, 90, 180 or 270"),
    (["--size", "800", "x"], "WxH"),
    (["--size", "0x0", "x"], "WxH"),
    (["--max-pixels", "-5", "x"], "--max-pixels"),
    (["--run-for", "soon", "x"], "--run-for"),
    (["--bogus", "x"], "unknown option '--bogus'"),
    (["--dots=yes", "x"], "takes no value"),
    (["x", "--interval"], "needs a value"),
    (["--dots"], "no SOURCE"),
    (["--overlay", "clock", "--overlay-format", String(repeating: "%c", count: 11), "x"], "more than 255 bytes"),
    (["ftp://host/a.jpg"], "is a URL of the scheme ftp:"),
    (["file:///etc/passwd"], "is a URL of the scheme file:"),
    (["Gopher+1.x://u:secret@host/"], "'Gopher+1.x://u:***@host/' is a URL of the scheme gopher+1.x:"),
    (["javascript:alert(1)"],
     "SOURCE: 'javascript:alert(1)' is a URL of the scheme javascript: (no file of that name exists); a SOURCE is"),
    (["mailto:x"], "SOURCE: 'mailto:x' is a URL of the scheme mailto: (no file of that name exists)"),
    (["/photos", "Data:image/png;base64,iVBORw0KGgo="], "is a URL of the scheme data:"),
])
func badArgumentsAreUsageErrorsThatSayWhatWasWrong(arguments: [String], expected: String) {
    #expect {
        _ = try CommandLineParser.parse(arguments)
    } throws: { error in
        (error as? UsageError)?.message.contains(expected) == true
    }
}

/// A path with `://` inside is a path, not a URL of some scheme (RFC 3986 section 3.1).
@Test func aPathWithColonSlashSlashInsideIsStillAPath() throws {
    #expect(try CommandLineParser.parse(["/srv/show/a://b.gif", "1x://c.jpg"]).sources
            == ["/srv/show/a://b.gif", "1x://c.jpg"])
    #expect(try CommandLineParser.parse(["12:30.jpg", "./mailto:x", "/srv/javascript:alert(1)"]).sources
            == ["12:30.jpg", "./mailto:x", "/srv/javascript:alert(1)"])
}

@Test func helpListsEveryOptionFromTheTable() throws {
    let s = try CommandLineParser.parse(["--help"])
    #expect(s.showHelp)
    for option in CommandLineParser.options { #expect(CommandLineParser.help.contains(option.name)) }
}

/// The security options (docs/security.md): parsed into their settings, bad values named.
@Test func theSecurityOptionsAreParsedAndBadValuesNamed() throws {
    let s = try CommandLineParser.parse(["--allow-hosts", "cdn.example.com, .example.org,10.0.0.0/8",
                                         "--allow-http-from-https", "--requests-per-poll", "7",
                                         "--screenshot-dir", "/srv/shots", "--screenshot-limit", "4,8,12", "x"])
    let ten = try #require(IPRange(parsing: "10.0.0.0/8"))
    #expect(s.allowHosts == [.name("cdn.example.com"), .domain("example.org"), .range(ten)])
    #expect(s.allowHTTPFromHTTPS && s.requestsPerPoll == 7)
    #expect(s.content.hostPolicy.allowed == s.allowHosts && s.content.requestsPerPoll == 7
            && s.content.allowHTTPFromHTTPS)
    #expect(s.screenshots && s.screenshotDirectory == "/srv/shots")
    #expect(s.screenshotLimits.files == 4 && s.screenshotLimits.bytes == 8_000_000
            && s.screenshotLimits.perMinute == 12)
    let defaults = try CommandLineParser.parse(["x"])
    #expect(defaults.allowHosts == nil && !defaults.allowHTTPFromHTTPS && defaults.requestsPerPoll == 50)
    #expect(defaults.screenshots && defaults.screenshotDirectory == nil)
    #expect(defaults.screenshotLimits == ScreenshotWriter.Limits())
    #expect(!(try CommandLineParser.parse(["--screenshot-dir", "none", "x"])).screenshots)
    for (arguments, says) in [(["--allow-hosts", "a,,b"], "--allow-hosts: '': an empty entry"),
                              (["--allow-hosts", "10.0.0.0/99"], "CIDR"),
                              (["--requests-per-poll", "0"], "--requests-per-poll: expected a whole number 1...10000"),
                              (["--screenshot-dir", "shots"], "--screenshot-dir: expected an absolute path"),
                              (["--screenshot-limit", "4,8"], "--screenshot-limit: expected FILES,MB,PER_MINUTE")] {
        do {
            _ = try CommandLineParser.parse(arguments + ["x"])
            Issue.record("\(arguments) accepted")
        } catch {
            #expect(error.description.contains(says), "\(arguments): \(error)")
        }
    }
}

/// An offscreen frames folder that is a SOURCE folder would feed its own frames back into the
/// show: refused at the start, however the two are spelled; a folder inside a SOURCE is not
/// read (subfolders are not), so it is allowed.
@Test func anOffscreenFramesFolderThatIsASourceIsRefused() throws {
    var template = Array("/tmp/kc-frames-XXXXXX".utf8CString)
    let dir = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)) }
    defer { rmdir(dir) }
    let name = dir.split(separator: "/").last!
    for (display, source) in [(dir, dir), (dir + "/", dir), (dir + "/./", dir + "/../" + name),
                              ("/tmp/kc-not-made-yet/f", "/tmp/kc-not-made-yet//f/")] {
        #expect {
            _ = try CommandLineParser.parse(["--display", "offscreen:" + display, "/photos", source])
        } throws: { error in
            (error as? UsageError)?.message.hasPrefix("--display offscreen:\(display): the frames folder is the SOURCE"
                                                      + " folder '\(source)'") == true
        }
    }
    #expect(try CommandLineParser.parse(["--display", "offscreen:" + dir + "/frames", dir]).sources == [dir])
    #expect(try CommandLineParser.parse(["--display", "offscreen:" + dir, dir + "/photos"]).sources
            == [dir + "/photos"])
}
