import Glibc
import KioskCore
import KioskSystem

/// Expands the SOURCE arguments into playlist items (SPEC section 5, local sources): a
/// directory gives its JPEG and PNG files (by extension, hidden files left out) in name order
/// (byte-wise, so `img10` sorts before `img2` as `ls` does in the C locale); a file is taken as
/// it is, whatever its name. A source that does not exist is logged and left out.
public enum SourceList {
    /// File name extensions a directory listing takes, compared case-insensitively.
    public static let imageExtensions: Set<String> = ["jpg", "jpeg", "jpe", "png"]

    public static func items(from sources: [String]) -> [PlaylistItem] {
        var items: [PlaylistItem] = []
        for source in sources {
            var st = stat()
            guard stat(source, &st) == 0 else {
                let code = errno
                Log.warning("source skipped", path: source, reason: String(cString: strerror(code)) + " (errno \(code))")
                continue
            }
            if (st.st_mode & S_IFMT) == S_IFDIR {
                let names = directoryImages(source)
                if names.isEmpty { Log.warning("no JPEG or PNG files in directory", path: source) }
                let base = source.hasSuffix("/") ? source : source + "/"
                items += names.map { PlaylistItem(source: base + $0) }
            } else {
                items.append(PlaylistItem(source: source))
            }
        }
        return items
    }

    static func directoryImages(_ path: String) -> [String] {
        let entries: [DirectoryEntry]
        do {
            entries = try listDirectory(path)
        } catch {
            Log.warning("directory unreadable", path: path, reason: error.description)
            return []
        }
        var names: [String] = []
        for entry in entries where !entry.isDirectory {
            guard let name = entry.name else {
                // The playlist, the events and the logs carry names as text: a name that is not
                // UTF-8 could not be opened again from its text form.
                Log.warning("file skipped", path: path, reason: "a file name in this directory is not valid UTF-8; rename it")
                continue
            }
            guard !name.hasPrefix("."), let dot = name.lastIndex(of: ".") else { continue }
            if imageExtensions.contains(name[name.index(after: dot)...].lowercased()) { names.append(name) }
        }
        return names.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
    }
}
