// SPDX-License-Identifier: Apache-2.0
import Testing
import Glibc
import KioskSystem
import KioskDisplay

/// The `--display-off` timer on a real timerfd: armed for a second long past it fires at once,
/// armed for one far ahead it does not; consuming clears it.
@Suite struct DisplayScheduleTimerTests {
    @Test func aPastTimeFiresAndAFutureOneWaits() throws {
        let timer = try DisplayScheduleTimer()
        try timer.arm(at: Int(time(nil)) + 3600)
        #expect(!PollSet.isReadable(timer.descriptor))
        #expect(!timer.consume())
        try timer.arm(at: 1)  // 1970: expired already
        var set = PollSet(readable: [timer.descriptor])
        #expect(try set.wait(timeout: .seconds(5)) == 1)
        #expect(timer.consume())
        #expect(!timer.consume(), "consumed: not readable until it fires again")
    }
}
