// SPDX-License-Identifier: Apache-2.0
import KioskCore

/// What ``ImageDescription/metadata(_:)`` finds in a photo's metadata.
public struct PhotoMetadata: Equatable, Sendable {
    /// The description (``ImageDescription``), trimmed; nil: none.
    public var description: String?
    /// When it was taken (EXIF DateTimeOriginal); nil: no such tag, or not a valid time.
    public var dateTimeOriginal: EXIFDateTime?

    public init(description: String? = nil, dateTimeOriginal: EXIFDateTime? = nil) {
        self.description = description
        self.dateTimeOriginal = dateTimeOriginal
    }
}

/// When a photo was taken, as its camera wrote it: EXIF tag 0x9003 DateTimeOriginal (ASCII
/// `YYYY:MM:DD HH:MM:SS`, the camera's wall clock; EXIF 2.32 section 4.6.5) in the Exif IFD
/// (IFD0's tag 0x8769, Exif IFD Pointer), with tag 0x9011 OffsetTimeOriginal (ASCII `+HH:MM`
/// or `-HH:MM`, EXIF 2.31 and later) when present.
public struct EXIFDateTime: Hashable, Sendable {
    /// The calendar day on the camera's clock.
    public var date: LocalDate
    /// Seconds since midnight on the camera's clock (0 ... 86_399; a leap second reads 59).
    public var secondOfDay: Int
    /// Seconds east of UTC of the camera's clock (OffsetTimeOriginal); nil: not recorded.
    public var utcOffsetSeconds: Int?

    public init(date: LocalDate, secondOfDay: Int, utcOffsetSeconds: Int? = nil) {
        self.date = date
        self.secondOfDay = secondOfDay
        self.utcOffsetSeconds = utcOffsetSeconds
    }

    /// The instant taken, seconds since the Unix epoch: with the recorded offset, else reading
    /// the camera's wall time in `zone`.
    public func epochSecond(zone: any TimeZoneRules) -> Int64 {
        if let offset = utcOffsetSeconds { return date.daysSinceEpoch * 86_400 + Int64(secondOfDay - offset) }
        return zone.instant(of: date, minute: secondOfDay / 60) + Int64(secondOfDay % 60)
    }

    /// DateTimeOriginal and OffsetTimeOriginal of a TIFF structure's Exif IFD; nil without a
    /// valid DateTimeOriginal (blank, all zeros, a month 13, ...). A malformed offset is ignored.
    init?(original structure: TIFFStructure) {
        guard let pointer = structure.entry(0x8769, inIFDAt: structure.ifd0),
              let exifIFD = structure.integer(of: pointer),
              let tag = structure.entry(0x9003, inIFDAt: exifIFD),
              let raw = structure.bytes(of: tag),
              let parsed = Self.parse(dateTime: raw) else { return nil }
        self = parsed
        if let offsetTag = structure.entry(0x9011, inIFDAt: exifIFD), let text = structure.bytes(of: offsetTag) {
            utcOffsetSeconds = Self.parse(offset: text)
        }
    }

    /// `YYYY:MM:DD HH:MM:SS` (the first 19 bytes; a NUL or anything may follow). Nil for
    /// anything else, or a date or time that does not exist.
    static func parse(dateTime b: [UInt8]) -> EXIFDateTime? {
        guard b.count >= 19 else { return nil }
        func number(_ range: Range<Int>) -> Int? {
            var v = 0
            for i in range {
                guard b[i] >= 0x30, b[i] <= 0x39 else { return nil }
                v = v * 10 + Int(b[i] - 0x30)
            }
            return v
        }
        guard b[4] == 0x3A, b[7] == 0x3A, b[10] == 0x20 || b[10] == 0x54, b[13] == 0x3A, b[16] == 0x3A,
              let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
              let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
              year >= 1, (1...12).contains(month), day >= 1, day <= LocalDate.daysIn(month: month, year: year),
              hour < 24, minute < 60, second <= 60 else { return nil }
        return EXIFDateTime(date: LocalDate(year: year, month: month, day: day),
                            secondOfDay: hour * 3600 + minute * 60 + min(second, 59))
    }

    /// `+HH:MM` / `-HH:MM` as seconds east of UTC; nil for anything else or beyond ±14:00.
    static func parse(offset b: [UInt8]) -> Int? {
        guard b.count >= 6, b[0] == 0x2B || b[0] == 0x2D, b[3] == 0x3A else { return nil }
        let digits = [b[1], b[2], b[4], b[5]]
        guard digits.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        let d = digits.map { Int($0 - 0x30) }
        let hours = d[0] * 10 + d[1], minutes = d[2] * 10 + d[3]
        guard minutes < 60, hours * 60 + minutes <= 14 * 60 else { return nil }
        return (b[0] == 0x2D ? -1 : 1) * (hours * 3600 + minutes * 60)
    }
}
