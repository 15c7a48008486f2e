// SPDX-License-Identifier: Apache-2.0
internal import CKioskMQTT
internal import CLibMosquitto
import Glibc
import KioskCore
import KioskSystem

// The MQTT client: libmosquitto driven from a poll loop of our own (mosquitto_socket,
// mosquitto_loop_read/write/misc, mosquitto.h "Network loop (for use in other event loops)").

/// A command received on a command topic, on its way to the frame loop.
public struct MQTTRequest: Equatable, Sendable {
    public let command: MQTTCommand
    /// The payload as received (printable ASCII, at most ``MQTTCommandParser/maxPayloadBytes``),
    /// for the reply.
    public let payload: String
}

/// The MQTT client (docs/mqtt.md): one connection to the broker, on a thread of its own.
///
/// Threads: the frame loop only posts (``publish(eventLine:)``, ``publish(status:)``,
/// ``answer(_:error:)``) and takes ``commands`` (a ``Mailbox`` it polls, as the control
/// socket's requests); neither ever blocks. The client's ``WorkerThread`` polls the broker's
/// socket and its mailboxes, writes the ``EventOutbox`` and runs libmosquitto's callbacks.
/// Connecting (name lookup, TCP connect; libmosquitto's connect call blocks on both) runs on a
/// short-lived thread of its own each time, so that a broker that does not answer delays
/// nothing else and ``stop()`` never waits for it.
///
/// The connection: MQTT 5 with a Maximum Packet Size of ``maxPacketBytes`` (so a broker
/// sends no larger message; MQTT 5 section 3.1.2.11.4), or MQTT 3.1.1 when the broker refuses
/// version 5; a clean session (commands sent while the kiosk was away are not carried out
/// later); the last will `offline` (retained) on the availability topic; keep-alive
/// ``MQTTConfiguration/keepAlive``. A try that fails, or a connection that is lost, is tried
/// again after ``ReconnectBackoff``'s wait (1 s doubling to 60 s, ±25 %). An answer (CONNACK)
/// must come within ``handshakeTimeout`` of the TCP connection.
///
/// On each connection: the subscriptions (the command topics, Home Assistant's status), then
/// `online`, the discovery configs, the screen's state and the status (all retained), then the
/// outbox's events (QoS 1, at most ``eventWindow`` unacknowledged at a time; libmosquitto keeps
/// the unacknowledged ones and sends them again after a reconnect, MQTT 5 section 4.4).
public final class MQTTClient: @unchecked Sendable {
    public let configuration: MQTTConfiguration
    public let topics: MQTTTopics
    /// Commands for the frame loop, oldest first: it polls ``Mailbox/wakeDescriptor`` and takes
    /// them (at most 64 wait; a flood loses the oldest).
    public let commands: Mailbox<MQTTRequest>

    /// The largest packet the broker may send, bytes (MQTT 5 Maximum Packet Size).
    public static let maxPacketBytes: UInt32 = 64 * 1024
    /// Most commands waiting for the frame loop; a flood loses the oldest (``commands``).
    public static let commandBound = 64
    /// Events published and not yet acknowledged, at most.
    public static let eventWindow = 32
    /// Inputs (event lines, statuses, answers) waiting for the client's thread, at most; past it
    /// new ones are dropped (event lines counted in ``Statistics/droppedBeforeOutbox``).
    public static let inboxLimit = 4096
    /// How long a connection may take from TCP to the broker's CONNACK (TLS handshake included).
    public static let handshakeTimeout: Duration = .seconds(15)

    /// What the client has done, for tests and the log.
    public struct Statistics: Equatable, Sendable {
        public var connected = false
        /// Connections that reached CONNACK.
        public var connections = 0
        /// The MQTT version of the connection (5 or 4 for 3.1.1), 0 before the first.
        public var protocolVersion = 0
        public var lastSeq: UInt64 = 0
        public var pending = 0
        public var droppedTotal: UInt64 = 0
        /// Events the broker acknowledged (PUBACK) since the start.
        public var acknowledged = 0
        /// Events the broker refused (a PUBACK with a reason code of 0x80 or above), dropped.
        public var refusedByBroker = 0
        /// Event lines dropped before reaching the outbox (the client's thread fell behind).
        public var droppedBeforeOutbox = 0
        /// Command messages refused (topic, payload, retain flag).
        public var refusedCommands = 0
        /// Commands dropped unanswered by a flood (more than ``MQTTClient/commandBound`` waiting).
        public var droppedCommands = 0
        /// Whether the outbox is on disk.
        public var durable = false
    }

    public var statistics: Statistics { stats.withLock { $0 } }

    private enum Input: Sendable {
        case event([UInt8])
        case status(JSONValue)
        case answer(MQTTRequest, String?)
    }

    private let inbox: Mailbox<Input>
    private let worker: WorkerThread
    private let handle: Handle
    private let connectResults: Mailbox<ConnectResult>
    private let stats = Locked(Statistics())
    private let inboxDrops = Locked(0)

