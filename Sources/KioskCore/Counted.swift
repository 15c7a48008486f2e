// SPDX-License-Identifier: Apache-2.0
/// A count with its noun in the number English wants: "1 item", "0 items", "2 items". Every
/// count the program writes (log lines, status screens, control-socket replies, systemd's
/// STATUS) goes through it, so none reads "1 items".
///
/// - Parameters:
///   - count: how many.
///   - singular: the noun for one ("item", "fallback item", "byte").
///   - plural: the noun for any other count; by default `singular` + "s" ("entry" needs
///     "entries" given).
public func counted(_ count: Int, _ singular: String, _ plural: String? = nil) -> String {
    "\(count) \(count == 1 ? singular : plural ?? singular + "s")"
}
