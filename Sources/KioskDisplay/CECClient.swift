// SPDX-License-Identifier: Apache-2.0
import Glibc
import CKioskSys
import KioskSystem

/// The TV follows the screen over HDMI-CEC (`--cec`, docs/power.md), through the kernel's CEC
/// API (<linux/cec.h>) as cec-ctl uses it: the adapter is opened, this process becomes an
/// initiator (CEC_S_MODE, no follower: the kernel answers the core messages), a playback
/// logical address is claimed (CEC_ADAP_S_LOG_ADDRS, unless the adapter has one already), and
/// when the screen goes off the TV gets Standby, when it comes on Image View On and Active
/// Source (``CECMessage``).
///
/// All of it runs on a thread of its own with blocking calls (a claim polls the bus, a message
/// takes some 50 ms to send and more with retries), so the frame loop only posts "on" or "off"
/// (``screen(on:)``; a newer one replaces one not yet sent) and reads ``status``. A TV that does
/// not answer, a bus without one, an adapter with no physical address or one that vanishes:
/// ``status`` says "unavailable" and why, a warning is logged once per reason, and the next
/// change tries again (opening the adapter again when it had gone). The screen itself is switched
/// by DPMS or fbdev blanking as before, whatever CEC does.
public final class CECClient: @unchecked Sendable {
    /// How it stands, for the control socket's `status` and the log.
    public struct Status: Equatable, Sendable {
        public enum State: String, Sendable {
            /// Nothing sent yet.
            case starting
            /// The last message was acknowledged.
            case ready
            /// The last attempt failed: ``reason`` says why.
            case unavailable
        }
        public var state: State = .starting
        /// Why it is unavailable (`no TV answered: ...`).
        public var reason: String?
        /// `vivid-000-vid-out0 (vivid)`: the adapter's name and driver, once opened.
        public var adapter: String?
        /// The logical address claimed (4: Playback Device 1), once claimed.
        public var logicalAddress: Int?
        /// The adapter's physical address, `1.0.0.0` (`f.f.f.f`: none).
        public var physicalAddress: String?
        /// What was last asked: the TV on (true) or in standby (false).
        public var screenOn: Bool?
        public init() {}
    }

    /// The adapter, e.g. `/dev/cec0`.
    public let device: String
    /// The name other devices show for us (Set OSD Name; at most 14 bytes).
    public let osdName: String
    /// Where the log lines go (Log.write by default); called on the client's thread.
    public var log: @Sendable (Log.Level, String, String?) -> Void = { level, what, text in
        Log.write(level, what, path: nil, detail: level == .info ? text : nil, reason: level == .info ? nil : text)
    }

    private let commands: Mailbox<Bool>
    private let worker: WorkerThread
    private let state = Locked(Status())
    /// The open adapter (the client's thread only).
    private var fd: FileDescriptor?
    /// The reason last logged, so that each is logged once.
    private var loggedReason: String?

    /// Prepares the client of `device`; opens nothing yet (``start()``).
    /// Throws ``SystemError`` (`pipe`) when the mailbox cannot be made.
    public init(device: String, osdName: String = "kiosk-carousel") throws(SystemError) {
        self.device = device
        self.osdName = String(osdName.utf8.prefix(14)) ?? "kiosk"
        commands = try Mailbox(bound: 4)
        worker = try WorkerThread(name: "CEC \(device)")
    }

    deinit { worker.stop() }

    /// What was last found out.
    public var status: Status { state.withLock { $0 } }

    /// Starts the client's thread. Throws ``SystemError`` (`pthread_create`).
    public func start() throws(SystemError) {
        try worker.start { [self] in run() }
    }

    /// The screen went on (Image View On and Active Source) or off (Standby). Never blocks.
    public func screen(on: Bool) { commands.post(on) }

    /// Ends the thread (a message being sent is finished first) and closes the adapter.
    public func stop() { worker.stop() }

    /// Waits up to `timeout` for every change posted to have been tried (for tests).
    public func waitUntilIdle(timeout: Duration) -> Bool {
        let end = ContinuousClock.now + timeout
        while ContinuousClock.now < end {
            if commands.count == 0 && !busy.withLock({ $0 }) { return true }
            usleep(5000)
        }
        return false
    }
    private let busy = Locked(false)

    private func run() {
        while true {
            guard commands.waitForValues(timeout: .seconds(3600), interrupt: worker.stopDescriptor) != .interrupted
            else { break }
            busy.withLock { $0 = true }
            if let on = commands.take().last { perform(on: on) }
            busy.withLock { $0 = false }
            if worker.isStopRequested { break }
        }
        fd = nil
    }