    // The client thread's own state.
    private let outbox: EventOutbox
    private enum Phase {
        case waiting(until: Duration)
        case connecting
        case handshaking(deadline: Duration)
        case connected(since: Duration)
    }
    private var phase: Phase = .waiting(until: .zero)
    private var backoff = ReconnectBackoff()
    private var random = SystemRandomNumberGenerator()
    private var protocolVersion = Int32(MQTT_PROTOCOL_V5)
    /// Events handed to libmosquitto: message ID to seq, and the seqs.
    private var inFlight: [Int32: UInt64] = [:]
    private var inFlightSeqs: Set<UInt64> = []
    private var latestStatus: JSONValue?
    private var publishedDisplay: String?
    private var pendingAcks: [UInt64] = []
    private var rediscoverAt: Duration?
    private var lastDiscovery: Duration = .zero - .seconds(3600)
    /// The last error libmosquitto logged (its log callback), for the next failure's line.
    private var libraryMessage: String?
    /// What the callbacks saw during the last libmosquitto call, acted on after it returns.
    private var connackCode: Int32?
    private var disconnectCode: Int32?
    private var failureLog = LogThrottle(period: .seconds(60))
    private var lastFailure = ""
    private var commandLog = LogThrottle(period: .seconds(1))
    private var commandDropLog = LogThrottle(period: .seconds(1))
    private var dropLog = LogThrottle(period: .seconds(60))
    private var everConnected = false

    /// Makes the client: loads libmosquitto, sets up the handle (login, will, TLS) and opens the
    /// outbox; starts nothing. Throws ``MQTTError/library(reason:)`` when libmosquitto cannot be
    /// loaded or refuses a setting (a TLS file it cannot read), ``MQTTError/system(_:)`` (a pipe).
    public init(configuration: MQTTConfiguration) throws(MQTTError) {
        guard let api = kc_mqtt_load() else {
            throw .library(reason: kc_mqtt_load_error().map { String(cString: $0) } ?? "cannot be loaded")
        }
        self.configuration = configuration
        topics = configuration.topics
        do {
            commands = try Mailbox(bound: Self.commandBound, overflow: .dropOldest)
            inbox = try Mailbox(wake: .whenEmpty)
            connectResults = try Mailbox()
            worker = try WorkerThread(name: "mqtt \(configuration.broker)")
        } catch {
            throw .system(error)
        }
        let (outbox, notes) = EventOutbox.open(directory: configuration.outboxDirectory,
                                               limit: configuration.outboxLimit)
        self.outbox = outbox
        for note in notes {
            Log.warning("mqtt outbox", path: outbox.path ?? configuration.outboxDirectory, reason: note)
        }
        handle = try Handle(api: api, configuration: configuration)
        stats.withLock {
            $0.lastSeq = outbox.lastSeq
            $0.pending = outbox.pendingCount
            $0.droppedTotal = outbox.droppedTotal
            $0.durable = outbox.path != nil
        }
        handle.setCallbacks(Unmanaged.passUnretained(self).toOpaque())
    }

    deinit {
        stop()
    }

    /// Starts the client's thread (once). Throws ``MQTTError/system(_:)`` (`pthread_create`).
    public func start() throws(MQTTError) {
        let pending = outbox.pendingCount
        Log.info("mqtt starting", path: configuration.broker.description,
                 detail: "topics under \(topics.prefix)"
                    + (pending > 0 ? "; \(counted(pending, "event")) waiting in the outbox" : "")
                    + (outbox.path.map { "; outbox \($0)" } ?? "; outbox in memory"))
        do { try worker.start { self.run() } } catch { throw .system(error) }
    }

    /// Stops the thread: `offline` is published and the connection closed cleanly when it is
    /// up, acknowledgements are synced to the outbox. Returns within about a second; a connect
    /// still under way is left to finish on its own thread. Idempotent.
    public func stop() {
        worker.stop()
        handle.release()
    }

    // MARK: The frame loop's side (never blocks)

    /// Sends an event line (the very line written to stdout, without its newline) to the
    /// events topic with the next `seq`, through the outbox.
    public func publish(eventLine: String) {
        guard inbox.count < Self.inboxLimit else {
            let n = inboxDrops.withLock { $0 += 1; return $0 }
            if n == 1 {
                Log.warning("mqtt events dropped", reason: "the MQTT thread is \(Self.inboxLimit) events behind")
            }
            return
        }
        inbox.post(.event(Array(eventLine.utf8)))
    }

    /// The status to publish (retained): the control socket's `status` object, with `caption`
    /// and the like added by the caller; the newest replaces any not yet sent.
    public func publish(status: JSONValue) {
        // A newer one follows with the next event: past the bound this one is not needed.
        if inbox.count < Self.inboxLimit { inbox.post(.status(status)) }
    }

