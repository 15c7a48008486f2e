// SPDX-License-Identifier: Apache-2.0
import Glibc
import KioskCore
import KioskSystem

/// Expands the SOURCE arguments into playlist items (docs/content.md, local sources) once,
/// without watching (for a directory that cannot be watched): a directory gives its image files
/// by ``DirectoryWatch``'s rule (images by the extensions of the formats shown,
/// ``ImageFormat/imageExtensions``; hidden files left out, byte-wise name order, so `img10`
/// sorts before `img2` as `ls` does in the C locale); a file is taken as it is, whatever its
/// name. A source that does not exist is logged and left out.
public enum SourceList {
    public static func items(from sources: [String]) -> [PlaylistItem] {
        var items: [PlaylistItem] = []
        for source in sources {
            let st: stat
            do { st = try fileStatus(source) } catch {
                Log.warning("source skipped", path: source, reason: SystemError.describe(errno: error.errno))
                continue
            }
            if (st.st_mode & S_IFMT) == S_IFDIR {
                let paths = directoryImages(source)
                if paths.isEmpty { Log.warning("no image files in directory", path: source) }
                items += paths.map { PlaylistItem(source: $0) }
            } else {
                items.append(PlaylistItem(source: source))
            }
        }
        return items
    }

    static func directoryImages(_ path: String) -> [String] {
        do {
            let listed = try DirectoryWatch.imagePaths(in: path)
            // The playlist, the events and the logs carry names as text.
            for bytes in listed.notUTF8 { DirectoryWatch.logNotUTF8(bytes, in: path) }
            return listed.paths
        } catch {
            Log.warning("directory unreadable", path: path, reason: error.description)
            return []
        }
    }
}
