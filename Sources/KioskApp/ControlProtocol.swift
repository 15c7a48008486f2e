// SPDX-License-Identifier: Apache-2.0
import KioskSystem

// The control socket's protocol (docs/control-socket.md): JSON lines in the manner of mpv's
// IPC, without the socket. The socket and its thread are in ControlServer.swift.
//
//   → {"command":["goto",2],"request_id":7}
//   ← {"data":null,"error":"success","request_id":7}
//   ← {"event":"shown","index":2,"src":"/photos/c.jpg","t":61234}

/// What a client can ask for.
public enum ControlCommand: Equatable, Sendable {
    case next, previous, pause, resume, status
    /// `["goto", INDEX]`: the index in the playlist as given (as in `shown` events).
    case goto(Int)
    /// `["display", "on"|"off"]`.
    case display(on: Bool)
    /// `["screenshot", PATH]`: a PNG of the screen to PATH (docs/control-socket.md).
    case screenshot(path: String)
    /// `["brightness", PCT]` (1 ... 100, until the next change of `--brightness`'s tiers) or
    /// `["brightness", "auto"]` (nil: back to the tiers) (docs/power.md).
    case brightness(percent: Int?)
    /// `["presence_timeout", SECONDS]`: the motion sensor's timeout (0 ... 86400; 0: presence off).
    case presenceTimeout(seconds: Int)
}

/// The wire format: parsing request lines, writing reply lines.
public enum ControlProtocol {
    /// The command names, for the "unknown command" error.
    public static let commandNames = ["next", "previous", "pause", "resume", "goto", "status", "display",
                                      "screenshot", "brightness", "presence_timeout"]

    /// Parses one request line (without its newline). On failure, the error message and the
    /// request's `request_id` when it could be read.
    public static func parse(_ line: [UInt8]) -> Result<(id: JSONValue?, command: ControlCommand), ControlFailure> {
        let value: JSONValue
        do {
            value = try JSONValue.parse(line)
        } catch {
            return .failure(ControlFailure(id: nil, message: "invalid JSON: \(error.reason)"))
        }
        guard case .object(let fields) = value else {
            return .failure(ControlFailure(
                id: nil, message: "invalid request: expected a JSON object such as {\"command\":[\"status\"]}"))
        }
        let id = fields["request_id"]
        func fail(_ message: String) -> Result<(id: JSONValue?, command: ControlCommand), ControlFailure> {
            .failure(ControlFailure(id: id, message: message))
        }
        guard let command = fields["command"] else {
            return fail("invalid request: no \"command\" (expected {\"command\":[NAME, ARGUMENTS...]})")
        }
        guard case .array(let words) = command, let first = words.first else {
            return fail("invalid request: \"command\" must be an array [NAME, ARGUMENTS...], got \(command.text)")
        }
        guard case .string(let name) = first else {
            return fail("invalid request: the command name must be a string, got \(first.text)")
        }
        let arguments = Array(words.dropFirst())
        func noArguments(_ c: ControlCommand) -> Result<(id: JSONValue?, command: ControlCommand), ControlFailure> {
            arguments.isEmpty ? .success((id, c)) : fail("\(name): takes no arguments, got \(arguments.count)")
        }
        switch name {
        case "next": return noArguments(.next)
        case "previous": return noArguments(.previous)
        case "pause": return noArguments(.pause)
        case "resume": return noArguments(.resume)
        case "status": return noArguments(.status)
        case "goto":
            guard arguments.count == 1 else {
                return fail("goto: expected one argument, the INDEX (a whole number), got \(arguments.count)")
            }
            guard case .int(let index) = arguments[0], let i = Int(exactly: index) else {
                return fail("goto: bad index \(arguments[0].text): expected a whole number")
            }
            return .success((id, .goto(i)))
        case "display":
            guard arguments.count == 1, case .string(let state) = arguments[0], state == "on" || state == "off" else {
                return fail("display: expected \"on\" or \"off\", got "
                            + "\(arguments.isEmpty ? "nothing" : arguments.map(\.text).joined(separator: ", "))")
            }
            return .success((id, .display(on: state == "on")))
        case "screenshot":
            guard arguments.count == 1, case .string(let path) = arguments[0], !path.isEmpty else {
                return fail("screenshot: expected one argument, the PATH of the PNG file to write (a string), got "
                            + "\(arguments.isEmpty ? "nothing" : arguments.map(\.text).joined(separator: ", "))")
            }
            return .success((id, .screenshot(path: path)))
        case "brightness":
            if arguments.count == 1, case .string("auto") = arguments[0] {
                return .success((id, .brightness(percent: nil)))
            }
            guard arguments.count == 1, case .int(let p) = arguments[0], (1...100).contains(p) else {
                let got = arguments.isEmpty ? "nothing" : arguments.map(\.text).joined(separator: ", ")
                return fail("brightness: expected a whole percentage 1 ... 100 or \"auto\", got \(got)")
            }
            return .success((id, .brightness(percent: Int(p))))
        case "presence_timeout":
            guard arguments.count == 1, case .int(let s) = arguments[0], (0...86_400).contains(s) else {
                let got = arguments.isEmpty ? "nothing" : arguments.map(\.text).joined(separator: ", ")
                return fail("presence_timeout: expected whole seconds 0 ... 86400 (0: presence off), got \(got)")
            }
            return .success((id, .presenceTimeout(seconds: Int(s))))
        default:
            return fail("unknown command \(first.text) (commands: \(commandNames.joined(separator: ", ")))")
        }
    }