    /// Answers `request` on the reply topic: `error` nil for success, else why it was not
    /// carried out.
    public func answer(_ request: MQTTRequest, error: String?) {
        if inbox.count < Self.inboxLimit { inbox.post(.answer(request, error)) }
    }

    // MARK: The client's thread

    private func run() {
        while true {
            let now = monotonicNow()
            var fds = [pollfd(fd: worker.stopDescriptor, events: Int16(POLLIN), revents: 0),
                       pollfd(fd: inbox.wakeDescriptor, events: Int16(POLLIN), revents: 0),
                       pollfd(fd: connectResults.wakeDescriptor, events: Int16(POLLIN), revents: 0)]
            var timeout = Duration.seconds(1)
            let socket: Int32
            switch phase {
            case .handshaking, .connected: socket = handle.socket
            case .waiting, .connecting: socket = -1
            }
            if socket >= 0 {
                let events = Int32(POLLIN) | (handle.wantsWrite ? Int32(POLLOUT) : 0)
                fds.append(pollfd(fd: socket, events: Int16(events), revents: 0))
            }
            switch phase {
            case .waiting(let until): timeout = min(timeout, until - now)
            case .handshaking(let deadline): timeout = min(timeout, deadline - now)
            default: break
            }
            if let at = rediscoverAt { timeout = min(timeout, at - now) }
            _ = poll(&fds, nfds_t(fds.count), pollTimeout(timeout))
            if fds[0].revents != 0 {
                shutDown()
                return
            }
            for result in connectResults.take() { connectFinished(result) }
            takeInputs()
            if socket >= 0, fds.count > 3 {
                let revents = Int32(fds[3].revents)
                let api = handle.api.pointee
                if revents & Int32(POLLIN | POLLHUP | POLLERR) != 0 { check(api.mosquitto_loop_read(handle.mosq, 1)) }
                if revents & Int32(POLLOUT) != 0, isLinked { check(api.mosquitto_loop_write(handle.mosq, 1)) }
            }
            if isLinked { check(handle.api.pointee.mosquitto_loop_misc(handle.mosq)) }
            // Acknowledged events leave the outbox before anything is published again.
            flushAcks()
            serviceConnection(at: monotonicNow())
        }
    }

    /// Whether a socket to the broker is open (after the TCP connection, before a loss).
    private var isLinked: Bool {
        switch phase {
        case .handshaking, .connected: return true
        default: return false
        }
    }

    private var isConnected: Bool {
        if case .connected = phase { return true }
        return false
    }

    private func takeInputs() {
        var lines: [[UInt8]] = []
        for input in inbox.take() {
            switch input {
            case .event(let line): lines.append(line)
            case .status(let status): latestStatus = status; statusChanged = true
            case .answer(let request, let error): reply(request, error: error)
            }
        }
        let lost = inboxDrops.withLock { n -> Int in defer { n = 0 }; return n }
        if lost > 0 { stats.withLock { $0.droppedBeforeOutbox += lost } }
        guard !lines.isEmpty else { return }
        let outcome = outbox.append(lines)
        if outcome.refused > 0 {
            Log.warning("mqtt event not sent", reason: "\(counted(outcome.refused, "event line")) not one JSON object"
                        + " or over \(EventOutbox.maxPayloadBytes) bytes")
        }
        if outcome.droppedCount > 0, let n = dropLog.note(at: monotonicNow()) {
            Log.warning("mqtt outbox full: oldest events dropped", path: outbox.path,
                        reason: "\(outbox.pendingCount) events wait for the broker (the bound is"
                            + " \(configuration.outboxLimit)); \(outbox.droppedTotal) dropped in all"
                            + (n > 1 ? "; \(n) such drops since the last line" : ""))
        }
        if !outcome.durable, outbox.path != nil, let error = outbox.lastError {
            Log.warning("mqtt outbox not written: events kept in memory", path: outbox.path, reason: error)
        }
        if outcome.droppedCount > 0 { statusChanged = true }
        updateStatistics()
    }

    private var statusChanged = false

    /// After each turn: start a connection when it is time, give up a handshake that takes too
    /// long, and while connected publish what waits.
    private func serviceConnection(at now: Duration) {
        if let code = connackCode {
            connackCode = nil
            connackArrived(code, at: now)
        }
        if let code = disconnectCode {
            disconnectCode = nil
            if isLinked { lost(reason: describe(code), at: now) }
        }
        switch phase {
        case .waiting(let until) where now >= until:
            startConnecting()
        case .handshaking(let deadline) where now >= deadline:
            // The socket is left as it is (not polled meanwhile): the next connect closes it.
            lost(reason: "no CONNACK within \(Self.handshakeTimeout.components.seconds) s of the TCP connection"
                 + (libraryMessage.map { " (\($0))" } ?? ""), at: now)
        case .connected:
            if let at = rediscoverAt, now >= at {
                rediscoverAt = nil
                announce(at: now)
            }
            if statusChanged { publishStatus() }
            publishEvents()
        default:
            break
        }
    }

