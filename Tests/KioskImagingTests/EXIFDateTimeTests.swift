// SPDX-License-Identifier: Apache-2.0
import Foundation
import KioskCore
import KioskImaging
import Testing

// EXIF DateTimeOriginal and OffsetTimeOriginal read from JPEGs whose EXIF exiftool wrote
// (Tests/Fixtures/exif-dates, README.md there), both byte orders.

@Suite struct EXIFDateTimeTests {
    func taken(_ name: String) -> EXIFDateTime? {
        ImageDescription.metadata(path: Fixtures.path("exif-dates", name)).dateTimeOriginal
    }

    @Test func dateTimeOriginalWithItsOffsetLittleEndian() throws {
        let t = try #require(taken("taken-offset.jpg"))
        #expect(t.date == LocalDate(year: 2016, month: 12, day: 2))
        #expect(t.secondOfDay == 14 * 3600 + 30 * 60 + 5)
        #expect(t.utcOffsetSeconds == 3600)
        // 2016-12-02T14:30:05+01:00 is 13:30:05 UTC, whatever zone the show is in.
        let utc = LocalDate(year: 2016, month: 12, day: 2).daysSinceEpoch * 86_400 + 13 * 3600 + 30 * 60 + 5
        #expect(t.epochSecond(zone: FixedOffsetZone(seconds: -8 * 3600)) == utc)
    }

    @Test func dateTimeOriginalBigEndianWithANegativeOffset() throws {
        let t = try #require(taken("taken-bigendian.jpg"))
        #expect(t.date == LocalDate(year: 2001, month: 2, day: 28) && t.secondOfDay == 86_399)
        #expect(t.utcOffsetSeconds == -5 * 3600)
        // The orientation of the same file is read by the same TIFF reader.
        let meta = ImageDescription.metadata(path: Fixtures.path("exif-dates", "taken-bigendian.jpg"))
        #expect(meta.description == nil)
    }

    @Test func withoutAnOffsetTheCamerasWallTimeIsReadInTheShowsZone() throws {
        let t = try #require(taken("taken-local.jpg"))
        #expect(t.utcOffsetSeconds == nil)
        let local = LocalDate(year: 2019, month: 7, day: 14).daysSinceEpoch * 86_400 + 9 * 3600 + 5 * 60
        #expect(t.epochSecond(zone: FixedOffsetZone(seconds: 7200)) == local - 7200)
        #expect(ImageDescription.read(path: Fixtures.path("exif-dates", "taken-local.jpg")) == "Lake")
    }

    @Test func aPhotoWithoutDateTimeOriginalHasNone() {
        #expect(taken("no-date.jpg") == nil)
        #expect(ImageDescription.read(path: Fixtures.path("exif-dates", "no-date.jpg")) == "No date here")
        #expect(ImageDescription.metadata(path: "/nonexistent/x.jpg") == PhotoMetadata())
    }

    /// Impossible or blank times (cameras write `0000:00:00 00:00:00` or spaces when unset) are
    /// no time; a cut or garbled segment is nothing, never a crash.
    @Test func blankAndImpossibleTimesAreNone() throws {
        let path = Fixtures.path("exif-dates", "taken-offset.jpg")
        let bytes = try #require(try? readAll(path))
        let original = Array("2016:12:02 14:30:05".utf8)
        let at = try #require(bytes.indices.first { bytes[$0...].starts(with: original) })
        for bad in ["0000:00:00 00:00:00", "    :  :     :  :  ", "2016:02:30 14:30:05", "2016:13:02 14:30:05",
                    "2016:12:02 24:30:05", "2016-12-02 14:30:05"] {
            var b = bytes
            b.replaceSubrange(at..<(at + 19), with: Array(bad.utf8))
            #expect(ImageDescription.metadata(b).dateTimeOriginal == nil, "\(bad)")
        }
        for cut in stride(from: 0, to: at + 19, by: 7) {
            _ = ImageDescription.metadata(Array(bytes[0..<cut]))
        }
        #expect(ImageDescription.metadata(Array(bytes[0..<(at + 10)])).dateTimeOriginal == nil)
    }
}

private func readAll(_ path: String) throws -> [UInt8] { [UInt8](try Data(contentsOf: URL(fileURLWithPath: path))) }
