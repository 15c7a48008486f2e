// SPDX-License-Identifier: Apache-2.0
/// One HDMI-CEC message as it goes on the bus (HDMI 1.4b Supplement 1 "Consumer Electronics
/// Control", CEC 6 and 13): a header byte (initiator's logical address in the high nibble, the
/// destination's in the low one; 15 is broadcast), the opcode, then its operands. The opcodes
/// are <linux/cec.h>'s `CEC_MSG_*`. The few the kiosk sends, as a playback device:
///
/// - **Image View On** (0x04) to the TV: it comes out of standby and shows an input;
/// - **Active Source** (0x82), broadcast, with our physical address: the input to show is ours;
/// - **Standby** (0x36) to the TV: it switches itself off.
public struct CECMessage: Equatable, Sendable, CustomStringConvertible {
    /// The TV's logical address (CEC 10.2).
    public static let tv: UInt8 = 0
    /// The broadcast "address" (15).
    public static let broadcast: UInt8 = 15
    /// `CEC_MSG_IMAGE_VIEW_ON`.
    public static let imageViewOnOpcode: UInt8 = 0x04
    /// `CEC_MSG_ACTIVE_SOURCE`.
    public static let activeSourceOpcode: UInt8 = 0x82
    /// `CEC_MSG_STANDBY`.
    public static let standbyOpcode: UInt8 = 0x36

    /// The bytes on the bus: header, opcode, operands (2 ... 16 bytes).
    public let bytes: [UInt8]

    public init(bytes: [UInt8]) { self.bytes = bytes }

    /// Image View On from `initiator` to the TV.
    public static func imageViewOn(from initiator: UInt8) -> CECMessage {
        CECMessage(bytes: [header(initiator, tv), imageViewOnOpcode])
    }

    /// Active Source from `initiator`, broadcast, naming `physicalAddress` (two bytes, high first).
    public static func activeSource(from initiator: UInt8, physicalAddress: UInt16) -> CECMessage {
        CECMessage(bytes: [header(initiator, broadcast), activeSourceOpcode,
                           UInt8(physicalAddress >> 8), UInt8(physicalAddress & 0xFF)])
    }

    /// Standby from `initiator` to `destination` (the TV unless told).
    public static func standby(from initiator: UInt8, to destination: UInt8 = tv) -> CECMessage {
        CECMessage(bytes: [header(initiator, destination), standbyOpcode])
    }

    /// The initiator's logical address.
    public var initiator: UInt8 { bytes[0] >> 4 }
    /// The destination's logical address (15: everyone).
    public var destination: UInt8 { bytes[0] & 0x0F }
    /// The opcode, nil for a poll (a header alone).
    public var opcode: UInt8? { bytes.count > 1 ? bytes[1] : nil }

    /// `Image View On (0x04) 4 -> 0`.
    public var description: String {
        let name: String
        switch opcode {
        case Self.imageViewOnOpcode: name = "Image View On"
        case Self.activeSourceOpcode: name = "Active Source"
        case Self.standbyOpcode: name = "Standby"
        case nil: name = "Poll"
        default: name = "Message"
        }
        let code = opcode.map { " (0x" + hex($0) + ")" } ?? ""
        let operands = bytes.count > 2 ? " " + bytes[2...].map(hex).joined(separator: ":") : ""
        return
            "\(name)\(code)\(operands) \(initiator) -> \(destination == Self.broadcast ? "all" : String(destination))"
    }

    /// `1.0.0.0` for 0x1000 (CEC 8.7: four nibbles); `f.f.f.f` is none.
    public static func physicalAddressText(_ address: UInt16) -> String {
        [12, 8, 4, 0].map { String((address >> UInt16($0)) & 0xF, radix: 16) }.joined(separator: ".")
    }

    private static func header(_ initiator: UInt8, _ destination: UInt8) -> UInt8 {
        (initiator & 0x0F) << 4 | (destination & 0x0F)
    }
}

private func hex(_ b: UInt8) -> String { (b < 16 ? "0" : "") + String(b, radix: 16) }