    private func startConnecting() {
        phase = .connecting
        libraryMessage = nil
        do {
            try handle.connectInBackground(protocolVersion: protocolVersion, results: connectResults)
        } catch {
            failed("cannot start the connecting thread: \(error)", at: monotonicNow(), connectedFor: nil)
        }
    }

    private func connectFinished(_ result: ConnectResult) {
        guard case .connecting = phase else { return }
        let now = monotonicNow()
        if result.code == MOSQ_ERR_SUCCESS.rawValue {
            phase = .handshaking(deadline: now + Self.handshakeTimeout)
        } else {
            failed(connectFailure(result), at: now, connectedFor: nil)
        }
    }

    private func connackArrived(_ code: Int32, at now: Duration) {
        guard case .handshaking = phase else { return }
        if code == 0 {
            phase = .connected(since: now)
            everConnected = true
            stats.withLock { $0.connected = true; $0.connections += 1; $0.protocolVersion = Int(protocolVersion) }
            let pending = outbox.pendingCount
            Log.info("mqtt connected", path: configuration.broker.description,
                     detail: "MQTT \(protocolVersion == MQTT_PROTOCOL_V5 ? "5" : "3.1.1"),"
                        + " topics under \(topics.prefix)"
                        + (pending > 0 ? "; sending \(counted(pending, "event")) from the outbox" : ""))
            lastFailure = ""
            subscribe()
            announce(at: now)
            publishEvents()
            return
        }
        if protocolVersion == MQTT_PROTOCOL_V5 && code == Int32(MQTT_RC_UNSUPPORTED_PROTOCOL_VERSION.rawValue) {
            protocolVersion = Int32(MQTT_PROTOCOL_V311)
            Log.warning("mqtt broker speaks MQTT 3.1.1 only", path: configuration.broker.description,
                        reason: "connecting with 3.1.1: no Maximum Packet Size, so the broker may pass on"
                            + " messages of any size")
            handle.setProtocol(protocolVersion)
            phase = .waiting(until: now)
            return
        }
        let text = protocolVersion == MQTT_PROTOCOL_V5
            ? cText(handle.api.pointee.mosquitto_reason_string(code))
            : cText(handle.api.pointee.mosquitto_connack_string(code))
        failed("the broker refused the connection: \(text) (reason code \(code))", at: now, connectedFor: nil)
    }

    /// A try that failed: logged (the first of a kind at once, repeats once a minute), then
    /// the wait.
    private func failed(_ reason: String, at now: Duration, connectedFor: Duration?) {
        let delay = backoff.delay(connectedFor: connectedFor, random: Double.random(in: 0..<1, using: &random))
        phase = .waiting(until: now + delay)
        stats.withLock { $0.connected = false }
        let retry = "; trying again in \(formatSeconds(delay))"
        if reason != lastFailure {
            lastFailure = reason
            failureLog = LogThrottle(period: .seconds(60))
            _ = failureLog.note(at: now)
            Log.warning(everConnected ? "mqtt reconnect failed" : "mqtt connection failed",
                        path: configuration.broker.description, reason: reason + retry)
        } else if let n = failureLog.note(at: now) {
            Log.warning("mqtt connection failed again", path: configuration.broker.description,
                        reason: reason + " (\(counted(n, "try", "tries")) since the last line)" + retry)
        }
    }

    private func lost(reason: String, at now: Duration) {
        var upFor: Duration?
        if case .connected(let since) = phase {
            upFor = now - since
            Log.warning("mqtt connection lost", path: configuration.broker.description,
                        reason: reason
                            + (inFlight.isEmpty ? "" : "; \(counted(inFlight.count, "event")) to send again"))
            lastFailure = ""
        }
        failed(reason, at: now, connectedFor: upFor)
    }

    /// A libmosquitto call's result: anything but success means the link is gone (the
    /// disconnect callback has said so already, or says so now).
    private func check(_ code: Int32) {
        guard code != MOSQ_ERR_SUCCESS.rawValue, isLinked else { return }
        if disconnectCode == nil { disconnectCode = code }
    }

    /// libmosquitto's words for `code`. Where it has none ("Unknown error": Debian 13's 2.0.21
    /// says so for MOSQ_ERR_MALFORMED_PACKET, a reply that is not MQTT, which 2.0.11 calls
    /// "Malformed packet") that one is named as 2.0.11 does, any other by its code (mosquitto.h).
    private func libraryText(_ code: Int32) -> String {
        let text = cText(handle.api.pointee.mosquitto_strerror(code))
        guard text == "Unknown error" else { return text }
        return code == MOSQ_ERR_MALFORMED_PACKET.rawValue ? "Malformed packet" : "\(text) (libmosquitto error \(code))"
    }

