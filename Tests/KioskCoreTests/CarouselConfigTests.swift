// SPDX-License-Identifier: Apache-2.0
import Testing
@testable import KioskCore

@Test func aManifestsOverridesKeepTheFadeWithinTheInterval() {
    var config = CarouselConfig(interval: .seconds(5), fade: .milliseconds(500))
    config.applyOverrides(interval: nil, fade: nil)
    #expect(config.interval == .seconds(5) && config.fade == .milliseconds(500), "nil keeps the command line's")
    config.applyOverrides(interval: .seconds(2), fade: .seconds(3))
    #expect(config.interval == .seconds(2) && config.fade == .seconds(2),
            "a fade longer than the interval is cut to it")
    config.applyOverrides(interval: .milliseconds(300), fade: nil)
    #expect(config.fade == .seconds(2), "a shorter interval alone leaves the fade as given…")
    #expect(config.effectiveFade == .milliseconds(300), "…and the carousel runs it cut to the interval")
    config.applyOverrides(interval: .seconds(10), fade: nil)
    #expect(config.effectiveFade == .seconds(2))
}

/// An interval below 50 ms (``CarouselConfig/intervalRange``) is raised to it, whoever asks:
/// zero once made every tick start a move that ended at once, recursing until the stack ran out.
@Test func anIntervalIsNeverShorterThanFiftyMilliseconds() {
    var config = CarouselConfig(interval: .seconds(5), fade: .milliseconds(500))
    config.applyOverrides(interval: .zero, fade: .zero)
    #expect(config.interval == .milliseconds(50))
    var h = Harness(count: 2, config: config)
    h.start()
    for ms in stride(from: 10, through: 1000, by: 10) { h.run(to: .milliseconds(Int64(ms))) }
    #expect(h.shown.count >= 2 && h.shown.count <= 21, "at most one move per 50 ms: \(h.shown.count)")
}
