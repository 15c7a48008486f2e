// SPDX-License-Identifier: Apache-2.0
import Glibc
import KioskSystem

/// When each phase of the start-up happened, for one `first frame` log line (docs/boot.md:
/// where the kiosk's own time to its first photo goes). Times are CLOCK_MONOTONIC
/// nanoseconds; the process's own start is the kernel's (`/proc/self/stat` field 22, in clock
/// ticks of CLOCK_BOOTTIME, `sysconf(_SC_CLK_TCK)` per second: 10 ms steps on Debian), moved
/// onto CLOCK_MONOTONIC. Marks come from the main thread and the decode worker; only the first
/// mark of each phase counts.
public final class StartupTrace: @unchecked Sendable {
    /// The phases, in the order they usually happen.
    public enum Phase: Int, CaseIterable, Sendable {
        /// `main` entered: the binary and its libraries loaded, the Swift runtime started.
        case main
        /// The display open (after waiting for one, when there was none at start).
        case displayOpened
        /// The show's clock started: its events' `t` counts from here.
        case showStarted
        /// The first image's decode started and ended on the decode worker.
        case decodeStarted, decodeEnded
        /// The first frame composed, then handed to the display (for DRM: copied into a dumb
        /// buffer and put up with drmModeSetCrtc).
        case rendered, presented
        /// The first `shown` event written (the first photo whole on the screen).
        case shown
    }

    /// The one trace of this process.
    public static let shared = StartupTrace()

    private let marks = Locked([UInt64?](repeating: nil, count: Phase.allCases.count))
    private let reported = Locked(false)
    /// The process's start on CLOCK_MONOTONIC (ns); nil when `/proc/self/stat` cannot be read.
    public let processStart: UInt64?

    init() {
        processStart = Self.processStartMonotonic()
    }

    /// Records `phase` now, unless it was recorded before.
    public func mark(_ phase: Phase) {
        let now = Self.monotonic(CLOCK_MONOTONIC)
        marks.withLock { if $0[phase.rawValue] == nil { $0[phase.rawValue] = now } }
    }

    /// The time of `phase` in seconds since the process started (or since `main` when the
    /// start is unknown); nil when it was not marked.
    public func seconds(_ phase: Phase) -> Double? {
        let all = marks.withLock { $0 }
        guard let at = all[phase.rawValue], let origin = processStart ?? all[Phase.main.rawValue] else { return nil }
        return Double(Int64(bitPattern: at &- origin)) / 1e9
    }

    /// The detail of the `first frame` line: `1.84 s after the process started: main 0.31 s,
    /// display opened 0.45 s, show started 0.47 s, first decode 0.50-1.20 s, rendered 1.21 s,
    /// presented 1.25 s, shown 1.26 s` (phases not marked are left out).
    public func summary() -> String {
        let names: [(Phase, String)] = [(.main, "main"), (.displayOpened, "display opened"),
                                        (.showStarted, "show started"), (.rendered, "first frame rendered"),
                                        (.presented, "presented"), (.shown, "shown")]
        var parts: [String] = []
        for (phase, name) in names {
            if phase == .rendered, let a = seconds(.decodeStarted), let b = seconds(.decodeEnded) {
                parts.append("first decode \(Self.format(a))-\(Self.format(b)) s")
            }
            if let s = seconds(phase) { parts.append("\(name) \(Self.format(s)) s") }
        }
        let total = seconds(.shown).map { "\(Self.format($0)) s after the process started" } ?? "not shown yet"
        return total + (processStart == nil ? " (its start unknown: from main)" : "") + ": "
            + parts.joined(separator: ", ")
    }

    /// Marks ``Phase/shown`` and logs the `first frame` line, once per process.
    public func reportFirstShown() {
        mark(.shown)
        let first = reported.withLock { r -> Bool in defer { r = true }; return !r }
        if first { Log.info("first frame", detail: summary()) }
    }

    private static func format(_ seconds: Double) -> String {
        let centis = Int((seconds * 100).rounded())
        return "\(centis / 100).\(centis % 100 < 10 ? "0" : "")\(centis % 100)"
    }

    private static func monotonic(_ clock: clockid_t) -> UInt64 {
        var ts = timespec()
        clock_gettime(clock, &ts)
        return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
    }

    /// Field 22 of `/proc/self/stat` (starttime, clock ticks since boot: proc(5)), the fields
    /// counted after the command name's closing parenthesis (the name may hold spaces).
    static func processStartMonotonic() -> UInt64? {
        guard let f = fopen("/proc/self/stat", "r") else { return nil }
        defer { fclose(f) }
        var buffer = [CChar](repeating: 0, count: 1024)
        guard fgets(&buffer, Int32(buffer.count), f) != nil else { return nil }
        let line = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        guard let close = line.lastIndex(of: ")") else { return nil }
        let fields = line[line.index(after: close)...].split(separator: " ")
        // fields[0] is field 3 (state): field 22 is fields[19].
        let ticksPerSecond = sysconf(Int32(_SC_CLK_TCK))
        guard fields.count > 19, let ticks = UInt64(fields[19]), ticksPerSecond > 0 else { return nil }
        let startBoot = ticks &* 1_000_000_000 / UInt64(ticksPerSecond)
        let nowBoot = monotonic(CLOCK_BOOTTIME), nowMono = monotonic(CLOCK_MONOTONIC)
        guard nowBoot >= startBoot else { return nil }
        let age = nowBoot - startBoot
        return nowMono >= age ? nowMono - age : nil
    }
}