    /// Why a step failed: the text for ``Status/reason`` and whether the adapter must be opened again.
    private struct Problem: Error { var reason: String; var reopen = false }

    private func perform(on: Bool) {
        state.withLock { $0.screenOn = on }
        do throws(Problem) {
            let (initiator, physical) = try ready()
            let messages = on ? [CECMessage.imageViewOn(from: initiator),
                                 CECMessage.activeSource(from: initiator, physicalAddress: physical)]
                              : [CECMessage.standby(from: initiator)]
            for message in messages { try send(message) }
            let wasUnavailable = state.withLock { s -> Bool in
                defer { s.state = .ready; s.reason = nil }
                return s.state != .ready
            }
            if wasUnavailable || loggedReason != nil {
                let s = status
                log(.info, "CEC ready", "\(device): \(s.adapter ?? "?"), logical address \(initiator), "
                    + "physical address \(s.physicalAddress ?? "?")")
                loggedReason = nil
            }
            log(
                .info, on ? "CEC: TV on" : "CEC: TV to standby",
                messages.map(\.description).joined(separator: ", ") + " acknowledged")
        } catch {
            if error.reopen { fd = nil }
            let closed = fd == nil
            state.withLock {
                $0.state = .unavailable
                $0.reason = error.reason
                if closed { $0.adapter = nil; $0.logicalAddress = nil; $0.physicalAddress = nil }
            }
            if loggedReason != error.reason {
                loggedReason = error.reason
                log(.warning, "CEC unavailable", "\(device): \(error.reason); the screen is switched by DPMS alone")
            }
        }
    }

    /// The adapter open, an initiator with a logical address: (that address, the physical address).
    private func ready() throws(Problem) -> (UInt8, UInt16) {
        if fd == nil { try open() }
        guard let fd else { throw Problem(reason: "not open") }
        var count: UInt32 = 0, first: UInt8 = UInt8(kc_CEC_LOG_ADDR_INVALID)
        try check("CEC_ADAP_G_LOG_ADDRS") { kc_cec_log_addrs(fd.rawValue, &count, &first) }
        if count == 0 {
            try check("CEC_ADAP_S_LOG_ADDRS") { kc_cec_claim_playback(fd.rawValue, osdName, &first) }
        }
        var physical: UInt16 = UInt16(kc_CEC_PHYS_ADDR_INVALID)
        try check("CEC_ADAP_G_PHYS_ADDR") { kc_cec_phys_addr(fd.rawValue, &physical) }
        state.withLock {
            $0.physicalAddress = CECMessage.physicalAddressText(physical)
            $0.logicalAddress = first == UInt8(kc_CEC_LOG_ADDR_INVALID) ? nil : Int(first)
        }
        guard physical != UInt16(kc_CEC_PHYS_ADDR_INVALID) else {
            throw Problem(reason: "the adapter has no physical address (f.f.f.f): no HDMI connection, "
                          + "or the TV's EDID was not read")
        }
        guard first != UInt8(kc_CEC_LOG_ADDR_INVALID) else {
            throw Problem(reason: "no logical address could be claimed (the bus did not settle)")
        }
        return (first, physical)
    }

    private func open() throws(Problem) {
        let opened: FileDescriptor
        do {
            opened = try FileDescriptor.open(device, O_RDWR)
        } catch {
            switch error.errno {
            case ENOENT, ENODEV, ENXIO: throw Problem(reason: Self.goneReason)
            case EACCES, EPERM:
                throw Problem(reason: "\(error) (the user needs the group that owns it, on Debian video)")
            default: throw Problem(reason: error.description)
            }
        }
        var driver = [CChar](repeating: 0, count: 32), name = [CChar](repeating: 0, count: 32)
        var capabilities: UInt32 = 0
        guard kc_cec_caps(opened.rawValue, &driver, &name, &capabilities) == 0 else {
            let e = errno
            throw Problem(reason: e == ENOTTY ? "\(device) is not a CEC adapter (CEC_ADAP_G_CAPS: ENOTTY)"
                    : SystemError(operation: "ioctl CEC_ADAP_G_CAPS", path: device, errno: e).description)
        }
        guard capabilities & UInt32(kc_CEC_CAP_TRANSMIT) != 0 else {
            throw Problem(reason: "the adapter cannot transmit (no CEC_CAP_TRANSMIT)")
        }
        guard kc_cec_become_initiator(opened.rawValue) == 0 else {
            let e = errno
            throw Problem(
                reason: e == EBUSY
                    ? "another program holds the adapter as its exclusive initiator (CEC_S_MODE: EBUSY)"
                    : SystemError(operation: "ioctl CEC_S_MODE", path: device, errno: e).description)
        }
        state.withLock { $0.adapter = "\(String(cString: name)) (\(String(cString: driver)))" }
        fd = opened
    }

