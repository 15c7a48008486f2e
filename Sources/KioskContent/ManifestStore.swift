// SPDX-License-Identifier: Apache-2.0
import FoundationEssentials
import Glibc
import KioskSystem

/// The last good manifest, as stored for an offline start (docs/content.md, offline first).
public struct StoredManifest: Equatable, Sendable, Codable {
    /// The URL that answered (the base for its relative `src`).
    public var url: String
    /// The URL asked for (`--manifest`), before redirects; nil in a file an earlier version
    /// wrote (then ``url`` stands for it). A stored manifest is used only for that URL
    /// (``isFor(_:)``).
    public var requested: String?
    /// The body bytes as received.
    public var body: Data
    /// `ETag` as received, for the next conditional GET.
    public var etag: String?
    /// `Last-Modified` as received.
    public var lastModified: String?

    public init(url: String, requested: String? = nil, body: [UInt8], validators: ManifestValidators) {
        self.url = url; self.requested = requested
        self.body = Data(body); self.etag = validators.etag; self.lastModified = validators.lastModified
    }

    /// Whether this was stored for the manifest at `manifestURL`: the URL asked for then is
    /// that one (a device pointed at another manifest does not play the old one's show, nor
    /// send its validators to the new server).
    public func isFor(_ manifestURL: URL) -> Bool { (requested ?? url) == manifestURL.absoluteString }

    public var validators: ManifestValidators { ManifestValidators(etag: etag, lastModified: lastModified) }
}

/// Keeps the last good manifest in the state directory (`--state-dir`, $STATE_DIRECTORY), in
/// one JSON file `manifest.json` (`{"url","requested","etag","lastModified","body"}`, the body
/// in base64)
/// written with the temp file + `fsync` + `rename` + directory `fsync` protocol: a crash leaves
/// the previous manifest or the new one. The file is mode 0600 (readable by the kiosk's user
/// only): its URL may hold a password (`https://user:secret@host/...`), kept as it is because
/// the stored manifest's relative `src` resolve against it at an offline start, and the image
/// cache's keys are those URLs. Calls do file I/O: use them off the frame loop.
public final class ManifestStore: Sendable {
    /// The state directory.
    public let directory: String
    public static let fileName = "manifest.json"

    /// Creates the directory if needed, deletes temporary files a crash left, and narrows a
    /// stored file an earlier version wrote 0644 to ``fileMode`` (its URL may hold a password,
    /// and a server answering 304 would leave it as it is). Throws ``ContentError/system(_:)``.
    public init(directory: String) throws(ContentError) {
        self.directory = directory
        do { try AtomicFile.makeDirectories(directory) } catch { throw .system(error) }
        AtomicFile.removeTemporaryFiles(in: directory)
        let path = directory + "/" + Self.fileName
        if let info = try? fileStatus(path), info.st_mode & 0o777 != Self.fileMode {
            do { try syscall("chmod \(String(Self.fileMode, radix: 8))") { chmod(path, Self.fileMode) } } catch {
                Log.warning("stored manifest left readable", path: path, reason: error.description)
            }
        }
    }

    /// Mode of `manifest.json`: owner read and write only.
    public static let fileMode: mode_t = 0o600

    /// Replaces the stored manifest (a file of mode ``fileMode``). Throws ``ContentError/system(_:)``.
    public func save(_ manifest: StoredManifest) throws(ContentError) {
        let data: Data
        do { data = try JSONEncoder().encode(manifest) } catch {
            throw .manifestSyntax(source: manifest.url, reason: "cannot encode: \(error)")
        }
        do {
            try AtomicFile.write(Array(data), directory: directory, name: Self.fileName, mode: Self.fileMode)
        } catch { throw .system(error) }
    }

    /// The largest stored file read back: the body of a manifest at its 8 MiB cap in base64
    /// (4 bytes for every 3) plus 64 KiB for the URL and validators. A manifest the fetcher
    /// accepted is always read back at the next start.
    public static let maxStoredBytes = (8 << 20) / 3 * 4 + 4 + (64 << 10)

    /// The stored manifest, or nil when none was stored. Throws ``ContentError/system(_:)`` when
    /// it cannot be read, ``ContentError/manifestSyntax(source:reason:)`` when the file is not
    /// what ``save(_:)`` writes.
    public func load() throws(ContentError) -> StoredManifest? {
        let path = directory + "/" + Self.fileName
        let read: [UInt8]?
        do { read = try AtomicFile.read(path, limit: Self.maxStoredBytes) } catch { throw .system(error) }
        guard let bytes = read else { return nil }
        do {
            return try JSONDecoder().decode(StoredManifest.self, from: Data(bytes))
        } catch {
            throw .manifestInvalid(source: path, path: "stored manifest",
                                   reason: Self.describe(error) + "; the next manifest fetched replaces it")
        }
    }

    /// What is wrong with a stored file that does not decode, in words (never Swift's own
    /// `DecodingError` dump, which names coding keys and contexts).
    static func describe(_ error: any Error) -> String {
        func field(_ path: [any CodingKey]) -> String { path.map(\.stringValue).joined(separator: ".") }
        guard let decoding = error as? DecodingError else { return "not readable" }
        switch decoding {
        case .dataCorrupted(let context):
            if context.codingPath.isEmpty { return "not valid JSON (a truncated or overwritten file?)" }
            return "field \"\(field(context.codingPath))\" is not valid"
                + (context.codingPath.last?.stringValue == "body" ? " (expected base64)" : "")
        case .keyNotFound(let key, _):
            return "no \"\(key.stringValue)\" field"
        case .typeMismatch(let type, let context):
            let expected = type == String.self ? "text" : type == Data.self ? "base64 text" : "\(type)"
            return "field \"\(field(context.codingPath))\" is not \(expected)"
        case .valueNotFound(_, let context):
            return "field \"\(field(context.codingPath))\" is null"
        @unknown default:
            return "not readable"
        }
    }
}