    private func describe(_ code: Int32) -> String {
        var text = libraryText(code)
        if code == MOSQ_ERR_ERRNO.rawValue { text += " (\(String(cString: strerror(errno))))" }
        if let libraryMessage { text += " (\(libraryMessage))" }
        return text
    }

    private func connectFailure(_ result: ConnectResult) -> String {
        var text = libraryText(result.code)
        if result.code == MOSQ_ERR_ERRNO.rawValue {
            text = String(cString: strerror(result.errno))
        } else if result.code == MOSQ_ERR_EAI.rawValue {
            text = "cannot look up \(configuration.broker.host): \(String(cString: gai_strerror(result.errno)))"
        }
        if let libraryMessage { text += " (\(libraryMessage))" }
        return text
    }

    // MARK: Publishing

    private func subscribe() {
        let api = handle.api.pointee
        _ = api.mosquitto_subscribe(handle.mosq, nil, topics.commandFilter, 1)
        if let status = topics.homeAssistantStatus { _ = api.mosquitto_subscribe(handle.mosq, nil, status, 1) }
    }

    /// `online`, the discovery configs, the screen's state and the status, all retained.
    private func announce(at now: Duration) {
        publish(topics.availability, Array("online".utf8), qos: 1, retain: true)
        for message in HomeAssistantDiscovery.messages(configuration) {
            publish(message.topic, message.payload, qos: 1, retain: true)
        }
        lastDiscovery = now
        publishedDisplay = nil
        publishStatus()
    }

    private func publishStatus() {
        statusChanged = false
        guard isConnected else { return }
        let status = latestStatus ?? .object([:])
        let payload = HomeAssistantDiscovery.statusPayload(status, lastSeq: outbox.lastSeq,
                                                           pending: outbox.pendingCount, dropped: outbox.droppedTotal)
        publish(topics.status, payload, qos: 0, retain: true)
        if case .object(let fields)? = latestStatus, case .string(let display)? = fields["display"] {
            let state = display == "off" ? "OFF" : "ON"
            if state != publishedDisplay {
                publishedDisplay = state
                publish(topics.display, Array(state.utf8), qos: 1, retain: true)
            }
        }
    }

    /// Hands the outbox's events to libmosquitto, oldest first, up to ``eventWindow`` in flight.
    private func publishEvents() {
        guard isConnected, inFlight.count < Self.eventWindow else { return }
        var refused: [UInt64] = []
        for event in outbox.pending where !inFlightSeqs.contains(event.seq) {
            if inFlight.count >= Self.eventWindow { break }
            var mid: Int32 = 0
            let code = event.payload.withUnsafeBytes {
                handle.api.pointee.mosquitto_publish(handle.mosq, &mid, topics.events, Int32($0.count), $0.baseAddress,
                                                     1, false)
            }
            if code == MOSQ_ERR_SUCCESS.rawValue {
                inFlight[mid] = event.seq
                inFlightSeqs.insert(event.seq)
            } else if code == MOSQ_ERR_OVERSIZE_PACKET.rawValue || code == MOSQ_ERR_PAYLOAD_SIZE.rawValue {
                // Larger than the broker takes: it can never be sent.
                Log.warning("mqtt event dropped",
                            reason: "seq \(event.seq): \(event.payload.count) bytes, more than the broker takes")
                refused.append(event.seq)
            } else {
                check(code)
                break
            }
        }
        if !refused.isEmpty {
            outbox.acknowledge(refused)
            stats.withLock { $0.refusedByBroker += refused.count }
        }
    }

    private func publish(_ topic: String, _ payload: [UInt8], qos: Int32, retain: Bool) {
        let code = payload.withUnsafeBytes {
            handle.api.pointee.mosquitto_publish(handle.mosq, nil, topic, Int32($0.count), $0.baseAddress, qos, retain)
        }
        check(code)
    }

    private func sendReply(_ request: MQTTRequest?, command: String? = nil, payload: String? = nil, error: String?) {
        guard isConnected else { return }
        var fields: [String: JSONValue] = ["error": .string(error ?? "success")]
        if let name = request?.command.name.rawValue ?? command { fields["command"] = .string(name) }
        if let text = request?.payload ?? payload { fields["payload"] = .string(text) }
        publish(topics.reply, JSONValue.object(fields).serialized(), qos: 0, retain: false)
    }

    private func reply(_ request: MQTTRequest, error: String?) { sendReply(request, error: error) }

    private func flushAcks() {
        guard !pendingAcks.isEmpty else { return }
        let seqs = pendingAcks
        pendingAcks.removeAll(keepingCapacity: true)
        outbox.acknowledge(seqs)
        updateStatistics()
    }

    private func updateStatistics() {
        stats.withLock {
            $0.lastSeq = outbox.lastSeq
            $0.pending = outbox.pendingCount
            $0.droppedTotal = outbox.droppedTotal
        }
    }

