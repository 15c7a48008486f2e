// SPDX-License-Identifier: Apache-2.0
import Glibc
import Testing

/// End to end on the real executable (offscreen backend, `--clock real`): deadlines that must
/// wake the frame loop, and files changed under the same name. Serialized: these tests follow
/// wall time on a shared machine.
@Suite(.serialized) struct FaultShowTests {
    /// Writes `bytes` into the existing file at `path` in place (same inode: no rename), the way
    /// a copy still under way finishes.
    func rewriteInPlace(_ path: String, _ bytes: [UInt8]) {
        let fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC)
        precondition(fd >= 0, "open \(path)")
        let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        precondition(n == bytes.count)
        close(fd)
    }

    // MARK: A retry wakes the loop

    /// `good.png` and `late.png`, the latter 0 bytes at start (a copy still under way) and a valid
    /// PNG 5 s later, written in place. The failed image is tried again 60 s after it failed,
    /// with one image in the show and nothing else to wake the loop.
    @Test func aFailedImageIsTriedAgainSixtySecondsAfterItFailedWithOneImageInTheShow() throws {
        let dir = makeTempDirectory("retry")
        try writeFile(dir + "/good.png", solidPNG(Swatch.red))
        try writeFile(dir + "/late.png", [])
        let show = try KioskShow(["--size", "160x100", "--clock", "real", "--interval", "5", "--fade", "500",
                                  "--run-for", "75", dir + "/good.png", dir + "/late.png"])
        defer { show.stop() }
        #expect(show.waitUntil(10) { !$0.logLines(containing: "late.png").isEmpty }, "\(show.transcript)")
        let failedAt = show.stderrLines.first { $0.text.contains("image skipped") && $0.text.contains("late.png") }?.at
        usleep(5_000_000)
        rewriteInPlace(dir + "/late.png", solidPNG(Swatch.blue))
        #expect(show.waitUntil(70) { $0.shown.contains { $0.src.hasSuffix("/late.png") } }, "\(show.transcript)")
        let backAt = show.stderrLines.first { $0.text.contains("image back in the show") }?.at
        let lateShown = show.shown.first { $0.src.hasSuffix("/late.png") }
        show.stop()

        let failed = try #require(failedAt, "\(show.transcript)")
        let back = try #require(backAt, "\(show.transcript)")
        let shown = try #require(lateShown, "\(show.transcript)")
        print("retry: late.png failed at \(failed) s, back in the show at \(back) s (\(back - failed) s later), "
              + "shown at show time \(shown.t) ms")
        #expect(abs(back - failed - 60) <= 1, "retry \(back - failed) s after the failure: \(show.transcript)")
        // Shown once its cross-fade (0.5 s) from good.png ends.
        #expect(shown.t >= 59_000 && shown.t <= 61_500, "\(show.transcript)")
        #expect(shown.index == 1)
        // Until then good.png alone: one `shown` for it, none for late.png.
        #expect(show.shown.filter { $0.at < back - 0.1 }.map(\.src) == [dir + "/good.png"], "\(show.transcript)")
        // The frame at that time is late.png's blue.
        let frames = try analyzeFrames(show.frames)
        // The frame of that moment, or, on a loaded machine where the last frame of the fade is
        // drawn a little late (`t` is the interval's mark, not the frame's time), the first after it.
        let frame = try #require(frames.last { $0.ms <= Int(shown.t) }, "no frame up to \(shown.t) ms")
        let after = frames.first { $0.ms > Int(shown.t) }
        #expect(frame.centerIs(Swatch.blue) || after?.centerIs(Swatch.blue) == true,
                "\(frame), then \(after.map(String.init(describing:)) ?? "no frame")")
    }

    // MARK: A file changed under the same name

    /// The ways a file is replaced under its name.
    enum Change: String, CaseIterable {
        /// Written to a temporary name, renamed over it (a new inode).
        case rename
        /// Truncated and written again (the same inode, the same size).
        case inPlace = "inplace"
        /// `cp NEW NAME` over it (cp opens the existing file with O_TRUNC: the same inode).
        case cp
    }

    /// Where the file comes from.
    enum Kind: String, CaseIterable { case directory, file, playlist }

    func replace(_ path: String, with bytes: [UInt8], by change: Change) throws {
        switch change {
        case .rename:
            try writeFile(path + ".tmp", bytes)
            #expect(rename(path + ".tmp", path) == 0)
        case .inPlace:
            rewriteInPlace(path, bytes)
        case .cp:
            let source = path + ".new"
            try writeFile(source, bytes)
            let pid = try spawnResettingSignals("/bin/cp", [source, path])
            var status: Int32 = 0
            waitpid(pid, &status, 0)
            #expect(status == 0)
            unlink(source)
        }
    }

    /// The image at `name` in a fresh directory, and the SOURCE arguments that show it as `kind`:
    /// its directory, the file itself, or a `.json` playlist naming it.
    func source(_ kind: Kind, dir: String, names: [String], colour: (UInt8, UInt8, UInt8)) throws -> [String] {
        let images = dir + "/" + kind.rawValue
        mkdir(images, 0o755)
        for name in names { try writeFile(images + "/" + name, solidPNG(colour)) }
        switch kind {
        case .directory: return [images]
        case .file: return names.map { images + "/" + $0 }
        case .playlist:
            let list = dir + "/" + kind.rawValue + ".json"
            try writeFile(list, Array(itemsManifest(names.map { images + "/" + $0 }).utf8))
            return [list]
        }
    }

    /// No cut: never a pure red frame followed at once by a pure blue one (a picture replaced in
    /// place would be); every change of picture goes through blended frames.
    func expectNoCut(_ frames: [FrameInfo], _ context: String) {
        for (a, b) in zip(frames, frames.dropFirst()) where a.centerIs(Swatch.red) && b.centerIs(Swatch.blue) {
            Issue.record("cut from red to blue between \(a) and \(b): \(context)")
        }
    }

    /// Shows of one image (a menu board), one per kind of source and way of changing: the file,
    /// red, turns blue 2.5 s in; the blue picture cross-fades in at the next interval (a multiple
    /// of the 2 s interval from the first `shown`), never earlier and never as a cut.
    @Test func inAShowOfOneImageTheNewPictureFadesInAtTheNextIntervalEveryWayAFileChanges() throws {
        var shows: [(kind: Kind, change: Change, path: String, show: KioskShow)] = []
        for kind in Kind.allCases {
            for change in Change.allCases {
                let dir = makeTempDirectory("changed-one")
                let arguments = try source(kind, dir: dir, names: ["menu.png"], colour: Swatch.red)
                let show = try KioskShow(["--size", "160x100", "--clock", "real", "--interval", "2", "--fade", "300",
                                          "--run-for", "10"] + arguments)
                shows.append((kind, change, dir + "/" + kind.rawValue + "/menu.png", show))
            }
        }
        defer { for s in shows { s.show.stop() } }
        for s in shows { #expect(s.show.waitUntil(10) { !$0.shown.isEmpty }, "\(s.show.transcript)") }
        usleep(2_500_000)
        var changedAt: [Double] = []
        for s in shows {
            try replace(s.path, with: solidPNG(Swatch.blue), by: s.change)
            changedAt.append(s.show.elapsed)
        }
        for s in shows { #expect(s.show.waitForExit(timeout: 20) == 0, "\(s.show.transcript)") }
        for (i, s) in shows.enumerated() {
            let context = "\(s.kind) \(s.change): \(s.show.transcript)"
            let shown = s.show.shown
            // Shown twice: red at 0, blue at the next 2 s mark after the change was seen.
            #expect(shown.count == 2, "\(context)")
            guard shown.count == 2 else { continue }
            let first = shown[0], second = shown[1]
            #expect(second.index == 0 && second.src == shown[0].src)
            #expect((second.t - first.t) % 2000 == 0, "not at an interval: \(context)")
            #expect(second.at > changedAt[i] && second.at < changedAt[i] + 4.5, "\(context)")
            let frames = try analyzeFrames(s.show.frames)
            #expect(frames.first?.centerIs(Swatch.red) == true,
                    "\(frames.first.map(String.init(describing:)) ?? "no frame"): \(context)")
            // Blue when shown: the frame of that moment, or, on a loaded machine where the last
            // frame of the fade is drawn a little late, the first one after it.
            #expect(frames.last { $0.ms <= second.t }?.centerIs(Swatch.blue) == true
                    || frames.first { $0.ms > second.t }?.centerIs(Swatch.blue) == true, "\(context)")
            // Red until the fade before that mark starts, then blended frames, then blue.
            #expect(!frames.contains { $0.ms < second.t - 300 && !$0.centerIs(Swatch.red) }, "\(context)")
            #expect(frames.contains {
                $0.ms > second.t - 300 && $0.ms < second.t && !$0.centerIs(Swatch.red) && !$0.centerIs(Swatch.blue)
            }, "no blended frame: \(context)")
            expectNoCut(frames, context)
            print("one image, \(s.kind) \(s.change): changed at \(String(format: "%.2f", changedAt[i])) s, "
                  + "new picture shown at t=\(second.t) ms")
        }
    }

    /// A show of one image whose file is emptied (a copy restarted, a writer that truncates
    /// first) and written whole only 2 s later: the empty file does not decode, so the red
    /// picture stays on screen (nothing dropped, never "No images"); the blue one cross-fades in
    /// at the next interval after the file is whole, in a directory, as a file and in a playlist.
    @Test func aFileEmptiedThenWrittenLaterKeepsItsPictureUntilTheNewOneIsWhole() throws {
        var shows: [(kind: Kind, path: String, show: KioskShow)] = []
        for kind in Kind.allCases {
            let dir = makeTempDirectory("emptied-one")
            let arguments = try source(kind, dir: dir, names: ["menu.png"], colour: Swatch.red)
            let show = try KioskShow(["--size", "160x100", "--clock", "real", "--interval", "2", "--fade", "300",
                                      "--run-for", "10"] + arguments)
            shows.append((kind, dir + "/" + kind.rawValue + "/menu.png", show))
        }
        defer { for s in shows { s.show.stop() } }
        for s in shows { #expect(s.show.waitUntil(10) { !$0.shown.isEmpty }, "\(s.show.transcript)") }
        usleep(1_500_000)
        for s in shows { #expect(truncate(s.path, 0) == 0) }
        usleep(2_500_000)
        for s in shows { rewriteInPlace(s.path, solidPNG(Swatch.blue)) }
        for s in shows { #expect(s.show.waitForExit(timeout: 20) == 0, "\(s.show.transcript)") }
        for s in shows {
            let context = "\(s.kind): \(s.show.transcript)"
            #expect(s.show.shown.count == 2, "\(context)")
            #expect(!s.show.transcript.contains("image skipped"), "\(context)")
            let frames = try analyzeFrames(s.show.frames)
            // Every frame is the red picture, the blue one, or a blend of the two: none is the
            // black "No images" screen or the placeholder.
            #expect(frames.last?.centerIs(Swatch.blue) == true, "\(context)")
            #expect(!frames.contains {
                !$0.centerIs(Swatch.red) && !$0.centerIs(Swatch.blue) && $0.ms < (s.show.shown.last?.t ?? 0) - 300
            }, "a frame that is neither picture before the fade: \(context)")
            expectNoCut(frames, context)
        }
    }

    /// Shows of three images, one per kind of source (a directory, three files on the command
    /// line, a `.json` playlist), whose three files are changed in the three ways 2.5 s in, all
    /// from red to blue. Three images fill the three slots, so none would ever be prepared
    /// again by the show going round: the picture on screen stays until the next move (no cut),
    /// and from 1.5 s after the change every image comes up blue.
    @Test func inShowsOfSeveralImagesEveryChangedFileComesUpWithItsNewPicture() throws {
        let names = Change.allCases.map { "\($0.rawValue).png" }
        var shows: [(kind: Kind, dir: String, show: KioskShow)] = []
        for kind in Kind.allCases {
            let dir = makeTempDirectory("changed-many")
            let arguments = try source(kind, dir: dir, names: names, colour: Swatch.red)
            let show = try KioskShow(["--size", "160x100", "--clock", "real", "--interval", "1", "--fade", "200",
                                      "--run-for", "10"] + arguments)
            shows.append((kind, dir, show))
        }
        defer { for s in shows { s.show.stop() } }
        for s in shows { #expect(s.show.waitUntil(10) { !$0.shown.isEmpty }, "\(s.show.transcript)") }
        usleep(2_500_000)
        var changedAt: [Double] = []
        for s in shows {
            for change in Change.allCases {
                try replace(s.dir + "/\(s.kind.rawValue)/\(change.rawValue).png", with: solidPNG(Swatch.blue),
                            by: change)
            }
            changedAt.append(s.show.elapsed)
        }
        for s in shows { #expect(s.show.waitForExit(timeout: 20) == 0, "\(s.show.transcript)") }
        for (i, s) in shows.enumerated() {
            let context = "\(s.kind): \(s.show.transcript)"
            let frames = try analyzeFrames(s.show.frames)
            let shown = s.show.shown
            let later = shown.filter { $0.at >= changedAt[i] + 1.5 }
            // Each of the three came round again, each with its new picture.
            #expect(Set(later.map(\.src)).count == 3, "\(context)")
            // Blue when shown: the frame of that moment, or, on a loaded machine where the last
            // frame of the fade is drawn a little late (`t` is the interval's mark), the first after it.
            for event in later {
                let frame = frames.last { $0.ms <= event.t }
                let after = frames.first { $0.ms > event.t }
                let seen = [frame, after].map { $0.map(String.init(describing:)) ?? "no frame" }
                #expect(frame?.centerIs(Swatch.blue) == true || after?.centerIs(Swatch.blue) == true,
                        "\(event) \(seen[0]), then \(seen[1]): \(context)")
            }
            // Before the change, all red.
            let changedT = shown.last { $0.at <= changedAt[i] }.map { $0.t + Int((changedAt[i] - $0.at) * 1000) } ?? 0
            #expect(!frames.contains { $0.ms < changedT - 200 && !$0.centerIs(Swatch.red) }, "\(context)")
            expectNoCut(frames, context)
            print("three images, \(s.kind): changed at t≈\(changedT) ms; \(later.count) shown events "
                  + "from t=\(later.first?.t ?? -1) ms")
        }
    }

    // MARK: Files a directory skips

    /// A watched directory's files that are not shown are listed once each in the log: files
    /// not named as images (there at the start, or added while the show runs), and an image
    /// that does not decode; hidden files are left alone.
    @Test func aDirectorysSkippedFilesAreListedOnceEach() throws {
        let dir = makeTempDirectory("skipped")
        try writeFile(dir + "/a.png", solidPNG(Swatch.red))
        try writeFile(dir + "/b.bmp", Array("BM".utf8) + [UInt8](repeating: 0, count: 60))
        try writeFile(dir + "/notes.txt", Array("today's menu\n".utf8))
        try writeFile(dir + "/.hidden.svg", Array("<svg/>".utf8))
        try writeFile(dir + "/d.png", Array(solidPNG(Swatch.green).prefix(40)))
        let show = try KioskShow(["--size", "160x100", "--clock", "real", "--interval", "1", "--fade", "100",
                                  "--run-for", "5", dir])
        defer { show.stop() }
        #expect(show.waitUntil(10) { !$0.shown.isEmpty }, "\(show.transcript)")
        // Added while the show runs: one written in place, one renamed in.
        try writeFile(dir + "/e.tif", Array("II*\u{0}".utf8) + [UInt8](repeating: 0, count: 20))
        try writeFile(dir + "/.f.tmp", Array("<svg/>".utf8))
        #expect(rename(dir + "/.f.tmp", dir + "/f.svg") == 0)
        #expect(show.waitForExit(timeout: 15) == 0, "\(show.transcript)")
        for name in ["b.bmp", "notes.txt", "e.tif", "f.svg"] {
            let lines = show.logLines(containing: "file skipped").filter { $0.contains("path=\(dir)/\(name) ") }
            #expect(lines.count == 1, "\(name): \(show.transcript)")
        }
        #expect(show.logLines(containing: "\(dir)/d.png").filter { $0.contains("image skipped") }.count == 1,
                "\(show.transcript)")
        #expect(show.logLines(containing: "hidden").isEmpty, "\(show.transcript)")
        #expect(show.logLines(containing: "file skipped").count == 4, "\(show.transcript)")
    }

    /// SIGHUP reads a folder again; its `file skipped` lines are said once while the file stays
    /// (not once per signal); a file removed and brought back is said again, and one added
    /// between two signals once.
    @Test func aFoldersSkippedFilesAreNotSaidAgainOnSIGHUP() throws {
        let dir = makeTempDirectory("skipped-hup")
        try writeFile(dir + "/a.png", solidPNG(Swatch.red))
        try writeFile(dir + "/notes.txt", Array("today's menu\n".utf8))
        let show = try KioskShow(["--size", "160x100", "--clock", "real", "--interval", "1", "--fade", "100",
                                  "--run-for", "30", dir])
        defer { show.stop() }
        #expect(show.waitUntil(10) { !$0.shown.isEmpty }, "\(show.transcript)")
        func lines(_ name: String) -> Int {
            show.logLines(containing: "file skipped").filter { $0.contains("path=\(dir)/\(name) ") }.count
        }
        func hangUp(_ times: Int) {
            for _ in 0..<times {
                let before = show.logLines(containing: "SIGHUP received").count
                show.signal(SIGHUP)
                #expect(show.waitUntil(10) { $0.logLines(containing: "SIGHUP received").count > before })
                usleep(400_000)  // the folder read again on the reload queue
            }
        }
        hangUp(3)
        #expect(lines("notes.txt") == 1, "\(show.transcript)")
        try writeFile(dir + "/b.bmp", Array("BM".utf8) + [UInt8](repeating: 0, count: 60))
        #expect(show.waitUntil(10) { _ in lines("b.bmp") == 1 }, "\(show.transcript)")
        hangUp(2)
        #expect(lines("notes.txt") == 1 && lines("b.bmp") == 1, "\(show.transcript)")
        // Gone while the show runs, then back: said again, once.
        #expect(unlink(dir + "/notes.txt") == 0)
        hangUp(1)
        try writeFile(dir + "/notes.txt", Array("tomorrow's menu\n".utf8))
        #expect(show.waitUntil(10) { _ in lines("notes.txt") == 2 }, "\(show.transcript)")
        hangUp(2)
        #expect(lines("notes.txt") == 2 && lines("b.bmp") == 1, "\(show.transcript)")
    }

    /// A local playlist naming another playlist says that nested playlists are not supported,
    /// naming the playlist and the item, and leaves it out (it was "an unknown format" image,
    /// tried again every minute); the playlist's other items play.
    @Test func aPlaylistNamingAPlaylistSaysNestedPlaylistsAreNotSupported() throws {
        let dir = makeTempDirectory("nested")
        try writeFile(dir + "/a.png", solidPNG(Swatch.red))
        try writeFile(dir + "/inner.json", Array(#"{"items":[{"src":"a.png"}]}"#.utf8))
        try writeFile(dir + "/show.json", Array(#"{"items":[{"src":"a.png"},{"src":"inner.JSON?x=1"}]}"#.utf8))
        let show = try KioskShow(["--size", "160x100", "--interval", "1", "--fade", "100", "--run-for", "4",
                                  dir + "/show.json"])
        defer { show.stop() }
        #expect(show.waitForExit(timeout: 30) == 0, "\(show.transcript)")
        let lines = show.logLines(containing: "playlist item skipped")
        #expect(lines == ["kiosk-carousel: warning playlist item skipped path=\(dir)/show.json reason=\"items[1].src "
                          + "\(dir)/inner.JSON?x=1 is a playlist: nested playlists are not supported (give it as a "
                          + "SOURCE of its own)\""], "\(show.transcript)")
        #expect(show.logLines(containing: "unknown format").isEmpty, "\(show.transcript)")
        #expect(show.logLines(containing: "playlist read").first?.hasSuffix(#"detail="1 item""#) == true,
                "\(show.transcript)")
        #expect(!show.shown.isEmpty && show.shown.allSatisfy { $0.src == dir + "/a.png" }, "\(show.transcript)")
    }

    /// A folder's hidden files (a name starting with a dot, whatever follows) are never shown
    /// nor logged; the same file named on its own as a SOURCE is shown.
    @Test func aFoldersHiddenFilesAreNeverShownNorLogged() throws {
        let dir = makeTempDirectory("hidden")
        try writeFile(dir + "/a.png", solidPNG(Swatch.red))
        for name in [".jpg", ".x.jpg", "..jpg", ".b.png", "._c.jpg"] {
            try writeFile(dir + "/" + name, solidPNG(Swatch.blue))
        }
        let show = try KioskShow(["--size", "160x100", "--interval", "1", "--fade", "100", "--run-for", "4", dir])
        defer { show.stop() }
        #expect(show.waitForExit(timeout: 30) == 0, "\(show.transcript)")
        #expect(!show.shown.isEmpty && show.shown.allSatisfy { $0.src == dir + "/a.png" }, "\(show.transcript)")
        #expect(!show.log.contains(dir + "/."), "\(show.transcript)")
        let alone = try KioskShow(["--size", "160x100", "--run-for", "1", dir + "/.x.jpg"])
        defer { alone.stop() }
        #expect(alone.waitForExit(timeout: 30) == 0, "\(alone.transcript)")
        #expect(alone.shown.first?.src == dir + "/.x.jpg", "\(alone.transcript)")
    }

    /// Names in a watched folder leak nothing into the log: a link to /proc/self/environ (or
    /// anywhere else outside the folder) is skipped with one line and never read, a file that is
    /// no image is not described by its bytes, a name with C1 or bidirectional controls is
    /// written escaped, and a name that is not UTF-8 is named in the log instead of left out
    /// without a word. A link to a file of the folder is still followed.
    @Test func namesInAWatchedFolderLeakNothingIntoTheLog() throws {
        let dir = makeTempDirectory("leaks")
        let outside = makeTempDirectory("leaks-outside")
        try writeFile(dir + "/a.png", solidPNG(Swatch.red))
        try writeFile(outside + "/secret.png", solidPNG(Swatch.blue))
        #expect(symlink("/proc/self/environ", dir + "/env.jpg") == 0)
        #expect(symlink(outside + "/secret.png", dir + "/secret.png") == 0)
        #expect(symlink("a.png", dir + "/b.png") == 0)  // inside: followed
        try writeFile(dir + "/notes.jpg", Array("SHELL=/bin/sh password=hunter2\n".utf8))
        try writeFile(dir + "/c\u{9B}2J\u{202E}gpj.txt", Array("not an image by its name\n".utf8))
        let latin1 = dir + "/caf\u{E9}.png"  // written below with the byte E9 alone
        let raw = Array(dir.utf8) + Array("/caf".utf8) + [0xE9] + Array(".png".utf8)
        let fd = raw.map { CChar(bitPattern: $0) }.withUnsafeBufferPointer { p -> Int32 in
            var name = Array(p) + [0]
            return open(&name, O_WRONLY | O_CREAT | O_CLOEXEC, 0o644)
        }
        #expect(fd >= 0, "\(latin1)")
        close(fd)
        let show = try KioskShow(["--size", "160x100", "--clock", "real", "--interval", "1", "--fade", "100",
                                  "--run-for", "6", dir])
        defer { show.stop() }
        #expect(show.waitUntil(10) { !$0.shown.isEmpty }, "\(show.transcript)")
        // Added while the show runs: another link out.
        #expect(symlink("/etc/hostname", dir + "/host.jpg") == 0)
        #expect(show.waitForExit(timeout: 20) == 0, "\(show.transcript)")
        let log = show.stderrLines.map(\.text).joined(separator: "\n")
        #expect(!log.contains("SHELL") && !log.contains("53 48 45 4C") && !log.contains("hunter2"), "\(log)")
        #expect(!log.contains("first bytes"), "no content bytes: \(log)")
        for name in ["env.jpg", "secret.png", "host.jpg"] {
            let lines = show.logLines(containing: "file skipped").filter { $0.contains("path=\(dir)/\(name) ") }
            #expect(lines.count == 1 && lines.first?.contains("outside the folder") == true, "\(name): \(log)")
        }
        #expect(!show.shown.contains {
            $0.src.hasSuffix("/env.jpg") || $0.src.hasSuffix("/secret.png") || $0.src.hasSuffix("/host.jpg")
        }, "\(show.transcript)")
        #expect(show.shown.contains { $0.src.hasSuffix("/b.png") },
                "a link within the folder is followed: \(show.transcript)")
        // Escaped, never written raw.
        #expect(!log.unicodeScalars.contains { $0.value == 0x9B || $0.value == 0x202E }, "\(log)")
        #expect(log.contains(#"c\u009b2J\u202egpj.txt""#), "\(log)")
        let notUTF8 = show.logLines(containing: "not valid UTF-8")
        #expect(notUTF8.count == 1 && notUTF8.first?.contains("63 61 66 e9 2e 70 6e 67") == true, "\(log)")
        #expect(show.logLines(containing: "notes.jpg").first?.contains("an unknown format") == true, "\(log)")
    }
}
