// SPDX-License-Identifier: Apache-2.0
import KioskSystem

/// Runs the `--on-tap` command for a tap (docs/touch.md): the program and its arguments as
/// given, no shell, with `KIOSK_INDEX` (the playlist index) and `KIOSK_SRC` (the image's
/// source path or URL) added to its environment. At most one runs at a time: a tap while the
/// last run (or anything it left running in its process group) is still going is logged and
/// skipped, so a stuck script cannot pile up processes. ``stop()`` ends what is left when the
/// show ends.
public final class TapCommand {
    /// The program and its arguments.
    public let arguments: [String]
    private var running: ChildProcess?

    public init(arguments: [String]) { self.arguments = arguments }

    /// Starts the command for the item at `index` with `source`; returns at once.
    public func run(index: Int, source: String) {
        if let last = running {
            if last.poll() == nil || last.groupIsAlive {
                Log.info("tap command still running, this tap's run skipped", detail: "\(last.program) pid \(last.pid)")
                return
            }
            if let status = last.poll(), status != 0 {
                Log.warning("tap command failed", path: last.program, reason: "exit status \(status)")
            }
        }
        do {
            running = try ChildProcess(arguments: arguments,
                                       environment: ["KIOSK_INDEX": String(index), "KIOSK_SRC": Log.hidingPasswords(source)])
        } catch {
            running = nil
            Log.warning("tap command not started", reason: error.description)
        }
    }

    /// Reaps a finished run (called from the frame loop, so no zombie waits for the next tap).
    public func reap() { _ = running?.poll() }

    /// Ends the last run's process group (SIGTERM) when the show stops.
    public func stop() { running?.terminateGroup() }
}