    private func shutDown() {
        takeInputs()
        flushAcks()
        if isConnected {
            // What waits goes out, and its acknowledgements are waited for, half a second at most.
            let api = handle.api.pointee
            let deadline = monotonicNow() + .milliseconds(500)
            publishEvents()
            let ok = MOSQ_ERR_SUCCESS.rawValue
            while !inFlight.isEmpty || api.mosquitto_want_write(handle.mosq), monotonicNow() < deadline,
                  handle.socket >= 0 {
                let writing = api.mosquitto_want_write(handle.mosq)
                var fd = pollfd(fd: handle.socket, events: Int16(POLLIN) | (writing ? Int16(POLLOUT) : 0), revents: 0)
                _ = poll(&fd, 1, 50)
                let readable = fd.revents & Int16(POLLIN | POLLHUP | POLLERR) != 0
                if readable, api.mosquitto_loop_read(handle.mosq, 1) != ok { break }
                if fd.revents & Int16(POLLOUT) != 0, api.mosquitto_loop_write(handle.mosq, 1) != ok { break }
                flushAcks()
                publishEvents()
            }
        }
        flushAcks()
        if isConnected {
            publish(topics.availability, Array("offline".utf8), qos: 1, retain: true)
            let api = handle.api.pointee
            let deadline = monotonicNow() + .milliseconds(500)
            while api.mosquitto_want_write(handle.mosq), monotonicNow() < deadline, handle.socket >= 0 {
                var fd = pollfd(fd: handle.socket, events: Int16(POLLOUT), revents: 0)
                _ = poll(&fd, 1, 50)
                if api.mosquitto_loop_write(handle.mosq, 1) != MOSQ_ERR_SUCCESS.rawValue { break }
            }
            _ = api.mosquitto_disconnect(handle.mosq)
            _ = api.mosquitto_loop_write(handle.mosq, 1)
        }
        flushAcks()
        outbox.sync()
        stats.withLock { $0.connected = false }
    }

    // MARK: libmosquitto's callbacks (on the client's thread, inside loop_read/loop_write/loop_misc)

    fileprivate func onConnect(_ code: Int32) { connackCode = code }

    fileprivate func onDisconnect(_ code: Int32) {
        if disconnectCode == nil { disconnectCode = code == 0 ? MOSQ_ERR_CONN_LOST.rawValue : code }
    }

    fileprivate func onPublish(_ mid: Int32, _ reason: Int32) {
        guard let seq = inFlight.removeValue(forKey: mid) else { return }
        inFlightSeqs.remove(seq)
        pendingAcks.append(seq)
        if reason >= 0x80 {
            stats.withLock { $0.refusedByBroker += 1 }
            Log.warning("mqtt event refused by the broker", reason: "seq \(seq): "
                        + cText(handle.api.pointee.mosquitto_reason_string(reason)) + " (reason code \(reason))")
        } else {
            stats.withLock { $0.acknowledged += 1 }
        }
    }

    fileprivate func onMessage(topic: [UInt8], payload: [UInt8], retained: Bool) {
        if let status = topics.homeAssistantStatus, topic == Array(status.utf8) {
            // Home Assistant (re)started: its birth message asks for the configs again, at most
            // every 10 s (a retained or repeated `online` must not make a storm).
            if payload == Array("online".utf8) {
                let now = monotonicNow()
                rediscoverAt = max(now, lastDiscovery + .seconds(10)) + .milliseconds(Int64.random(in: 0...2000))
            }
            return
        }
        switch MQTTCommandParser.parse(topic: topic, payload: payload, retained: retained, topics: topics) {
        case .success(let command):
            // A flood (a script, a slider dragged over a slow link) beyond the bound loses the
            // oldest waiting commands, never the newest: said, at most once a second.
            if commands.count >= Self.commandBound {
                stats.withLock { $0.droppedCommands += 1 }
                if let n = commandDropLog.note(at: monotonicNow()) {
                    Log.warning("mqtt commands dropped", reason: "more than \(Self.commandBound) waiting for the show: "
                                + "\(counted(n, "older command")) not carried out nor answered; the newest are kept")
                }
            }
            commands.post(MQTTRequest(command: command, payload: String(decoding: payload, as: UTF8.self)))
        case .failure(let refusal):
            stats.withLock { $0.refusedCommands += 1 }
            if let n = commandLog.note(at: monotonicNow()) {
                Log.warning("mqtt command refused",
                            reason: refusal.description + (n > 1 ? " (\(n) refused since the last line)" : ""))
            }
            // Answered on the reply topic: a refused command of ours, and a message on a topic of
            // the device's command level that names no command (`P/command/BRIGHTNESS`), its
            // name given back when it is short printable ASCII. A foreign topic is not answered.
            let base = Array((topics.prefix + "/command/").utf8)
            let name = topic.starts(with: base) ? Array(topic[base.count...]) : nil
            if refusal.command != nil || name != nil {
                let shown = payload.count <= MQTTCommandParser.maxPayloadBytes
                    && payload.allSatisfy { (0x20...0x7E).contains($0) }
                let asked = refusal.command?.rawValue ?? name.flatMap { n in
                    n.count <= 64 && n.allSatisfy { (0x21...0x7E).contains($0) }
                        ? String(decoding: n, as: UTF8.self) : nil
                }
                sendReply(nil, command: asked,
                          payload: shown ? String(decoding: payload, as: UTF8.self) : nil, error: refusal.reason)
            }
        }
    }

