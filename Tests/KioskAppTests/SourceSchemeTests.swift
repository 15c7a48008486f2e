// SPDX-License-Identifier: Apache-2.0
import Glibc
import Testing

/// A SOURCE that looks like `scheme:` (RFC 3986 section 3.1) and names no file is a URL of a
/// scheme the program does not fetch: a usage error, as `ftp://` is. A file whose name holds a
/// colon is still shown, named as it is, relative to the current folder.
@Test func anExistingFileWithAColonIsShownAndAMissingOneIsAURL() throws {
    let dir = controlTestDirectory()
    defer { _ = system("rm -rf '\(dir)'") }
    let name = "mailto:grey.jpg"
    #expect(link(controlTestPhotos[3], dir + "/" + name) == 0 || symlink(controlTestPhotos[3], dir + "/" + name) == 0)
    let shown = try KioskChild(["--display", "offscreen:frames", "--size", "64x64", "--fade", "0", "--interval", "1",
                                "--run-for", "1", "--input", "none", name],
                               currentDirectory: dir)
    #expect(waitFor(30) { !shown.process.isRunning }, "\(shown.stderr.text)")
    #expect(shown.stop() == 0, "\(shown.stderr.text)")
    #expect(shown.shown.first?.src == name, "\(shown.stdout.text)\n\(shown.stderr.text)")

    let missing = try KioskChild(["--display", "offscreen:frames", "--size", "64x64", "--run-for", "0.5",
                                  "--input", "none", "mailto:x"],
                                 currentDirectory: dir)
    #expect(waitFor(30) { !missing.process.isRunning })
    #expect(missing.stop() == 64, "\(missing.stderr.text)")
    #expect(missing.stderr.text.contains("SOURCE: 'mailto:x' is a URL of the scheme mailto: "
                                         + "(no file of that name exists)"), "\(missing.stderr.text)")
}

/// An empty SOURCE (an unset variable in a unit's `ExecStart=`) is a usage error, not a folder
/// that is waited for forever.
@Test func anEmptySourceIsAUsageError() throws {
    for empty in ["", " "] {
        let child = try KioskChild(["--display", "offscreen:frames", "--size", "64x64", "--run-for", "0.5",
                                    "--input", "none", empty],
                                   currentDirectory: controlTestDirectory())
        #expect(waitFor(30) { !child.process.isRunning && child.stderr.text.contains("SOURCE") })
        #expect(child.stop() == 64, "\(child.stderr.text)")
        #expect(child.stderr.text.contains("an empty SOURCE"), "\(child.stderr.text)")
    }
}

/// A remote `.json` given as a SOURCE (where a URL is one image) is a usage error that says to
/// give it with `--manifest`, not a download that fails as "not an image".
@Test func aRemoteJSONSourceIsToldToUseManifest() throws {
    for url in ["http://127.0.0.1:9/show.json", "https://example.com/kiosk/SHOW.JSON?device=a#x"] {
        let child = try KioskChild(["--display", "offscreen:frames", "--size", "64x64", "--run-for", "0.5",
                                    "--input", "none", url], currentDirectory: controlTestDirectory())
        #expect(waitFor(30) { !child.process.isRunning })
        #expect(child.stop() == 64, "\(child.stderr.text)")
        #expect(child.stderr.text.contains("SOURCE: '\(url)' is a remote .json, but a URL SOURCE is one image:"
                                           + " give a remote manifest with --manifest \(url)"), "\(child.stderr.text)")
    }
}
