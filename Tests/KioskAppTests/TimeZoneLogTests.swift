// SPDX-License-Identifier: Apache-2.0
import Foundation
import Glibc
import Testing

/// An invalid `TZ` (glibc then uses UTC without a word) is logged once at the start, with the
/// value; a good one is not. The real program on the offscreen backend (one round, virtual time).
@Test func anInvalidTimeZoneIsLoggedOnceAtTheStart() throws {
    for (tz, logged) in [("Mars/Olympus", true), ("Europe/Berlin", false)] {
        let frames = controlTestDirectory()
        defer { try? FileManager.default.removeItem(atPath: frames) }
        let child = try KioskChild(["--display", "offscreen:" + frames, "--size", "64x40", "--interval", "1",
                                    controlTestPhotos[0], controlTestPhotos[1]], environment: ["TZ": tz])
        #expect(waitFor(30) { !child.process.isRunning }, "TZ=\(tz): the show did not end")
        _ = waitFor(2) { child.stderr.text.contains("show started") }
        let lines = child.stderr.lines.map(\.text).filter { $0.contains("time zone not known") }
        #expect(lines.count == (logged ? 1 : 0), "TZ=\(tz): \(child.stderr.text)")
        if logged { #expect(lines.first?.contains("TZ=Mars/Olympus is neither a zone") == true, "\(lines)") }
    }
}
