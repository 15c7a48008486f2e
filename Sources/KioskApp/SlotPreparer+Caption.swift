// SPDX-License-Identifier: Apache-2.0
import FoundationEssentials
import Glibc
import KioskCore
import KioskImaging
import KioskSystem
import KioskText

/// Where a slot's caption comes from (`--caption`, docs/text.md "Captions").
public enum CaptionSource: String, CaseIterable, Sendable {
    /// The item's `caption` (manifest, playlist); none without one.
    case item
    /// The item's `caption`, else the image's own description (EXIF ImageDescription, XP
    /// comment, IPTC caption: ``ImageDescription``).
    case exif
    /// The item's `caption`, else when the photo was taken (``CaptureCaption``).
    case date
    /// The item's `caption`, else its file name without the extension (``title(of:)``):
    /// `/photos/Lake Bled.jpg` is captioned "Lake Bled".
    case name
    /// No captions at all.
    case off

    /// The `--caption name` words of `source` (a path or an http(s) URL): its last path
    /// component, percent-decoded for a URL (its query and fragment left out), without the
    /// extension after its last dot (a name starting with its only dot, `.hidden`, kept whole);
    /// nil when there is no name (`https://cdn.example/`).
    public static func title(of source: String) -> String? {
        var last = source.split(separator: "/", omittingEmptySubsequences: true).last.map(String.init) ?? source
        if source.hasPrefix("http://") || source.hasPrefix("https://"), let url = URL(string: source) {
            last = url.lastPathComponent
        }
        if let dot = last.lastIndex(of: "."), dot != last.startIndex { last = String(last[..<dot]) }
        return last.isEmpty || last == "/" ? nil : last
    }
}

/// The `--caption date` words: when a photo was taken, through a strftime(3) format
/// (`--caption-format`) in which `{ago}` stands for "N years ago" (docs/text.md "Captions").
/// The time is EXIF DateTimeOriginal as the camera's clock read it (the wall time where the
/// photo was taken, whatever zone the show is in), else the file's modification time in the
/// show's zone (`TZ`, else /etc/localtime: localtime_r(3)).
public enum CaptureCaption {
    /// "2 December 2016" (month names in the C locale: the program sets no locale).
    public static let defaultFormat = "%-d %B %Y"

    /// When a photo was taken.
    public enum Taken: Sendable {
        /// EXIF DateTimeOriginal.
        case exif(EXIFDateTime)
        /// A file's modification time, seconds since the epoch.
        case fileTime(Int64)
    }

    /// `{ago}` for a photo taken on `taken` seen on `today`: "this year", "1 year ago",
    /// "N years ago" (whole calendar years, ``CaptureTime/yearsAgo(today:)``).
    public static func ago(takenOn taken: LocalDate, today: LocalDate) -> String {
        let years = CaptureTime(epochSecond: 0, localDate: taken).yearsAgo(today: today)
        switch years {
        case 0: return "this year"
        case 1: return "1 year ago"
        default: return "\(years) years ago"
        }
    }

    /// `format` applied to `taken`, `{ago}` counted to `today`; at most 255 bytes ("" when the
    /// text would be longer, or the time cannot be broken down).
    public static func format(_ format: String, taken: Taken, today: LocalDate) -> String {
        var parts = tm()
        switch taken {
        case .exif(let t):
            let d = t.date
            parts.tm_year = Int32(d.year - 1900)
            parts.tm_mon = Int32(d.month - 1)
            parts.tm_mday = Int32(d.day)
            parts.tm_hour = Int32(t.secondOfDay / 3600)
            parts.tm_min = Int32(t.secondOfDay / 60 % 60)
            parts.tm_sec = Int32(t.secondOfDay % 60)
            parts.tm_wday = Int32((d.weekday + 1) % 7)  // tm: 0 = Sunday
            parts.tm_yday = Int32(d.daysSinceEpoch - LocalDate(year: d.year, month: 1, day: 1).daysSinceEpoch)
            parts.tm_isdst = -1
            parts.tm_gmtoff = t.utcOffsetSeconds ?? 0
        case .fileTime(let seconds):
            var t = time_t(seconds)
            guard localtime_r(&t, &parts) != nil else { return "" }
        }
        let takenOn = LocalDate(year: Int(parts.tm_year) + 1900, month: Int(parts.tm_mon) + 1, day: Int(parts.tm_mday))
        // `{ago}` becomes words before strftime sees the format (a `%` in them doubled).
        let expanded = format.replacing("{ago}", with: ago(takenOn: takenOn, today: today).replacing("%", with: "%%"))
        var out = [CChar](repeating: 0, count: 256)
        let n = strftime(&out, out.count, expanded, &parts)
        return String(decoding: out[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The caption of the photo at `path`, `today` being the show's date; nil when the file
    /// cannot be looked at (a URL's download is its disk-cache file: its own metadata counts,
    /// its file time does not).
    static func caption(path: String, format: String, today: LocalDate, fileTimeCounts: Bool) -> String? {
        if let exif = ImageDescription.metadata(path: path).dateTimeOriginal {
            return Self.format(format, taken: .exif(exif), today: today).nonEmpty
        }
        guard fileTimeCounts, let info = try? fileStatus(path) else { return nil }
        return Self.format(format, taken: .fileTime(Int64(info.st_mtim.tv_sec)), today: today).nonEmpty
    }
}

extension String {
    fileprivate var nonEmpty: String? { isEmpty ? nil : self }
}

extension SlotPreparer {
    /// The caption of `job` under ``captionSource``: its own, or the file's description or date.
    func caption(for job: Job) -> String? {
        switch captionSource {
        case .off: return nil
        case .item: return job.caption
        case .exif: return job.caption ?? ImageDescription.read(path: job.path)
        case .name: return job.caption ?? CaptionSource.title(of: job.source)
        case .date:
            if let own = job.caption { return own }
            var now = time_t(time(nil)), parts = tm()
            guard localtime_r(&now, &parts) != nil else { return nil }
            let today = LocalDate(year: Int(parts.tm_year) + 1900, month: Int(parts.tm_mon) + 1,
                                  day: Int(parts.tm_mday))
            return CaptureCaption.caption(path: job.path, format: captionFormat, today: today,
                                          fileTimeCounts: job.path == job.source)
        }
    }

    /// Draws the caption of `job` into its freshly prepared `frame` (on the decode worker); the
    /// first one makes the painter (``makeCaptions``).
    func drawCaption(_ job: Job, into frame: Bitmap) { drawCaption(text: caption(for: job), into: frame) }

    /// Draws `text` into `frame` (on the decode worker): ``drawCaption(_:into:)`` once the
    /// caption is known (an animation's frames, which share their first frame's caption).
    func drawCaption(text: String?, into frame: Bitmap) {
        guard let text else { return }
        if captions == nil, let make = makeCaptions {
            makeCaptions = nil
            captions = make()
        }
        captions?.draw(text, into: frame)
    }
}