    private func send(_ message: CECMessage) throws(Problem) {
        guard let fd else { throw Problem(reason: "not open") }
        var status: UInt8 = 0
        try check("CEC_TRANSMIT \(message)") {
            kc_cec_transmit(fd.rawValue, message.bytes, UInt32(message.bytes.count), &status)
        }
        guard status & UInt8(kc_CEC_TX_STATUS_OK) != 0 else {
            if status & UInt8(kc_CEC_TX_STATUS_NACK) != 0 {
                throw Problem(reason: message.destination == CECMessage.tv
                    ? "no TV answered: \(message) was not acknowledged (no TV on the bus, or its CEC is switched off)"
                    : "\(message) was refused (not acknowledged)")
            }
            throw Problem(
                reason: "\(message) was not sent (tx_status 0x\(String(status, radix: 16)): the bus is busy or faulty)")
        }
    }

    /// Why an adapter that went away (ENODEV), or is not there (ENOENT), cannot be used: one
    /// reason for both, so that a vanished adapter is logged once, not again at each try.
    static let goneReason =
        "the adapter is not there (none at that path, or it went away: its driver unbound, the device unplugged)"

    /// Runs a kc_cec call; -1 becomes a ``Problem`` (ENODEV: the adapter went away, opened again next time).
    private func check(_ operation: String, _ body: () -> Int32) throws(Problem) {
        while body() != 0 {
            let e = errno
            if e == EINTR { continue }
            switch e {
            case ENODEV: throw Problem(reason: Self.goneReason, reopen: true)
            case ENONET:
                throw Problem(reason: "no logical address: the adapter has no physical address "
                              + "(no HDMI connection, or the TV's EDID was not read)")
            default:
                throw Problem(reason: SystemError(operation: "ioctl \(operation)", path: device, errno: e).description)
            }
        }
    }

    // MARK: - Which adapter (`--cec auto`)

    /// The CEC adapter of the screen `display` shows on, for `--cec auto`: among `/dev/cec*`, the
    /// one whose connector (CEC_ADAP_G_CONNECTOR_INFO) is the display's DRM card and connector;
    /// else, when there is exactly one adapter and it names no connector, that one. Nil and why
    /// not otherwise (none, or several and none tied to this connector: `--cec /dev/cecN` names one).
    public static func choose(for display: Display, directory: String = "/dev") -> (path: String?, why: String) {
        let names = ((try? listDirectory(directory)) ?? []).compactMap(\.name)
            .filter { $0.hasPrefix("cec") && $0.dropFirst(3).allSatisfy(\.isNumber) && $0.count > 3 }
            .sorted { $0.count != $1.count ? $0.count < $1.count : $0 < $1 }
        guard !names.isEmpty else { return (nil, "no CEC adapter (\(directory)/cec*)") }
        let drm = display.drmOutput
        let card = drm.flatMap { Int($0.devicePath.split(separator: "/").last?.drop { !$0.isNumber } ?? "") }
        var tiedElsewhere = 0
        for name in names {
            let path = "\(directory)/\(name)"
            let fd = Glibc.open(path, O_RDWR | O_CLOEXEC | O_NONBLOCK)
            guard fd >= 0 else { continue }
            defer { close(fd) }
            var type: UInt32 = 0, cardNo: UInt32 = 0, connector: UInt32 = 0
            guard kc_cec_connector(fd, &type, &cardNo, &connector) == 0, type == UInt32(kc_CEC_CONNECTOR_TYPE_DRM)
            else { continue }
            if let drm, let card, Int(cardNo) == card, connector == drm.connectorID {
                return (path, "the adapter of \(drm.connectorName)")
            }
            tiedElsewhere += 1
        }
        // One adapter tied to no other connector (opened later, so that trouble with it, a
        // permission say, is reported as its own).
        if names.count == 1 && tiedElsewhere == 0 { return ("\(directory)/\(names[0])", "the only CEC adapter") }
        return (
            nil,
            "\(names.count) CEC adapter\(names.count == 1 ? "" : "s") (\(names.joined(separator: ", "))), none tied to "
                + (drm.map { "\($0.connectorName)" } ?? "this display") + "; --cec /dev/cecN names one")
    }
}
