// SPDX-License-Identifier: Apache-2.0
import Testing
import KioskSystem

@Test func aLogLineIsOneLineWhateverTheFileNameHolds() {
    let line = Log.line(.warning, "image skipped", path: "/photos/a\r\u{1B}[2Kb\tc\nd.jpg", reason: "bad \"data\"")
    #expect(!line.contains("\n") && !line.contains("\r") && !line.contains("\u{1B}") && !line.contains("\t"))
    #expect(line == #"kiosk-carousel: warning image skipped path="/photos/a\r\x1b[2Kb\tc\nd.jpg" "#
            + #"reason="bad \"data\"""#)
}

/// C1 controls (a terminal takes U+009B as CSI), bidirectional overrides and isolates (a log
/// viewer reorders the line around them) and line separators are escaped in every field.
@Test func c1AndBidiControlsAreEscaped() {
    let name = "/photos/\u{9B}2J\u{202E}gpj.exe\u{2066}x\u{2028}y\u{85}z.png"
    let line = Log.line(.info, "file \u{202E}skipped", path: name, detail: "d\u{200F}", reason: "r\u{61C}")
    #expect(!line.unicodeScalars.contains {
        (0x80...0x9F).contains($0.value) || [0x202E, 0x2066, 0x2028, 0x200F, 0x61C].contains($0.value)
    })
    #expect(line == #"kiosk-carousel: info file \u202eskipped "#
            + #"path="/photos/\u009b2J\u202egpj.exe\u2066x\u2028y\u0085z.png" detail="d\u200f" reason="r\u061c""#)
    // Other text outside ASCII is written as it is.
    #expect(Log.line(.info, "shown", path: "/photos/café-東京.jpg")
            == "kiosk-carousel: info shown path=/photos/café-東京.jpg")
}

/// Zero-width and invisible characters are escaped too: two names that look the same in the log
/// (`a.jpg` and `a` ZWSP `.jpg`) do not read the same.
@Test func zeroWidthAndInvisibleCharactersAreEscaped() {
    let line = Log.line(.info, "file skipped", path: "/p/a\u{200B}.jpg", detail: "\u{FEFF}x\u{2060}y\u{200D}z\u{2064}")
    #expect(line == #"kiosk-carousel: info file skipped path="/p/a\u200b.jpg" detail="\ufeffx\u2060y\u200dz\u2064""#)
}

@Test func aPlainPathIsNotQuoted() {
    #expect(Log.line(.info, "display opened", path: "/dev/fb0") == "kiosk-carousel: info display opened path=/dev/fb0")
}

/// A password in a URL never reaches the journal, whichever field carries the URL; the user
/// name and the rest stay, and text without one is left alone.
@Test func aPasswordInAURLIsHidden() {
    let line = Log.line(.warning, "manifest fetch failed http://kiosk:s3cret@signs.example/show.json",
                        path: "https://a:b@c.example:8443/x?y=1",
                        reason: "redirect to http://u:p@d.example/ refused; mail me@example.org")
    #expect(!line.contains("s3cret") && !line.contains(":b@") && !line.contains(":p@"), "\(line)")
    #expect(line.contains("http://kiosk:***@signs.example/show.json")
            && line.contains("https://a:***@c.example:8443/x?y=1"), "\(line)")
    #expect(line.contains("http://u:***@d.example/") && line.contains("me@example.org"), "\(line)")
    #expect(Log.line(.info, "plain", path: "/srv/photos/a@b.jpg")
            == "kiosk-carousel: info plain path=/srv/photos/a@b.jpg")
}

/// A URL written without its two slashes (`user:pw@proxy:3128`, `https:/user:pw@host`), which
/// libcurl takes, has its password hidden too; an address or a path with `@` does not change.
@Test func aPasswordInAURLWithoutItsSlashesIsHidden() {
    #expect(Log.hidingPasswords("'user:proxyPW@proxy.example:3128' is not an http or https URL")
            == "'user:***@proxy.example:3128' is not an http or https URL")
    #expect(Log.hidingPasswords("'https:/kiosk:manPW@h/show.json' has no host")
            == "'https:/kiosk:***@h/show.json' has no host")
    #expect(Log.hidingPasswords("source skipped path=http:/k:slashPW@host/a.jpg")
            == "source skipped path=http:/k:***@host/a.jpg")
    // A password holding "/", "?" or "#": hidden up to the word's last "@".
    #expect(Log.hidingPasswords("'http://u:pa/ssPW@proxy:3128': port 'pa' is not a number")
            == "'http://u:***@proxy:3128': port 'pa' is not a number")
    #expect(Log.hidingPasswords("path=http://u:p?w#PW@127.0.0.1:18777/show.json reason=x")
            == "path=http://u:***@127.0.0.1:18777/show.json reason=x")
    #expect(Log.hidingPasswords("\"http://u:/slashPW@h/a.jpg\" is not a URL")
            == "\"http://u:***@h/a.jpg\" is not a URL")
    // A port and an "@" in the path are no password.
    #expect(Log.hidingPasswords("path=http://cdn:8080/img/logo@2x.png") == "path=http://cdn:8080/img/logo@2x.png")
    #expect(Log.hidingPasswords("path=http://cdn/img/a:b@2x.png") == "path=http://cdn/img/a:b@2x.png")
    for plain in ["mail me@example.org", "/srv/photos/a@b.jpg", "t=12:30 at 5@home", "http://u:p@h/x@y",
                  #"{"event":"shown","src":"/srv/show/12:30@2x.jpg"}"#] {
        #expect(!Log.hidingPasswords(plain).contains("***") || plain.hasPrefix("http://"), "\(plain)")
    }
    #expect(Log.hidingPasswords("http://u:p@h/x@y") == "http://u:***@h/x@y")
}
