// SPDX-License-Identifier: Apache-2.0
import KioskCore
import KioskSystem

/// An item's `schedule` and `fallback` in a manifest or a local playlist (docs/schedules.md):
///
/// ```json
/// {"src": "lunch.jpg", "schedule": {"from": "2026-12-01", "until": "2026-12-24T18:00:00+01:00",
///                                   "days": ["mon", "tue"], "times": ["11:00-15:00"]}},
/// {"src": "logo.png", "fallback": true}
/// ```
enum ManifestSchedule {
    /// The most entries of `days` or `times` in one schedule (64).
    static let maxEntries = 64

    /// Reads `schedule` (an object with `from`, `until`, `days`, `times`, each optional; other
    /// keys are refused, so a misspelt one does not quietly show the item all the time).
    /// - Parameter fail: makes the error for a place under `path` (`items[3].schedule.times[0]`).
    /// - Throws: what `fail` makes, for a wrong type, a bad date or window, an empty `days`, or
    ///   an `until` not after `from`.
    static func read(_ value: JSONValue?, path: String,
                     fail: (String, String) -> ContentError) throws(ContentError) -> ItemSchedule? {
        guard let value else { return nil }
        // `null` is refused like any other non-object (docs/schedules.md): a generator that
        // writes it for "no schedule" may as well mean a schedule it failed to write, and an
        // item must not be shown all the time by mistake. Leave `schedule` out instead.
        guard case .object(let fields) = value else {
            throw fail(path, "expected an object, found \(value.typeName) "
                       + "(leave schedule out for an item always in the rotation)")
        }
        for key in fields.keys.sorted() where !["from", "until", "days", "times"].contains(key) {
            throw fail(path + "." + key, "unknown schedule field (from, until, days, times)")
        }
        var schedule = ItemSchedule()
        func text(_ v: JSONValue, _ p: String) throws(ContentError) -> String {
            guard case .string(let s) = v else { throw fail(p, "expected a string, found \(v.typeName)") }
            return s
        }
        func list(_ key: String) throws(ContentError) -> [(String, String)]? {
            guard let v = fields[key] else { return nil }
            guard case .array(let entries) = v else {
                throw fail(path + "." + key, "expected an array, found \(v.typeName)")
            }
            guard !entries.isEmpty else {
                throw fail(path + "." + key, "empty (leave it out to mean every day, all day)")
            }
            // A day has 7 names and no one needs more than a few dozen windows a day; each
            // window is looked at on every look at the schedules.
            guard entries.count <= Self.maxEntries else {
                throw fail(path + "." + key, "\(entries.count) entries, more than the \(Self.maxEntries) allowed")
            }
            var out: [(String, String)] = []
            for (i, e) in entries.enumerated() { let p = "\(path).\(key)[\(i)]"; out.append((try text(e, p), p)) }
            return out
        }
        for key in ["from", "until"] {
            guard let v = fields[key] else { continue }
            let raw = try text(v, path + "." + key)
            let bound: ItemSchedule.Bound
            do { bound = try ItemSchedule.parseBound(raw) } catch { throw fail(path + "." + key, error.description) }
            if key == "from" { schedule.from = bound } else { schedule.until = bound }
        }
        // A day or window given twice is a mistake in the list (a copied line, `mon` for `sun`):
        // refused, naming both places, rather than read as once.
        if let days = try list("days") {
            var first: [Int: Int] = [:]
            for (i, (d, p)) in days.enumerated() {
                let day: Int
                do { day = try ItemSchedule.parseDay(d) } catch { throw fail(p, error.description) }
                if let earlier = first[day] {
                    throw fail(p, "\"\(d)\" is the same day as \(path).days[\(earlier)] \"\(days[earlier].0)\""
                               + " (each day once)")
                }
                first[day] = i
            }
            schedule.days = Set(first.keys)
        }
        for (w, p) in try list("times") ?? [] {
            let window: DisplaySchedule.Range
            do { window = try ItemSchedule.parseWindow(w) } catch { throw fail(p, error.description) }
            if let earlier = schedule.times.firstIndex(of: window) {
                throw fail(p, "\"\(w)\" is the same window as \(path).times[\(earlier)] (each window once)")
            }
            schedule.times.append(window)
        }
        do { try schedule.validate() } catch { throw fail(path + ".until", error.description) }
        return schedule
    }

    /// Reads `fallback` (true or false; absent: false; `null` refused as for `schedule`).
    static func fallback(_ value: JSONValue?, path: String,
                         fail: (String, String) -> ContentError) throws(ContentError) -> Bool {
        switch value {
        case nil: return false
        case .bool(let b)?: return b
        case let v?: throw fail(path, "expected true or false, found \(v.typeName)")
        }
    }
}
