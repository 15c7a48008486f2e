// SPDX-License-Identifier: Apache-2.0
import KioskCore
import KioskSystem

/// Why a manifest was refused, a download failed or a cache operation failed. Every case
/// carries what a person needs to see (the URL or path, where in the manifest, the HTTP status,
/// byte counts); ``description`` is the log line, e.g.
/// `http://10.0.0.5/show.json: items[3].src: "file:///etc/passwd" is not an http or https URL
/// (a remote manifest may only name http(s) URLs)`.
public enum ContentError: Error, Equatable, Sendable, CustomStringConvertible {
    // MARK: Manifest

    /// The manifest is not UTF-8 JSON: a UTF-16 or UTF-32 byte-order mark, NUL bytes, or bytes
    /// that are not valid UTF-8. `reason` says which.
    case manifestEncoding(source: String, reason: String)
    /// The manifest is not valid JSON; `reason` is the parser's message (with line and column
    /// when the parser gives them).
    case manifestSyntax(source: String, reason: String)
    /// The JSON is valid but a value is not what the format allows. `path` says where, in
    /// JavaScript notation (`items[3].src`, `interval`, `(root)`), `reason` what is wrong.
    case manifestInvalid(source: String, path: String, reason: String)

    // MARK: HTTP

    /// The server answered with a status that is not a success (404, 500, ...), or a 3xx
    /// without a usable `Location`. `retryAfter`: the answer's `Retry-After` when it gave one
    /// in delay-seconds (RFC 9110 §10.2.3; the HTTP-date form is not read), at most a day.
    /// `proxy`: the http proxy the answer came through (``ProxyChoice/Proxy/description``),
    /// which may have sent it itself (a 502 when it cannot reach the server).
    case httpStatus(url: String, status: Int, retryAfter: Duration? = nil, proxy: String? = nil)
    /// The request could not be made or was broken off (connection refused, DNS failure, reset,
    /// TLS failure); `reason` is the transport's message; `receivedBytes` body bytes had come.
    case transport(url: String, reason: String, receivedBytes: Int)
    /// No response headers within the connect timeout (`phase` `connect`), or the whole
    /// transfer took longer than the total timeout (`phase` `total`). `seconds` is the limit
    /// that was hit, `receivedBytes` the body bytes that had come by then.
    case timedOut(url: String, phase: String, seconds: Double, receivedBytes: Int)
    /// More than `limit` redirects (`chain` lists the URLs visited, the original first), or a
    /// redirect back to a URL already in the chain (`loop` true).
    case tooManyRedirects(url: String, chain: [String], limit: Int, loop: Bool)
    /// The body is larger than the cap: `declaredBytes` from `Content-Length` (nil when the
    /// server did not say), `receivedBytes` what came before the transfer was cut at `limit`.
    case bodyTooLarge(url: String, limit: Int, declaredBytes: Int?, receivedBytes: Int)
    /// The body ended before the `Content-Length` the server declared.
    case truncated(url: String, expectedBytes: Int, receivedBytes: Int)
    /// The body is neither a JPEG (`FF D8 FF`) nor a PNG (`89 50 4E 47 0D 0A 1A 0A`);
    /// `firstBytes` are its first bytes in hex.
    case notAnImage(url: String, firstBytes: String)
    /// The body's SHA-256 is not the one the manifest gives.
    case hashMismatch(url: String, expected: String, actual: String)
    /// The URL is not an absolute http or https URL with a host and a port in 1...65535;
    /// `reason` says which when known (``HTTPURL/problem(_:)``).
    case unsupportedURL(url: String, reason: String? = nil)
    /// The server at `url` redirected to `location` (resolved), whose scheme is not http or
    /// https (`file:`, `ftp:`, `gopher:`, ...): not followed.
    case redirectRefused(url: String, location: String)
    /// The request (or a redirect in it, or the address its host resolved to) goes to a host
    /// that ``HostPolicy`` refuses: `host` as the URL or redirect named it, `reason` why
    /// (a link-local or metadata address, not among `--allow-hosts`, ...).
    case hostRefused(url: String, host: String, reason: String)
    /// An https request was redirected to plain http (`location`, resolved): not followed
    /// unless `--allow-http-from-https` asks for it.
    case downgradeRefused(url: String, location: String)
    /// The fetcher was shut down before the request finished.
    case cancelled(url: String)

    // MARK: Local I/O

    /// A system call on the cache or state directory failed.
    case system(SystemError)

    /// The subject: the manifest's URL or path, or the URL fetched, or the path.
    public var subject: String {
        switch self {
        case .manifestEncoding(let s, _), .manifestSyntax(let s, _), .manifestInvalid(let s, _, _): return s
        case .httpStatus(let u, _, _, _), .transport(let u, _, _), .timedOut(let u, _, _, _),
             .tooManyRedirects(let u, _, _, _), .bodyTooLarge(let u, _, _, _), .truncated(let u, _, _),
             .notAnImage(let u, _), .hashMismatch(let u, _, _), .unsupportedURL(let u, _), .redirectRefused(let u, _),
             .hostRefused(let u, _, _), .downgradeRefused(let u, _),
             .cancelled(let u):
            return u
        case .system(let e): return e.path
        }
    }

