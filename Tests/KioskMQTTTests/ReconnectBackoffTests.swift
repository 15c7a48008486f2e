// SPDX-License-Identifier: Apache-2.0
import Testing
import KioskMQTT

@Test func theWaitDoublesToItsCapWithJitterAndAStableConnectionResetsIt() {
    var b = ReconnectBackoff()
    let waits = (0..<9).map { _ in b.delay(connectedFor: nil, random: 0.5) }
    #expect(waits == [1, 2, 4, 8, 16, 32, 60, 60, 60].map { Duration.seconds($0) })
    // Jitter: ±25 % at the ends of the random number's range.
    var c = ReconnectBackoff()
    #expect(c.delay(connectedFor: nil, random: 0) == .milliseconds(750))
    var d = ReconnectBackoff()
    #expect(d.delay(connectedFor: nil, random: 0.999_999) < .milliseconds(1250))
    // A connection that dropped after 5 s does not reset the wait; one up for 30 s does.
    #expect(b.delay(connectedFor: .seconds(5), random: 0.5) == .seconds(60))
    #expect(b.delay(connectedFor: .seconds(30), random: 0.5) == .seconds(1))
    #expect(b.failures == 1)
}