    /// A reply line with its newline: `{"data":…,"error":"success","request_id":…}`; `data` and
    /// `request_id` are left out when nil (`request_id` only when the request had one).
    public static func reply(id: JSONValue?, error: String, data: JSONValue? = nil) -> [UInt8] {
        var fields: [String: JSONValue] = ["error": .string(error)]
        if let id { fields["request_id"] = id }
        if let data { fields["data"] = data }
        return JSONValue.object(fields).serialized() + [UInt8(ascii: "\n")]
    }
}

/// A request that could not be carried out: the message goes back as the reply's `error`.
public struct ControlFailure: Error, Equatable, Sendable {
    public var id: JSONValue?
    public var message: String
    public init(id: JSONValue?, message: String) { self.id = id; self.message = message }
}

/// A parsed request on its way to the frame loop.
public struct ControlRequest: Sendable {
    /// Which connection it came from (its reply goes back there).
    public let client: Int
    public let id: JSONValue?
    /// The command, or why the line was refused: a refusal behind requests still waiting for
    /// the loop goes through the loop too, so that a client gets its replies in order.
    public let parsed: Result<ControlCommand, ControlFailure>
}


/// Splits what a client sends into request lines (pure: no socket). A line ends at `\n`; a
/// `\r` before it is dropped; blank lines (spaces, tabs) are skipped; a line longer than
/// ``maxLineBytes`` is reported once as ``Line/tooLong`` and discarded up to its newline; at the
/// end of input a last line without a newline is taken as it is (`printf '…' | socat`).
public struct ControlLineReader: Sendable {
    /// What ``next(endOfInput:)`` hands out.
    public enum Line: Equatable, Sendable {
        /// One request line, without its line ending.
        case request([UInt8])
        /// A line over ``maxLineBytes``, discarded.
        case tooLong
    }

    /// Longest request line, bytes.
    public let maxLineBytes: Int
    private var buffer: [UInt8] = []
    private var start = 0
    /// Skipping the rest of an over-long line, up to its newline.
    private var discarding = false

    public init(maxLineBytes: Int) { self.maxLineBytes = maxLineBytes }

    /// Bytes received and not yet handed out as lines.
    public var bufferedBytes: Int { buffer.count - start }

    /// Adds bytes as received.
    public mutating func append<Bytes: Sequence>(_ bytes: Bytes) where Bytes.Element == UInt8 {
        if start > 0 { buffer.removeFirst(start); start = 0 }
        buffer += bytes
    }

    /// The next line, or nil until more bytes come. `endOfInput`: the client sends nothing more.
    public mutating func next(endOfInput: Bool) -> Line? {
        while true {
            guard let newline = buffer[start...].firstIndex(of: UInt8(ascii: "\n")) else {
                if bufferedBytes > maxLineBytes {
                    let reported = discarding
                    discarding = true
                    buffer.removeAll()
                    start = 0
                    if !reported { return .tooLong }
                } else if endOfInput, bufferedBytes > 0, !discarding {
                    buffer.append(UInt8(ascii: "\n"))
                    continue
                }
                return nil
            }
            var line = Array(buffer[start..<newline])
            start = newline + 1
            if discarding {
                discarding = false
                continue
            }
            if line.last == UInt8(ascii: "\r") { line.removeLast() }
            if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { continue }
            if line.count > maxLineBytes { return .tooLong }
            return .request(line)
        }
    }
}