    fileprivate func onLog(level: Int32, message: String) {
        if level & Int32(MOSQ_LOG_ERR | MOSQ_LOG_WARNING) != 0 { libraryMessage = String(message.prefix(300)) }
    }
}

// MARK: - The handle and its connecting thread

/// What a connecting thread reports: libmosquitto's code and the errno after the call.
private struct ConnectResult: Sendable {
    var code: Int32
    var errno: Int32
}

/// The libmosquitto handle, shared by the client's thread and, while it connects, one
/// connecting thread: whoever is last destroys it (``release()``).
private final class Handle: @unchecked Sendable {
    let api: UnsafePointer<kc_mqtt_api>
    let mosq: OpaquePointer
    private nonisolated(unsafe) var properties: OpaquePointer?
    private let host: String
    private let port: Int32
    private let keepAlive: Int32
    private struct Ownership { var connecting = false; var released = false; var destroyed = false }
    private let ownership = Locked(Ownership())

    init(api: UnsafePointer<kc_mqtt_api>, configuration: MQTTConfiguration) throws(MQTTError) {
        self.api = api
        host = configuration.broker.host
        port = Int32(configuration.broker.port)
        keepAlive = Int32(configuration.keepAlive)
        let functions = api.pointee
        guard let mosq = functions.mosquitto_new(configuration.deviceID, true, nil) else {
            throw .library(reason: "mosquitto_new: \(String(cString: strerror(errno)))")
        }
        self.mosq = mosq
        func check(_ code: Int32, _ call: String) throws(MQTTError) {
            guard code == MOSQ_ERR_SUCCESS.rawValue else {
                functions.mosquitto_destroy(mosq)
                throw .library(reason: "\(call): \(cText(functions.mosquitto_strerror(code)))")
            }
        }
        try check(functions.mosquitto_int_option(mosq, MOSQ_OPT_PROTOCOL_VERSION, MQTT_PROTOCOL_V5), "MQTT 5")
        var props: OpaquePointer?
        try check(functions.mosquitto_property_add_int32(&props, Int32(MQTT_PROP_MAXIMUM_PACKET_SIZE.rawValue),
                                                         MQTTClient.maxPacketBytes), "Maximum Packet Size")
        properties = props
        if let user = configuration.broker.user {
            try check(functions.mosquitto_username_pw_set(mosq, user, configuration.password), "user name and password")
        }
        let offline = Array("offline".utf8)
        try check(offline.withUnsafeBytes {
            functions.mosquitto_will_set(mosq, configuration.topics.availability, Int32($0.count), $0.baseAddress,
                                         1, true)
        }, "last will")
        try check(functions.mosquitto_max_inflight_messages_set(mosq, UInt32(MQTTClient.eventWindow * 2)),
                  "in-flight limit")
        if configuration.broker.tls {
            // Verified by default: the system's CAs (and --ca-file's), the host name checked
            // against the certificate (libmosquitto does so unless told it is insecure).
            try check(functions.mosquitto_int_option(mosq, MOSQ_OPT_TLS_USE_OS_CERTS, 1),
                      "the system's CA certificates")
            if configuration.caFile != nil || configuration.clientCertificate != nil {
                let capath = configuration.caFile == nil ? "/etc/ssl/certs" : nil
                // No passphrase prompt: OpenSSL would read one from the terminal.
                typealias PassphraseCallback = @convention(c) (UnsafeMutablePointer<CChar>?, Int32, Int32,
                                                               UnsafeMutableRawPointer?) -> Int32
                let noPassphrase: PassphraseCallback = { _, _, _, _ in 0 }
                let code = functions.mosquitto_tls_set(mosq, configuration.caFile, capath,
                                                       configuration.clientCertificate, configuration.clientKey,
                                                       noPassphrase)
                if code != MOSQ_ERR_SUCCESS.rawValue {
                    functions.mosquitto_destroy(mosq)
                    throw .library(reason: "TLS files (--ca-file \(configuration.caFile ?? "none"),"
                                   + " --mqtt-cert \(configuration.clientCertificate ?? "none"),"
                                   + " --mqtt-key \(configuration.clientKey ?? "none")):"
                                   + " \(cText(functions.mosquitto_strerror(code))); each must be a readable file")
                }
            }
        }
    }

