// SPDX-License-Identifier: Apache-2.0
/// Where the disk cache and the state (the last good manifest) live by default (kiosk-carousel(1)),
/// for `--cache-dir` and `--state-dir`: systemd's `$CACHE_DIRECTORY` / `$STATE_DIRECTORY`
/// (set by `CacheDirectory=` / `StateDirectory=` in the unit; when it lists several paths
/// separated by `:`, the first), else the XDG base directories of the user running it
/// (`$XDG_CACHE_HOME`, `$XDG_STATE_HOME`, or `~/.cache`, `~/.local/state`), each with
/// `/kiosk-carousel` appended, else `/var/cache/kiosk-carousel` and `/var/lib/kiosk-carousel`.
public enum ContentDirectories {
    /// The default cache directory for this environment.
    public static func cache(environment: [String: String]) -> String {
        if let dir = first(environment["CACHE_DIRECTORY"]) { return dir }
        if let xdg = first(environment["XDG_CACHE_HOME"]) { return xdg + "/kiosk-carousel" }
        if let home = first(environment["HOME"]), home != "/" { return home + "/.cache/kiosk-carousel" }
        return "/var/cache/kiosk-carousel"
    }

    /// The default state directory for this environment.
    public static func state(environment: [String: String]) -> String {
        if let dir = first(environment["STATE_DIRECTORY"]) { return dir }
        if let xdg = first(environment["XDG_STATE_HOME"]) { return xdg + "/kiosk-carousel" }
        if let home = first(environment["HOME"]), home != "/" { return home + "/.local/state/kiosk-carousel" }
        return "/var/lib/kiosk-carousel"
    }

    private static func first(_ value: String?) -> String? {
        guard let value, let first = value.split(separator: ":").first, first.hasPrefix("/") else { return nil }
        return String(first)
    }
}
