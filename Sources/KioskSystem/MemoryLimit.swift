// SPDX-License-Identifier: Apache-2.0
/// The memory the process may use, as its cgroup says (cgroup v2, the kernel's
/// Documentation/admin-guide/cgroup-v2.rst: `memory.max`; systemd writes the unit's `MemoryMax=`
/// there).
public enum MemoryLimit {
    /// The `memory.max` of the process's cgroup in bytes: its path from the `0::PATH` line of
    /// `/proc/self/cgroup`, the file under `/sys/fs/cgroup` (`root`). Nil when there is no limit
    /// (`max`), no cgroup v2 hierarchy, or the files cannot be read.
    public static func cgroupMax(root: String = "/sys/fs/cgroup", selfCgroup: String = "/proc/self/cgroup") -> Int? {
        guard let bytes = try? readRegularFile(selfCgroup, limit: 64 << 10) else { return nil }
        let text = String(decoding: bytes, as: UTF8.self)
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("0::") }) else { return nil }
        let path = String(line.dropFirst(3))
        let file = root + (path == "/" ? "" : path) + "/memory.max"
        guard let value = try? readRegularFile(file, limit: 64) else { return nil }
        let word = String(decoding: value, as: UTF8.self).split(whereSeparator: { $0 == "\n" || $0 == " " }).first
        return word.flatMap { Int($0) }
    }
}