    func setCallbacks(_ client: UnsafeMutableRawPointer) {
        let f = api.pointee
        f.mosquitto_user_data_set(mosq, client)
        f.mosquitto_connect_v5_callback_set(mosq) { _, user, code, _, _ in
            Unmanaged<MQTTClient>.fromOpaque(user!).takeUnretainedValue().onConnect(code)
        }
        f.mosquitto_disconnect_v5_callback_set(mosq) { _, user, code, _ in
            Unmanaged<MQTTClient>.fromOpaque(user!).takeUnretainedValue().onDisconnect(code)
        }
        f.mosquitto_publish_v5_callback_set(mosq) { _, user, mid, reason, _ in
            Unmanaged<MQTTClient>.fromOpaque(user!).takeUnretainedValue().onPublish(mid, reason)
        }
        f.mosquitto_message_v5_callback_set(mosq) { _, user, message, _ in
            guard let message = message?.pointee, let topic = message.topic else { return }
            let payload = message.payload.map {
                Array(UnsafeRawBufferPointer(start: $0, count: Int(max(0, message.payloadlen))))
            } ?? []
            Unmanaged<MQTTClient>.fromOpaque(user!).takeUnretainedValue()
                .onMessage(topic: Array(UnsafeRawBufferPointer(start: topic, count: strlen(topic))), payload: payload,
                           retained: message.retain)
        }
        f.mosquitto_log_callback_set(mosq) { _, user, level, text in
            guard let text else { return }
            Unmanaged<MQTTClient>.fromOpaque(user!).takeUnretainedValue()
                .onLog(level: level, message: String(cString: text))
        }
    }

    var socket: Int32 { api.pointee.mosquitto_socket(mosq) }
    var wantsWrite: Bool { api.pointee.mosquitto_want_write(mosq) }

    func setProtocol(_ version: Int32) {
        _ = api.pointee.mosquitto_int_option(mosq, MOSQ_OPT_PROTOCOL_VERSION, version)
    }

    /// Connects (or reconnects) on a new detached thread, which posts the result; the client's
    /// thread does not touch the handle meanwhile.
    func connectInBackground(protocolVersion: Int32, results: Mailbox<ConnectResult>) throws(SystemError) {
        ownership.withLock { $0.connecting = true }
        let useProperties = protocolVersion == MQTT_PROTOCOL_V5
        let body: @Sendable () -> Void = { [self] in
            let code = api.pointee.mosquitto_connect_bind_v5(mosq, host, port, keepAlive, nil,
                                                             useProperties ? properties : nil)
            let error = errno
            let orphaned = ownership.withLock { o -> Bool in
                o.connecting = false
                return o.released
            }
            if orphaned { destroy() } else { results.post(ConnectResult(code: code, errno: error)) }
        }
        try startDetachedThread(name: "mqtt connect", body)
    }

    /// The client is done with the handle: destroyed now, or by the connecting thread when it
    /// returns.
    func release() {
        let now = ownership.withLock { o -> Bool in
            guard !o.released else { return false }
            o.released = true
            return !o.connecting
        }
        if now { destroy() }
    }

    private func destroy() {
        let first = ownership.withLock { o -> Bool in defer { o.destroyed = true }; return !o.destroyed }
        guard first else { return }
        api.pointee.mosquitto_destroy(mosq)
        api.pointee.mosquitto_property_free_all(&properties)
    }
}

/// Runs `body` on a new detached thread. Throws ``SystemError`` (`pthread_create NAME`).
private func startDetachedThread(name: String, _ body: @escaping @Sendable () -> Void) throws(SystemError) {
    final class Box {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }
    var attributes = pthread_attr_t()
    pthread_attr_init(&attributes)
    defer { pthread_attr_destroy(&attributes) }
    pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
    var thread = pthread_t()
    let context = Unmanaged.passRetained(Box(body)).toOpaque()
    let rc = pthread_create(&thread, &attributes, { raw in
        Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue().body()
        return nil
    }, context)
    if rc != 0 {
        Unmanaged<Box>.fromOpaque(context).release()
        throw SystemError(operation: "pthread_create", path: name, errno: rc)
    }
}

/// A C string from libmosquitto (static), "" for NULL, without a final full stop (its messages
/// are sentences; ours go on after them).
func cText(_ pointer: UnsafePointer<CChar>?) -> String {
    var text = pointer.map { String(cString: $0) } ?? ""
    if text.hasSuffix(".") { text.removeLast() }
    return text
}

/// `CLOCK_MONOTONIC` now.
func monotonicNow() -> Duration {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return .seconds(Int64(ts.tv_sec)) + .nanoseconds(Int64(ts.tv_nsec))
}

/// `1.5 s`, `12 s`.
func formatSeconds(_ d: Duration) -> String {
    let ms = d.wholeMilliseconds
    return ms % 1000 == 0 || ms >= 10_000 ? "\(ms / 1000) s" : "\(Double(ms / 100) / 10) s"
}