    /// A short name of the kind of failure (`http-status`, `transport`, `timeout`, ...), for
    /// deciding whether two failures in a row are "the same" (log once) and for tests.
    public var kind: String {
        switch self {
        case .manifestEncoding: return "manifest-encoding"
        case .manifestSyntax: return "manifest-syntax"
        case .manifestInvalid: return "manifest-invalid"
        case .httpStatus: return "http-status"
        case .transport: return "transport"
        case .timedOut: return "timeout"
        case .tooManyRedirects: return "redirects"
        case .bodyTooLarge: return "too-large"
        case .truncated: return "truncated"
        case .notAnImage: return "not-an-image"
        case .hashMismatch: return "hash-mismatch"
        case .unsupportedURL: return "unsupported-url"
        case .redirectRefused: return "redirect-refused"
        case .hostRefused: return "host-refused"
        case .downgradeRefused: return "downgrade-refused"
        case .cancelled: return "cancelled"
        case .system: return "system"
        }
    }

    /// What went wrong, without the subject.
    public var reason: String {
        switch self {
        case .manifestEncoding(_, let r): return "manifest is not UTF-8: \(r)"
        case .manifestSyntax(_, let r): return "manifest is not valid JSON: \(r)"
        case .manifestInvalid(_, let path, let r): return "\(path): \(r)"
        case .httpStatus(_, let status, let retryAfter, let proxy):
            return "HTTP status \(status)" + (retryAfter.map { " (Retry-After \($0.components.seconds) s)" } ?? "")
                + (proxy.map { " through \($0)" } ?? "")
        case .transport(_, let r, let n): return n > 0 ? "\(r) (after \(counted(n, "byte")))" : r
        case .timedOut(_, let phase, let s, let n):
            let limit = s == s.rounded() ? String(Int(s)) : String(s)
            switch phase {
            case "connect": return "no response within the connect timeout of \(limit) s"
            case "low-speed":
                return "body slower than the low-speed limit for \(limit) s (\(counted(n, "byte")) received)"
            default:
                return "transfer not finished within the total timeout of \(limit) s (\(counted(n, "byte")) received)"
            }
        case .tooManyRedirects(_, let chain, let limit, let loop):
            let path = chain.joined(separator: " -> ")
            return loop ? "redirect loop: \(path)" : "more than \(limit) redirects: \(path)"
        case .bodyTooLarge(_, let limit, let declared, let received):
            if let declared, declared > limit { return "Content-Length \(declared) bytes is over \(byteSize(limit))" }
            return "body over \(byteSize(limit)), cut after \(counted(received, "byte"))"
        case .truncated(_, let expected, let received):
            return "body cut off: \(received) of \(counted(expected, "byte")) received"
        case .notAnImage(_, let first): return "not an image this program shows (first bytes \(first))"
        case .hashMismatch(_, let expected, let actual): return "SHA-256 \(actual) is not the manifest's \(expected)"
        case .unsupportedURL(_, let r): return r ?? "not an absolute http or https URL"
        case .redirectRefused(_, let location):
            return "redirect to \(location) refused: only http and https redirects are followed"
        case .hostRefused(_, _, let r): return "request refused: \(r)"
        case .downgradeRefused(_, let location):
            return "redirect from https to plain http (\(location)) refused: --allow-http-from-https allows it"
        case .cancelled: return "cancelled"
        case .system(let e): return e.description
        }
    }

    /// `SUBJECT: REASON`, the log line (a system error is already `operation path: reason`).
    public var description: String {
        if case .system(let e) = self { return e.description }
        return "\(subject): \(reason)"
    }

    /// The `reason="…"` of a log line whose `path=` is `shownSubject` (docs/events-and-logs.md:
    /// one `path=`, the reason in `reason`): ``reason`` when the error is about that
    /// URL or path, else the whole ``description`` (a redirect's target, a system error's
    /// operation), so nothing is written twice and nothing is lost.
    public func logReason(path shownSubject: String) -> String {
        if case .system = self { return description }
        return subject == shownSubject ? reason : description
    }
}

/// A byte cap as people say it: `50 MB (50000000 bytes)`, `8 MiB (8388608 bytes)`, `1500 bytes`.
func byteSize(_ bytes: Int) -> String {
    if bytes >= 1_000_000 && bytes % 1_000_000 == 0 { return "\(bytes / 1_000_000) MB (\(bytes) bytes)" }
    if bytes >= 1 << 20 && bytes % (1 << 20) == 0 { return "\(bytes >> 20) MiB (\(bytes) bytes)" }
    return counted(bytes, "byte")
}
