// SPDX-License-Identifier: Apache-2.0
import Glibc

/// Write end of the process's signal pipe, read by the handlers (async-signal-safe: one `write`).
nonisolated(unsafe) private var signalPipeWrite: Int32 = -1

/// The self-pipe for signals: the handlers only write the signal's number (one byte) into a
/// pipe; the loop polls ``wakeDescriptor`` and does the work (as fbi does). One per process,
/// since signal dispositions are: ``install(_:)`` makes it once and adds handlers.
public final class SignalPipe: WakeSource, @unchecked Sendable {
    /// Read end: readable while signal numbers wait (non-blocking, close-on-exec).
    public let wakeDescriptor: Int32

    private init(read: Int32) { wakeDescriptor = read }

    nonisolated(unsafe) private static var shared: SignalPipe?

    /// Makes the pipe (on the first call) and catches `signals` into it: each is unblocked in
    /// this thread's mask (a parent may have started us with them blocked) and gets a handler
    /// that writes its number, with `SA_RESTART`. Returns the process's pipe.
    /// Throws ``SystemError`` (`pipe`) when the pipe cannot be made.
    @discardableResult
    public static func install(_ signals: [Int32]) throws(SystemError) -> SignalPipe {
        let pipe: SignalPipe
        if let shared { pipe = shared } else {
            let fds = try makeWakePipe()
            signalPipeWrite = fds.write
            pipe = SignalPipe(read: fds.read)
            shared = pipe
        }
        var set = sigset_t()
        sigemptyset(&set)
        for sig in signals { sigaddset(&set, sig) }
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
        for sig in signals {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { signo in
                let saved = errno
                var byte = UInt8(truncatingIfNeeded: signo)
                _ = write(signalPipeWrite, &byte, 1)
                errno = saved
            }
            sigemptyset(&action.sa_mask)
            action.sa_flags = SA_RESTART
            sigaction(sig, &action, nil)
        }
        return pipe
    }

    /// The signal numbers caught since the last take, in order. Never blocks.
    public func take() -> [Int32] {
        var out: [Int32] = []
        var buffer = [UInt8](repeating: 0, count: 16)
        while true {
            let n = read(wakeDescriptor, &buffer, buffer.count)
            if n <= 0 { return out }
            out += buffer[0..<n].map { Int32($0) }
        }
    }
}
