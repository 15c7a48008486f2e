// SPDX-License-Identifier: Apache-2.0
import Glibc

/// What a local file's content is known by: its device and inode (a file renamed over the
/// name is another inode), its size in bytes and its modification and status-change times in
/// nanoseconds (a file rewritten in place or copied over with `cp` keeps its inode but not its
/// times; `cp -p` restores the modification time, never the status-change time, see stat(2)).
/// Two readings that compare equal are taken to be the same bytes; the name is not part of it.
public struct FileIdentity: Hashable, Sendable, CustomStringConvertible {
    /// `st_dev` and `st_ino`.
    public var device: UInt64, inode: UInt64
    /// `st_size`, bytes.
    public var size: Int64
    /// `st_mtim` and `st_ctim`, nanoseconds since the epoch.
    public var modified: Int64, changed: Int64

    /// The identity in a `stat` result.
    public init(_ info: stat) {
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
        size = Int64(info.st_size)
        modified = Int64(info.st_mtim.tv_sec) &* 1_000_000_000 &+ Int64(info.st_mtim.tv_nsec)
        changed = Int64(info.st_ctim.tv_sec) &* 1_000_000_000 &+ Int64(info.st_ctim.tv_nsec)
    }

    /// The identity of the file at `path` now (symbolic links followed).
    /// - Throws: ``SystemError`` from stat(2).
    public init(path: String) throws(SystemError) { self.init(try fileStatus(path)) }

    public var description: String { "dev \(device) ino \(inode) size \(size) mtime \(modified) ns" }
}
