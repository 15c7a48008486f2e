// SPDX-License-Identifier: Apache-2.0
import Glibc
import Testing
import KioskSystem

@Test func signalsSentToTheProcessArriveInThePipe() throws {
    let pipe = try SignalPipe.install([SIGUSR1, SIGUSR2])
    _ = pipe.take()
    #expect(try SignalPipe.install([SIGUSR1]) === pipe, "one pipe per process")
    /// Sends `signal` and takes what the pipe brings within 5 s.
    func send(_ signal: Int32) -> [Int32] {
        kill(getpid(), signal)
        let deadline = ContinuousClock.now + .seconds(5)
        var got: [Int32] = []
        while got.isEmpty, ContinuousClock.now < deadline {
            var p = pollfd(fd: pipe.wakeDescriptor, events: Int16(POLLIN), revents: 0)
            _ = poll(&p, 1, 200)
            got += pipe.take()
        }
        return got
    }
    // One at a time: the kernel delivers pending standard signals lowest number first.
    #expect(send(SIGUSR2) == [SIGUSR2])
    #expect(send(SIGUSR1) == [SIGUSR1])
    #expect(pipe.take().isEmpty)
}
