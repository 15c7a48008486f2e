// SPDX-License-Identifier: Apache-2.0
import Foundation
import Glibc
import KioskContent
import Testing

/// Ready first end to end (docs/carousel.md "Ready first"): the real `kiosk-carousel` on the
/// offscreen backend and the real clock, a manifest on nginx whose first six images trickle
/// from the fault server (one byte per 200 ms: never whole within the test) and whose last
/// one is a PNG nginx serves at once. Serialized: it follows wall time on a shared machine.
@Suite(.serialized) struct ReadyFirstShowTests {
    let cache = makeTempDirectory("ready-cache")
    let state = makeTempDirectory("ready-state")

    /// The good image reaches the screen within the first interval (5 s) instead of after the
    /// slow ones, and, once it is there, no frame is the placeholder while they stay late.
    @Test func aGoodItemBehindSixSlowOnesReachesTheScreenWithinTheFirstInterval() throws {
        let nginx = try Nginx()
        defer { nginx.stop() }
        let faults = try FaultServer()
        defer { faults.stop() }
        try publish(nginx, "img/good.png", solidPNG(Swatch.green))
        let urls = (1...6).map { faults.base + "/slow?item=\($0)" } + [nginx.base + "/img/good.png"]
        try publish(nginx, "show.json", json: itemsManifest(urls))
        let show = try KioskShow(["--size", "320x200", "--cache-dir", cache, "--state-dir", state,
                                  "--manifest", nginx.base + "/show.json", "--manifest-interval", "600",
                                  "--clock", "real", "--interval", "5", "--fade", "500", "--run-for", "14"])
        defer { show.stop() }
        show.waitForExit(timeout: 40)
        let shown = show.shown
        let good = try #require(shown.first { $0.src.hasSuffix("/good.png") }, "\(show.transcript)")
        print("ready first: the good image (7th of 7, behind six that trickle) first shown at show time"
              + " \(good.t) ms, its line \(String(format: "%.2f", good.at)) s after the spawn")
        #expect(good.t <= 5000, "\(show.transcript)")
        #expect(shown.allSatisfy { $0.src.hasSuffix("/good.png") }, "only the good image is ready: \(shown)")
        // From its first frame on, every frame is the green picture: no placeholder in between.
        let frames = try analyzeFrames(show.frames)
        let from = frames.filter { $0.ms >= Int(good.t) }
        #expect(!from.isEmpty)
        for f in from where !f.centerIs(Swatch.green) { Issue.record("not the good image at \(f.ms) ms: \(f)") }
    }
}
